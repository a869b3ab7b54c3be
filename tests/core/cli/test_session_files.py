"""No stray session files, and ``--session`` takes what Pi takes: a path, or a whole or
partial session id."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings

from ctxmodes.cli import build_parser
from ctxmodes.session.manager import SessionManager


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_settings(tmp_path, monkeypatch)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    directory = tmp_path / "project"
    directory.mkdir()
    monkeypatch.chdir(directory)
    return directory


def _sessions(project: Path) -> list[Path]:
    return sorted(SessionManager.list_sessions(project), key=lambda info: info.path)


def _script(tmp_path: Path, count: int = 1) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": f"answer {n}"} for n in range(count)]}))
    return f"scripted:{script}"


def test_a_missing_api_key_is_one_line_and_no_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ctxmodes(capsys, "run", "--model", "openai/gpt-5", "hello")
    assert code == 1
    assert err.count("\n") == 1
    assert "no credentials for openai/gpt-5: set OPENAI_API_KEY" in err
    assert "hello" not in out, "the prompt was never taken"
    assert _sessions(project) == []
    assert not (project.parent / "agent" / "sessions").exists()


def test_an_unknown_model_leaves_no_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = ctxmodes(capsys, "run", "--model", "nobody/no-such-model", "hello")
    assert code == 1
    assert err.count("\n") == 1
    assert _sessions(project) == []


def test_a_missing_key_refuses_a_prompt_on_an_existing_session_untouched(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ctxmodes(capsys, "run", "--model", _script(tmp_path), "--mode", "tree", "hi")[0] == 0
    (info,) = _sessions(project)
    before = info.path.read_bytes()
    code, _, err = ctxmodes(
        capsys, "run", "--model", "openai/gpt-5", "--session", str(info.path), "more"
    )
    assert code == 1
    assert "no credentials for openai/gpt-5" in err
    assert info.path.read_bytes() == before, "not even Tree's window marker is written"


def _shortest_unique_prefix(session_id: str, ids: list[str]) -> str:
    return next(
        session_id[:length]
        for length in range(1, len(session_id) + 1)
        if sum(other.startswith(session_id[:length]) for other in ids) == 1
    )


def test_session_takes_a_whole_or_partial_id(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for prompt in ("first", "second"):
        assert ctxmodes(capsys, "run", "--model", _script(tmp_path), prompt)[0] == 0
    infos = _sessions(project)
    assert len(infos) == 2
    ids = [info.id for info in infos]
    short = {session_id: _shortest_unique_prefix(session_id, ids) for session_id in ids}
    for info in infos:
        before = info.message_count
        code, _, err = ctxmodes(
            capsys, "run", "--model", _script(tmp_path), "--session", short[info.id], "more"
        )
        assert code == 0, err
        (after,) = [i for i in _sessions(project) if i.id == info.id]
        assert after.message_count == before + 2
    # Made within the same second, both ids begin alike.
    shared = ids[0][:4]
    code, _, err = ctxmodes(capsys, "run", "--model", _script(tmp_path), "--session", shared, "x")
    assert code == 1
    assert err.count("\n") == 1
    assert "ambiguous" in err
    assert all(session_id in err for session_id in ids)


def test_an_id_only_another_project_has_is_refused_naming_both_ways_on(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Pi asks whether to fork it into the working directory; print mode has no terminal to
    ask on, and continuing another project's session unasked would run its tools there."""
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    assert ctxmodes(capsys, "run", "--model", _script(tmp_path), "first")[0] == 0
    [info] = _sessions(other)
    before = info.path.read_bytes()
    monkeypatch.chdir(project)
    short = info.id[:8]
    code, out, err = ctxmodes(capsys, "run", "--model", _script(tmp_path), "--session", short, "x")
    assert (code, out) == (1, "")
    assert err == (
        f"ctxmodes: error: session {short!r} belongs to another project ({other}): fork it into "
        f"this one with --fork {short}, or continue it there with --session {info.path}\n"
    )
    assert info.path.read_bytes() == before
    assert _sessions(project) == []
    # The ways it names work: the fork is this project's, the path continues it there.
    assert ctxmodes(capsys, "run", "--model", _script(tmp_path), "--fork", short, "y")[0] == 0
    assert [forked.message_count for forked in _sessions(project)] == [4]
    code, _, err = ctxmodes(
        capsys, "run", "--model", _script(tmp_path), "--session", str(info.path), "z"
    )
    assert code == 0, err
    assert info.path.read_bytes().startswith(before)


@pytest.mark.parametrize("before_the_command", [True, False])
def test_c_continues_the_most_recent_session_before_or_after_run(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], before_the_command: bool
) -> None:
    # As ``pi -c -p``: ``ctxmodes -c run`` once started a new session without a word.
    assert ctxmodes(capsys, "run", "--model", _script(tmp_path), "first")[0] == 0
    continued = ["-c", "run"] if before_the_command else ["run", "-c"]
    code, _, err = ctxmodes(capsys, *continued, "--model", _script(tmp_path), "second")
    assert code == 0, err
    (info,) = _sessions(project)
    assert info.message_count == 4


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["-r", "run"], "run has no session picker"),
        (["--session", "abc", "run", "-c"], "--session and -c name two sessions"),
    ],
)
def test_run_refuses_a_session_choice_it_cannot_follow(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv, error
) -> None:
    code, _, err = ctxmodes(capsys, *argv, "--model", _script(tmp_path), "hello")
    assert code == 1
    assert err.startswith(f"ctxmodes: error: {error}")
    assert err.count("\n") == 1
    assert _sessions(project) == []


def test_an_unknown_id_is_an_error_never_a_new_file(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = ctxmodes(
        capsys, "run", "--model", _script(tmp_path), "--session", "0123abcd", "hello"
    )
    assert code == 1
    assert "no session matches '0123abcd'" in err
    assert list(project.iterdir()) == []
    assert _sessions(project) == []


def test_a_path_that_does_not_exist_is_created_at_the_first_prompt(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / "named.jsonl"
    code, _, err = ctxmodes(
        capsys, "run", "--model", _script(tmp_path), "--session", "named.jsonl", "hello"
    )
    assert code == 0, err
    assert target.exists()


def test_the_bare_command_takes_pis_session_options() -> None:
    parser = build_parser(argv=["-c"])
    assert parser.parse_args(["-c"]).continue_recent
    assert parser.parse_args(["-r"]).resume
    assert parser.parse_args(["--session", "0199"]).session == "0199"
    assert parser.parse_args(["--session", "0199"]).command is None


@pytest.mark.slow  # runs ctxmodes in a process of its own
def test_the_interactive_session_without_a_terminal_is_one_line_and_no_file(
    project: Path, tmp_path: Path
) -> None:
    """``chat`` needs a terminal. Without a command, standard input that is not a terminal
    makes the command line print mode, as Pi's (``echo hi | pi -c``): with nothing piped in
    there is nothing to send."""
    from support.cli_process import run_ctxmodes

    script = _script(tmp_path)
    nothing_to_send = "nothing to send: give a prompt, an @FILE or text on standard input"
    for argv, error in (
        (["chat", "--model", script], "the interactive session needs a terminal"),
        (["chat", "-c"], "the interactive session needs a terminal"),
        (["-c"], nothing_to_send),
        (["--session", "0123"], nothing_to_send),
        # Without a command, `ctxmodes` takes every option of `chat`, as `pi -c` does.
        (["-c", "--model", script, "--mode", "tree"], nothing_to_send),
        (["--model", script, "-nc"], nothing_to_send),
        (["--skill", "skills", "--prompt-template", "prompts", "-c"], nothing_to_send),
    ):
        result = run_ctxmodes(tmp_path, *argv, env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
        assert result.returncode == 1, result.stderr
        assert result.stderr.count("\n") == 1
        assert error in result.stderr, argv
    assert not (tmp_path / "agent" / "sessions").exists()


def test_session_context_json_leaves_the_cyclic_collector_as_it_found_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command pauses the collector while it reads and writes; an embedding program's
    # setting comes back whether the command succeeds or fails.
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    command = ("session", "context", str(path), "--json")
    assert gc.isenabled()
    code, out, _ = ctxmodes(capsys, *command)
    assert (code, json.loads(out)["contextEntryIds"]) == (0, ["a"])
    assert gc.isenabled()
    code, _, err = ctxmodes(capsys, *command, "--at", "missing")
    assert code != 0
    assert "missing" in err
    assert gc.isenabled()
    gc.disable()
    try:
        assert ctxmodes(capsys, *command)[0] == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_ctrl_c_stops_a_command_with_the_shells_status_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxmodes.cli import session_cmd

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(session_cmd, "run_context", interrupted)
    code, out, err = ctxmodes(capsys, "session", "context", str(tmp_path / "any.jsonl"))
    assert (code, out, err) == (130, "", "ctxmodes: interrupted\n")
