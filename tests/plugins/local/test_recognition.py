"""How the Local mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.extension_files import EXTENSION_FILES

import ctxmodes_local
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager
from ctxmodes.session.manager import SessionManager

EXPECTED = {"tree": "shared", "local": "shared", "remote": "shared", None: None}
LEAVING = "1 earlier window is sent to the model again; run /compact first to leave cleanly"


@pytest.fixture
def spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_local])
    return ModeRegistry.from_plugin_manager(pm).get("local").spec


@pytest.mark.parametrize("made_by", ["tree", "local", "remote", None])
def test_recognizes_what_it_wrote(spec, made_by: str | None, tmp_path: Path) -> None:
    path = EXTENSION_FILES[made_by](tmp_path)
    with SessionManager.open(path, read_only=True) as view:
        evidence = spec.recognize(view)
    assert evidence == EXPECTED[made_by]


def test_leaving_says_what_changes(spec, tmp_path: Path) -> None:
    with SessionManager.open(EXTENSION_FILES["local"](tmp_path), read_only=True) as view:
        assert spec.describe_leaving(view) == LEAVING
