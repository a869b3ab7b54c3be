"""How the Tree mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

from support.extension_files import leaving_words, recognized_by

import ctxmodes_tree
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager

EXPECTED = {"tree": "exclusive", "local": None, "remote": None, None: None}
#: The file holds one archived window: Off sends its summary, Local and Remote do not.
LEAVING = {
    "off": (
        "1 archived summary becomes an ordinary Pi summary and re-enters the context; "
        "run /compact first to leave cleanly"
    ),
    "local": (
        "1 archived window leaves history and its summary stays out of the context; window "
        "markers and notes carry over"
    ),
    "remote": (
        "window markers carry over and the archived summary stays out of the context; history "
        "and notes come from the Remote service, not this file"
    ),
    "recent-turns": None,
}


def _spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_tree])
    return ModeRegistry.from_plugin_manager(pm).get("tree").spec


def test_recognizes_what_it_wrote(tmp_path: Path) -> None:
    assert recognized_by(_spec(), tmp_path) == EXPECTED


def test_leaving_says_what_changes(tmp_path: Path) -> None:
    assert leaving_words(_spec(), tmp_path) == LEAVING
