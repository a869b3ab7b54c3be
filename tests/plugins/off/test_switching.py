"""What Off says before a session is switched to another mode: a windowed mode sends only the
latest window, so what came before it is no longer sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.extension_files import EXTENSION_FILES

import ctxmodes_off
from ctxmodes.modes import ModeRegistry, ModeSpec
from ctxmodes.session.manager import SessionManager
from ctxmodes.testing.plugin import isolated_plugin_manager

BEFORE_MARKER = "messages before the latest window marker are no longer sent to the model"
WHOLE = "the conversation so far is no longer sent to the model"


def _spec() -> ModeSpec:
    return ModeRegistry.from_plugin_manager(isolated_plugin_manager(ctxmodes_off)).get("off").spec


@pytest.mark.parametrize(("made_by", "said"), [(None, WHOLE), ("local", BEFORE_MARKER)])
def test_a_windowed_target_is_told_what_stops_being_sent(
    made_by: str | None, said: str, tmp_path: Path
) -> None:
    with SessionManager.open(EXTENSION_FILES[made_by](tmp_path), read_only=True) as view:
        words = {target: _spec().switch_words(view, target) for target in ("local", "tree")}
        assert words == {"local": said, "tree": said}
        assert _spec().switch_words(view, "recent-turns") is None, "a third party's is unknown"


def test_a_session_without_messages_has_nothing_to_lose(tmp_path: Path) -> None:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    manager.append_custom_entry("ctxmodes-mode", {"protocol": 1, "mode": "off", "settings": {}})
    assert _spec().switch_words(manager, "local") is None
