"""How the Local mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

from support.extension_files import leaving_words, recognized_by

import ctxmodes_local
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager

EXPECTED = {"tree": "shared", "local": "shared", "remote": "shared", None: None}
#: The file holds two windows: Off sends the earlier one again, Tree and Remote do not.
LEAVING = {
    "off": "1 earlier window is sent to the model again; run /compact first to leave cleanly",
    "tree": (
        "window markers, history and notes carry over and earlier windows stay out of the context"
    ),
    "remote": (
        "window markers carry over and earlier windows stay out of the context; history and "
        "notes come from the Remote service, not this file"
    ),
    "recent-turns": None,
}


def _spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_local])
    return ModeRegistry.from_plugin_manager(pm).get("local").spec


def test_recognizes_what_it_wrote(tmp_path: Path) -> None:
    assert recognized_by(_spec(), tmp_path) == EXPECTED


def test_leaving_says_what_changes(tmp_path: Path) -> None:
    assert leaving_words(_spec(), tmp_path) == LEAVING
