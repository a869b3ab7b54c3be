"""How the Tree mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

from support.extension_files import leaving_words, recognized_by

import ctxmodes_tree
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager

EXPECTED = {"tree": "exclusive", "local": None, "remote": None, None: None}
LEAVING = (
    "1 archived summary becomes an ordinary Pi summary and re-enters the context; "
    "run /compact first to leave cleanly"
)


def _spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_tree])
    return ModeRegistry.from_plugin_manager(pm).get("tree").spec


def test_recognizes_what_it_wrote(tmp_path: Path) -> None:
    assert recognized_by(_spec(), tmp_path) == EXPECTED


def test_leaving_says_what_changes(tmp_path: Path) -> None:
    assert leaving_words(_spec(), tmp_path) == LEAVING
