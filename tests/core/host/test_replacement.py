"""Modes per session, the built-in commands and session replacement (/new, /resume, /fork)."""

from __future__ import annotations

import json
import threading

import pytest
from support.host_rig import BlockingTool, ToolsPlugin, text_response, tool_response

from ctxmodes import NavigationRequest, hookimpl
from ctxmodes.commands import Command
from ctxmodes.errors import ConfigError, CtxmodesError, StaleContextError
from ctxmodes.host import records
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.modes import ModeSpec


class Journal:
    """Mode objects that log their lifecycle to a shared list."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, object]] = []
        journal = self

        class ModeObject:
            def __init__(self, session, name):
                self.session, self.name = session, name

            @hookimpl
            def ctx_session_start(self, session, reason):
                journal.log.append((self.name, "start", reason))

            @hookimpl
            def ctx_session_shutdown(self, session, reason):
                journal.log.append((self.name, "shutdown", reason))

            @hookimpl
            def ctx_register_tools(self, register, session):
                journal.log.append((self.name, "tools", session is self.session))

        class Plugin:
            @hookimpl
            def ctx_register_modes(self, register):
                for name in ("alpha", "beta"):
                    register(ModeSpec(name, f"{name} mode", lambda s, n=name: ModeObject(s, n)))

        self.plugin = Plugin()


class Capture:
    """A command that keeps the context it was given."""

    def __init__(self) -> None:
        self.contexts: list = []

    @hookimpl
    def ctx_register_commands(self, register, session):
        register(
            Command("capture", "keep the context", lambda args, ctx: self.contexts.append(ctx))
        )


def test_the_configured_mode_is_activated_per_session(make_rig):
    journal = Journal()
    rig = make_rig([], plugins=[journal.plugin], mode="alpha")
    assert rig.session.mode_name == "alpha"
    assert journal.log == [("alpha", "tools", True), ("alpha", "start", "startup")]


def test_an_unknown_mode_is_a_configuration_error(make_rig):
    with pytest.raises(ConfigError, match="unknown mode 'gamma'"):
        make_rig([], plugins=[Journal().plugin], mode="gamma")


def test_new_session_replaces_the_old_one(make_rig):
    journal = Journal()
    capture = Capture()
    rig = make_rig([text_response("hi")], plugins=[journal.plugin, capture], mode="alpha")
    rig.session.prompt("hello")
    old_file = rig.session.session_manager.session_file
    rig.session.submit("/capture")
    rig.session.submit("/new")
    assert rig.session.session_manager.session_file != old_file
    assert journal.log[-3:] == [
        ("alpha", "shutdown", "new"),
        ("alpha", "tools", True),
        ("alpha", "start", "new"),
    ]
    stale = capture.contexts[0]
    with pytest.raises(StaleContextError):
        stale.navigate_tree(NavigationRequest("anything"))
    with pytest.raises(StaleContextError):
        _ = stale.session
    types = rig.types()
    assert types[types.index("session_shutdown") :] == [
        "session_shutdown",
        "session_start",
        "command",
    ]


def test_resume_and_fork(make_rig, tmp_path):
    rig = make_rig([text_response("a1"), text_response("a2")])
    rig.session.prompt("q1")
    rig.session.prompt("q2")
    first_file = rig.session.session_manager.session_file
    entries = rig.file_entries()
    second_question = [e for e in entries if e["type"] == "message"][2]

    rig.session.submit(f"/fork {second_question['id']}")
    forked = rig.session.session_manager
    assert forked.session_file != first_file
    header = json.loads(forked.session_file.read_text().splitlines()[0])
    assert header["parentSession"] == str(first_file)
    # Forked before the second question: its text is offered for editing.
    assert rig.ui.editor_text == "q2"
    assert [e.id for e in forked.get_branch()] == [e["id"] for e in entries[:4]]

    rig.session.submit(f"/resume {first_file}")
    assert rig.session.session_manager.session_file == first_file
    assert [m.role for m in rig.session.messages] == ["user", "assistant", "user", "assistant"]
    reasons = [
        (r.type, r.reason) for r in rig.records if r.type in ("session_start", "session_shutdown")
    ]
    assert reasons == [
        ("session_start", "startup"),
        ("session_shutdown", "fork"),
        ("session_start", "fork"),
        ("session_shutdown", "resume"),
        ("session_start", "resume"),
    ]


def test_switching_the_mode_of_the_current_session(make_rig):
    journal = Journal()
    rig = make_rig([], plugins=[journal.plugin], mode="alpha")
    session = rig.session
    journal.log.clear()
    rig.session.submit("/mode beta")
    assert session.mode_name == "alpha", "a switch is confirmed first"
    assert rig.ui.notifications[-1] == ("info", "Mode unchanged: alpha")
    assert any("switching this session from alpha to beta" in n for _, n in rig.ui.notifications)
    assert journal.log == []
    rig.ui.confirm_answer = True
    rig.session.submit("/mode beta")
    assert rig.session is session
    assert session.mode_name == "beta"
    assert journal.log == [
        ("alpha", "shutdown", "reload"),
        ("beta", "tools", True),
        ("beta", "start", "reload"),
    ]
    rig.session.submit("/mode")
    assert rig.ui.notifications[-1] == ("info", "Mode: beta (installed: alpha, beta)")


def test_command_failures_are_reported(make_rig):
    rig = make_rig([])
    rig.session.submit("/tree")
    assert rig.ui.notifications[-1][0] == "error"
    assert "usage: /tree" in rig.of(records.CommandInvoked)[-1].error


def test_close_shuts_the_session_down(make_rig):
    journal = Journal()
    rig = make_rig([], plugins=[journal.plugin], mode="alpha")
    session = rig.session
    rig.host.close()
    assert journal.log[-1] == ("alpha", "shutdown", "quit")
    assert session.is_stale
    with pytest.raises(StaleContextError):
        session.prompt("late")


def test_resume_without_a_file_lists_the_sessions(make_rig):
    rig = make_rig([text_response("hi")])
    rig.session.prompt("remember me")
    rig.session.submit("/resume")
    level, text = rig.ui.notifications[-1]
    assert level == "info"
    assert str(rig.session.session_manager.session_file) in text
    assert "remember me" in text


def test_prompt_from_another_thread_while_busy_is_refused(make_rig):
    blocking = BlockingTool()
    rig = make_rig([tool_response("block")], plugins=[ToolsPlugin(blocking)])
    outcome = []

    def other_thread():
        blocking.started.wait(5)
        try:
            rig.session.prompt("me too")
        except SessionBusyError as exc:
            outcome.append(str(exc))
        rig.session.abort()
        outcome.append(rig.session.wait_for_idle(5))

    worker = threading.Thread(target=other_thread)
    worker.start()
    rig.session.prompt("go")
    worker.join(10)
    assert outcome[0].startswith("cannot start a prompt")
    assert outcome[1] is True


def test_a_reader_on_another_thread_waits_for_a_replacement_in_progress(make_rig):
    entered, release = threading.Event(), threading.Event()
    starts: list[str] = []

    class SlowToStart:
        @hookimpl
        def ctx_register_modes(self, register):
            def make(session):
                starts.append("made")
                if len(starts) == 2:  # the replacement: hold it between the two sessions
                    entered.set()
                    release.wait(10)
                return object()

            register(ModeSpec("slow", "slow to start", make))

    rig = make_rig([text_response("hi")], plugins=[SlowToStart()], mode="slow")
    old_file = rig.session.session_manager.session_file
    replacing = threading.Thread(target=rig.session.submit, args=("/new",))
    replacing.start()
    assert entered.wait(10)
    seen: list[object] = []
    reader = threading.Thread(target=lambda: seen.append(_session_file_or_error(rig.host)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive(), seen  # it waits rather than seeing no session
    release.set()
    replacing.join(10)
    reader.join(10)
    assert seen == [rig.session.session_manager.session_file]
    assert seen[0] != old_file


def _session_file_or_error(host):
    try:
        return host.session.session_manager.session_file
    except Exception as exc:  # the failure this test guards against
        return exc


def test_switching_to_a_path_without_a_file_starts_a_session_to_be_written_there(
    make_rig, tmp_path, monkeypatch
):
    rig = make_rig([text_response("a1"), text_response("a2")])
    rig.session.prompt("q1")
    old_file = rig.session.session_manager.session_file
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rig.host.switch_session("later/new.jsonl")
    manager = rig.session.session_manager
    target = elsewhere / "later" / "new.jsonl"
    assert manager.session_file == target
    assert not target.exists()  # as Pi: written with the session's first message
    assert manager.cwd == str(elsewhere)
    assert rig.session.messages == []
    rig.session.prompt("q2")
    header = json.loads(target.read_text().splitlines()[0])
    assert header["cwd"] == str(elsewhere)
    assert [m["content"][0]["text"] for m in rig.messages_in_file()] == ["q2", "a2"]
    rig.host.switch_session(old_file)
    assert [m.role for m in rig.session.messages] == ["user", "assistant"]


def test_switching_to_a_session_whose_directory_is_gone_is_refused_in_pis_words(make_rig, tmp_path):
    rig = make_rig([text_response("a1")])
    rig.session.prompt("q1")
    current = rig.session.session_manager
    gone = tmp_path / "gone"
    stored = tmp_path / "stored.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "x", "cwd": str(gone)}
    stored.write_text(json.dumps(header) + "\n")
    with pytest.raises(CtxmodesError) as refused:
        rig.host.switch_session(stored)
    assert str(refused.value) == (
        f"Stored session working directory does not exist: {gone}\n"
        f"Session file: {stored}\n"
        f"Current working directory: {current.cwd}"
    )
    with pytest.raises(CtxmodesError, match="is a directory, not a session file"):
        rig.host.switch_session(tmp_path)
    assert rig.session.session_manager is current
    assert not rig.session.is_stale
