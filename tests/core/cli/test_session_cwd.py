"""Print mode on a stored session runs in the working directory it records, with that
project's settings, as Pi does; when that directory is gone, the command refuses in one line
and writes nothing (Pi refuses too), and ``--cwd`` continues the session elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes

pytestmark = pytest.mark.slow  # each test runs ctxmodes as a process

SCRIPT = {
    "responses": [
        {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "looked"},
    ]
}


def _stored(tmp_path: Path, cwd: Path) -> Path:
    path = tmp_path / "stored.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": str(cwd)}
    path.write_text(json.dumps(header) + "\n")
    return path


def _print(tmp_path: Path, session: Path, *more: str) -> tuple[int, str, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    (tmp_path / "here").mkdir(exist_ok=True)
    done = run_ctxmodes(
        tmp_path,
        "run",
        "--model",
        f"scripted:{script}",
        "--session",
        str(session),
        *more,
        "where are we",
        cwd=tmp_path / "here",
    )
    return done.returncode, done.stdout, done.stderr


def _pwd_results(session: Path) -> list[str]:
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    return [
        line["message"]["content"][0]["text"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "toolResult"
    ]


def test_a_session_of_another_project_runs_where_it_records(tmp_path: Path) -> None:
    (tmp_path / "there").mkdir()
    session = _stored(tmp_path, tmp_path / "there")
    code, _, stderr = _print(tmp_path, session)
    assert code == 0, stderr
    assert _pwd_results(session) == [f"{tmp_path / 'there'}\n"]


def test_a_session_whose_directory_is_gone_is_refused_in_one_line(tmp_path: Path) -> None:
    session = _stored(tmp_path, tmp_path / "gone")
    before = session.read_bytes()
    code, stdout, stderr = _print(tmp_path, session, "--name", "late")
    assert (code, stdout) == (1, "")
    assert stderr == (
        f"ctxmodes: error: the session's working directory no longer exists: "
        f"{tmp_path / 'gone'} (session {session}); to continue it in another, give --cwd DIR\n"
    )
    assert session.read_bytes() == before


def test_cwd_continues_it_in_another_directory(tmp_path: Path) -> None:
    session = _stored(tmp_path, tmp_path / "gone")
    header = session.read_text()
    (tmp_path / "new home").mkdir()
    code, _, stderr = _print(tmp_path, session, "--cwd", str(tmp_path / "new home"))
    assert code == 0, stderr
    assert _pwd_results(session) == [f"{tmp_path / 'new home'}\n"]
    assert session.read_text().startswith(header)  # never rewritten


def test_a_session_of_another_project_takes_that_projects_settings(tmp_path: Path) -> None:
    """Its model here comes from the other project's own configuration, trusted for the run;
    the current directory's is not read."""
    (tmp_path / "there").mkdir()
    (tmp_path / "here").mkdir()
    reply = tmp_path / "there.json"
    reply.write_text(json.dumps({"responses": [{"text": "configured there"}]}))
    (tmp_path / "there" / ".ctxmodes.toml").write_text(f'model = "scripted:{reply}"\n')
    (tmp_path / "here" / ".ctxmodes.toml").write_text('model = "scripted:/nowhere.json"\n')
    session = _stored(tmp_path, tmp_path / "there")
    done = run_ctxmodes(
        tmp_path, "run", "--approve", "--session", str(session), "hi", cwd=tmp_path / "here"
    )
    assert (done.returncode, done.stdout) == (0, "> hi\nconfigured there\n"), done.stderr
