"""Switching a session to Remote and back, on the Codex transport (the scripted model presented
as Codex, its backend the emulator): ``/mode`` asks first, and each confirmed switch is
recorded in the session."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from support.codex_backend import CodexBackendEmulator, CodexDouble

import ctxmodes_local
import ctxmodes_off
import ctxmodes_remote
import ctxmodes_tree
from ctxmodes.providers.script import Script
from ctxmodes.session_mode import recorded_mode
from ctxmodes.testing.harness import HostHarness


def _harness(directory: Path, start: str) -> HostHarness:
    emulator = CodexBackendEmulator()
    account = emulator.add_account("acct-switch")
    client = httpx.Client(transport=httpx.WSGITransport(app=emulator))
    script = Script.model_validate({"responses": [{"text": f"answer {n}"} for n in range(4)]})
    provider = CodexDouble(
        script, emulator, account, base_url="http://backend.test/backend-api/codex", client=client
    )
    return HostHarness(
        directory,
        [],
        plugins=[ctxmodes_off, ctxmodes_local, ctxmodes_tree, ctxmodes_remote],
        mode=start,
        provider=provider,
    )


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
