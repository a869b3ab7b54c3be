"""Switching a session to Remote and back, on the Codex transport (the scripted model presented
as Codex, its backend the emulator): ``/mode`` asks first, and each confirmed switch is
recorded in the session."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.mode_switch import every_mode_harness

from ctxmodes.session_mode import recorded_mode
from ctxmodes.testing.harness import HostHarness


def _harness(directory: Path, start: str) -> HostHarness:
    responses = [{"text": f"answer {n}"} for n in range(4)]
    return every_mode_harness(directory, start, {"responses": responses})


@pytest.mark.parametrize(
    ("start", "other"),
    [(mode, "remote") for mode in ("off", "local", "tree")]
    + [("remote", mode) for mode in ("off", "local", "tree")],
)
def test_a_switch_is_asked_for_then_recorded(start: str, other: str, tmp_path: Path) -> None:
    h = _harness(tmp_path, start)
    try:
        h.prompt("first")
        h.session.submit(f"/mode {other}")
        assert h.session.mode_name == start, "not confirmed"
        asked = [text for _, text in h.ui.notifications if "switching this session" in text]
        assert asked
        assert f"from {start} to {other}: " in asked[-1]
        h.ui.confirm_answer = True
        h.session.submit(f"/mode {other}")
        assert h.session.mode_name == other
        h.prompt("second")
        record = recorded_mode(h.session.session_manager)
        assert record is not None
        assert record.mode == other
        assert ("new_context" in h.session.tools) == (other != "off")
    finally:
        h.host.close()
