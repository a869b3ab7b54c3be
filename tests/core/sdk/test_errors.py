"""What a program embedding ctxmodes sees when something goes wrong (the embedding page's
"Errors" table): an exception of the documented type, importable from the documented
public module, with a message that says what happened — and nothing on its own output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.terminal import GateTool

from ctxmodes import ConfigError, CtxmodesError, PluginError, SessionCwdMissingError, hookimpl
from ctxmodes.providers import ProviderError, ProviderSpecError
from ctxmodes.sdk import (
    AgentEvent,
    ModeChangeNotConfirmed,
    ModelError,
    NoModelError,
    Notice,
    SessionBusyError,
    SessionChanged,
    open_agent,
)
from ctxmodes.session import NotASessionError, SessionError, SessionLockedError


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("CTXMODES_MODE", "CTXMODES_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def script(work: Path, *responses: dict[str, Any]) -> str:
    path = work / "script.json"
    path.write_text(json.dumps({"responses": list(responses)}))
    return f"scripted:{path}"


def session_in(work: Path, mode: str) -> Path:
    """A session file of ``mode`` with one exchange in it."""
    with open_agent(
        cwd=work, mode=mode, model=script(work, {"text": "hi"}), session_dir=work / "s"
    ) as agent:
        agent.prompt("hello")
        path = agent.session_file
    assert path is not None
    return path


def test_opening_fails_with_the_documented_types(work, capfd):
    model = script(work, {"text": "unused"})
    cases: list[tuple[type[CtxmodesError], dict[str, Any], str]] = [
        (CtxmodesError, {"cwd": work / "missing"}, "no such directory"),
        (ConfigError, {"mode": "fancy"}, "unknown mode 'fancy'; installed modes: "),
        (ProviderSpecError, {"model": "nosuch/model"}, "unknown provider 'nosuch'"),
        (ProviderSpecError, {"model": "anthropic/claude-sonnet-4-5"}, "no credentials"),
        (ProviderError, {"model": f"scripted:{work / 'none.json'}"}, "cannot read script"),
    ]
    for kind, arguments, message in cases:
        arguments = {"cwd": work, "model": model, "session_dir": work / "s", **arguments}
        with pytest.raises(kind, match=message):
            open_agent(**arguments)
    garbage = work / "notes.jsonl"
    garbage.write_text("hello\n")
    with pytest.raises(NotASessionError, match="not a valid pi session"):
        open_agent(cwd=work, session_file=garbage, model=model)
    assert garbage.read_text() == "hello\n"
    assert list((work / "s").glob("*.jsonl")) == []
    assert capfd.readouterr() == ("", "")


def test_a_session_opens_in_its_own_mode_and_another_needs_confirming(work):
    path = session_in(work, "tree")
    model = script(work, {"text": "again"})
    with pytest.raises(ModeChangeNotConfirmed, match="from tree to off"):
        open_agent(cwd=work, session_file=path, mode="off", model=model)
    with open_agent(cwd=work, session_file=path, mode="off", switch_mode=True, model=model) as a:
        assert a.mode == "off"
    with (
        open_agent(cwd=work, session_file=path, model=model),
        pytest.raises(SessionLockedError),
    ):
        open_agent(cwd=work, session_file=path, model=model)


def _recording(work: Path, name: str, cwd: Path) -> Path:
    """A session file of one header, recording ``cwd`` as its working directory."""
    path = work / f"{name}.jsonl"
    header = {"type": "session", "version": 3, "id": name, "timestamp": "t", "cwd": str(cwd)}
    path.write_text(json.dumps(header) + "\n")
    return path


def test_a_session_runs_where_it_records_and_says_when_that_is_gone(work, monkeypatch):
    (work / "here").mkdir()
    (work / "there").mkdir()
    monkeypatch.chdir(work / "here")
    model = script(work, {"text": "unused"})
    other = _recording(work, "other", work / "there")
    with open_agent(session_file=other, model=model) as agent:
        assert agent.session_manager.cwd == str(work / "there")
    moved = _recording(work, "moved", work / "gone")
    before = moved.read_bytes()
    with pytest.raises(SessionCwdMissingError) as missing:
        open_agent(session_file=moved, model=model)
    assert (missing.value.session_file, missing.value.session_cwd) == (
        str(moved),
        str(work / "gone"),
    )
    assert missing.value.fallback_cwd == str(work / "here")
    assert moved.read_bytes() == before
    # Naming a directory continues it there; so does resuming it from a running session.
    with open_agent(cwd=work / "here", session_file=moved, model=model) as agent:
        assert agent.session_manager.cwd == str(work / "here")
    with open_agent(session_file=other, model=model) as agent:
        with pytest.raises(SessionCwdMissingError):
            agent.resume(moved)
        assert agent.session_manager.session_file == other
        agent.resume(moved, cwd=work / "there")
        assert agent.session_manager.cwd == str(work / "there")
    assert moved.read_bytes().startswith(before)  # appended to, never rewritten


def test_a_session_whose_mode_is_not_installed_says_so(work):
    path = session_in(work, "local")
    recorded = path.read_text().replace('"mode":"local"', '"mode":"fancy"')
    other = work / "fancy.jsonl"
    other.write_text(recorded)
    with pytest.raises(ConfigError) as raised:
        open_agent(cwd=work, session_file=other, model=script(work, {"text": "x"}))
    assert str(raised.value) == (
        "the mode this session records: unknown mode 'fancy'; installed modes: local, off, "
        "remote, tree"
    )
    assert other.read_text() == recorded


def test_prompting_without_a_model_or_while_busy(work, tmp_path):
    with open_agent(cwd=work, session_dir=work / "s") as agent, pytest.raises(NoModelError):
        agent.prompt("hi")
    gate = GateTool()
    with make_agent(tmp_path, [{"tool_calls": [{"name": "gate"}]}, {"text": "ok"}], gate) as a:
        a.submit("start")
        assert gate.entered.wait(10.0)
        with pytest.raises(SessionBusyError):
            a.prompt("me too")
        gate.opened.set()
        assert a.wait_for_idle(10.0)


def test_a_model_error_is_an_event_and_prompt_returns(work, capfd):
    failing = {"stop_reason": "error", "error_message": "the model's server refused"}
    with open_agent(cwd=work, model=script(work, failing), session_dir=work / "s") as agent:
        events: list[AgentEvent] = []
        agent.subscribe(events.append)
        agent.prompt("hi")
    assert [e for e in events if isinstance(e, ModelError)] == [
        ModelError("the model's server refused", aborted=False)
    ]
    assert capfd.readouterr() == ("", "")


def test_broken_lines_and_a_broken_tree_are_listed_not_dropped_silently(work):
    path = session_in(work, "off")
    lines = path.read_text().splitlines()
    lines.insert(2, '{"type":"message", torn')
    lines.append(lines[-1])  # the last entry again: its id twice
    path.write_text("\n".join(lines) + "\n")
    with open_agent(cwd=work, session_file=path, model=script(work, {"text": "x"})) as agent:
        (skipped,) = agent.session_manager.skipped_lines
        assert skipped.line_number == 3
        (warning,) = agent.session_manager.warnings
        assert "is used 2 times" in str(warning)
        assert [m.role for m in agent.session.messages] == ["user", "assistant"]


def test_listeners_given_to_open_agent_hear_the_start_up(work):
    path = session_in(work, "tree")
    events: list[AgentEvent] = []
    with open_agent(
        cwd=work,
        session_file=path,
        mode="off",
        switch_mode=True,
        model=script(work, {"text": "x"}),
        listeners=[events.append],
    ):
        pass
    assert isinstance(events[0], SessionChanged)
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.level == "warning"
    assert notice.message.startswith("switching this session from tree to off: ")


def test_a_session_file_that_cannot_be_written_fails_at_the_first_reply(work):
    (work / "plain").write_text("a file, not a folder")
    target = work / "plain" / "session.jsonl"
    with open_agent(
        cwd=work, session_file=target, mode="off", model=script(work, {"text": "x"})
    ) as a:
        with pytest.raises(SessionError, match="cannot create session directory"):
            a.prompt("hi")
        assert not a.is_busy()
    assert (work / "plain").read_text() == "a file, not a folder"


class MisnamedArgument:
    @hookimpl
    def ctx_register_tools(self, reg: Any, session: Any) -> None:
        raise AssertionError("never called")


def test_a_programs_broken_plugin_is_named_by_its_class(work):
    with pytest.raises(PluginError) as raised:
        open_agent(
            cwd=work,
            model=script(work, {"text": "x"}),
            session_dir=work / "s",
            plugins=[MisnamedArgument()],
        )
    assert str(raised.value) == (
        f"plugin '{__name__}.MisnamedArgument': ctx_register_tools takes 'reg', which the hook "
        "does not pass (it passes: register, session)"
    )
