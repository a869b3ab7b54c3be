"""How the Remote mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

from support.extension_files import leaving_words, recognized_by

import ctxmodes_remote
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager

EXPECTED = {"tree": None, "local": None, "remote": "exclusive", None: None}
OUT_OF_REACH = "the history and notes kept by the Remote service are out of reach"
#: The file holds one window: no earlier one for Off to send again.
LEAVING = {
    "off": f"{OUT_OF_REACH}; window markers stop being managed",
    "local": f"window markers carry over; {OUT_OF_REACH}",
    "tree": f"window markers carry over; {OUT_OF_REACH}",
    "recent-turns": OUT_OF_REACH,
}


def _spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_remote])
    return ModeRegistry.from_plugin_manager(pm).get("remote").spec


def test_recognizes_what_it_wrote(tmp_path: Path) -> None:
    assert recognized_by(_spec(), tmp_path) == EXPECTED


def test_leaving_says_what_changes(tmp_path: Path) -> None:
    assert leaving_words(_spec(), tmp_path) == LEAVING
