"""Remote only runs on the Codex transport: any other model is refused when the session starts,
with one line and nothing written. Offline, ``ctxmodes history`` and ``notes`` on a Remote
session say that the content lives in the service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.local_rig import call, text

import ctxmodes_remote
from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes_remote.mode import CODEX_TRANSPORT_HINT, CODEX_TRANSPORT_REQUIRED


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))


def test_a_model_off_the_codex_transport_is_refused_at_start(ctx_host) -> None:
    with pytest.raises(CtxmodesError) as refused:
        ctx_host([text("never")], plugins=[ctxmodes_remote], mode="remote")
    # The TypeScript extension's words, then which model was refused and what would do.
    assert str(refused.value).startswith(f"{CODEX_TRANSPORT_REQUIRED}: ")
    assert str(refused.value).endswith(f" is on the scripted api. {CODEX_TRANSPORT_HINT}")


def test_the_command_line_refuses_in_one_line(tmp_path: Path, capsys) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "never"}]}))
    session = tmp_path / "s.jsonl"
    code, _, err = ctxmodes(
        capsys,
        "run",
        "--mode",
        "remote",
        "--model",
        f"scripted:{script}",
        "--session",
        str(session),
        "hello",
    )
    assert code == 1
    assert err == (
        f"ctxmodes: error: {CODEX_TRANSPORT_REQUIRED}: scripted/scripted is on the scripted "
        f"api. {CODEX_TRANSPORT_HINT}\n"
    )
    # Nothing ran: no prompt and no window were written.
    written = session.read_text() if session.exists() else ""
    assert "hello" not in written
    assert "codex-context-window" not in written


@pytest.mark.parametrize(
    ("family", "action", "arguments"),
    [
        ("history", "list_windows", []),
        ("history", "search_contents", ["query=anything"]),
        ("notes", "read_file", ["path=plan.md"]),
        ("notes", "list_files_by_prefix", []),
    ],
)
def test_offline_history_and_notes_say_the_content_is_in_the_service(
    remote, emulator, account, capsys, family, action, arguments
) -> None:
    h = remote(
        [
            call("write_file", "notes", path="plan.md", text=emulator.encrypt(account, "step 2")),
            text("saved"),
        ]
    )
    h.prompt("save")
    h.manager.flush()
    path = h.manager.session_file
    before = path.read_bytes()
    code, out, err = ctxmodes(capsys, family, str(path), action, *arguments, "--mode", "remote")
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert "live in the Codex history and notes service, not in the session file" in err
    assert path.read_bytes() == before


def test_a_model_switched_to_off_the_codex_transport_is_refused_naming_it(remote) -> None:
    harness = remote([text("first answer")])
    harness.prompt("hello")
    harness.host.switch_model(ScriptedProvider(Script.model_validate({"responses": []})))
    with pytest.raises(CtxmodesError) as refused:
        harness.prompt("again")
    assert str(refused.value) == (
        f"{CODEX_TRANSPORT_REQUIRED}: scripted/scripted is on the scripted api. "
        f"{CODEX_TRANSPORT_HINT}"
    )
    # Nothing went to the model off the Codex transport.
    assert len(harness.requests()) == 1
