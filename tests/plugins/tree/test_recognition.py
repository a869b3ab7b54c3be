"""How the Tree mode recognizes files that record no mode (the TypeScript extension's, an older
ctxmodes'), and what it says before a session leaves it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.extension_files import EXTENSION_FILES

import ctxmodes_tree
from ctxmodes.modes import ModeRegistry
from ctxmodes.plugins import make_plugin_manager
from ctxmodes.session.manager import SessionManager

EXPECTED = {"tree": "exclusive", "local": None, "remote": None, None: None}
LEAVING = (
    "1 archived summary becomes an ordinary Pi summary and re-enters the context; "
    "run /compact first to leave cleanly"
)


@pytest.fixture
def spec():
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[ctxmodes_tree])
    return ModeRegistry.from_plugin_manager(pm).get("tree").spec


@pytest.mark.parametrize("made_by", ["tree", "local", "remote", None])
def test_recognizes_what_it_wrote(spec, made_by: str | None, tmp_path: Path) -> None:
    path = EXTENSION_FILES[made_by](tmp_path)
    with SessionManager.open(path, read_only=True) as view:
        evidence = spec.recognize(view)
    assert evidence == EXPECTED[made_by]


def test_leaving_says_what_changes(spec, tmp_path: Path) -> None:
    with SessionManager.open(EXTENSION_FILES["tree"](tmp_path), read_only=True) as view:
        assert spec.describe_leaving(view) == LEAVING
