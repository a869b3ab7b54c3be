"""Pi's session directory: with ``sessionDir`` (or ``PI_CODING_AGENT_SESSION_DIR``, or
``--session-dir``) every project's sessions go to one directory, where ``-c``, ``--session
ID`` and ``session list`` find the working directory's own, as Pi finds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings, pi_agent_dir

SCRIPT = {"responses": [{"text": "first answer"}, {"text": "second answer"}]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_settings(tmp_path, monkeypatch)
    folder = tmp_path / "project"
    folder.mkdir()
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    monkeypatch.chdir(folder)
    return folder


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str) -> str:
    script = f"scripted:{tmp_path / 'script.json'}"
    code, out, err = ctxmodes(capsys, "run", "--model", script, *argv)
    assert code == 0, err
    return out


def _sessions(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jsonl"))


def _messages(path: Path) -> int:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return sum(1 for line in lines if line.get("type") == "message")


def test_pis_session_dir_holds_every_projects_sessions_and_c_continues_this_ones(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    agent = pi_agent_dir(tmp_path, monkeypatch)
    (agent / "settings.json").write_text(json.dumps({"sessionDir": "~/pi-sessions"}))
    shared = Path.home() / "pi-sessions"
    # Another project's session, newer, in the same directory: not this project's to continue.
    other = tmp_path / "other"
    other.mkdir()
    _run(capsys, tmp_path, "--cwd", str(other), "elsewhere")
    [theirs] = _sessions(shared)

    _run(capsys, tmp_path, "hello")
    [mine] = [path for path in _sessions(shared) if path != theirs]
    assert not (agent / "sessions").exists()  # nothing in Pi's folder per project
    theirs.touch()  # the most recent file of the directory
    _run(capsys, tmp_path, "-c", "again")
    assert _messages(mine) == 4
    assert _messages(theirs) == 2

    session_id = json.loads(mine.read_text().splitlines()[0])["id"]
    _run(capsys, tmp_path, "--session", session_id[:8], "third")
    assert _messages(mine) == 6

    code, out, _ = ctxmodes(capsys, "session", "list", "--json")
    assert code == 0
    assert [Path(info["path"]) for info in json.loads(out)] == [mine]
    code, out, _ = ctxmodes(capsys, "session", "list", "--all", "--json")
    assert {Path(info["path"]) for info in json.loads(out)} == {mine, theirs}


def test_the_command_line_wins_over_the_environment_over_the_setting(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    agent = pi_agent_dir(tmp_path, monkeypatch)
    (agent / "settings.json").write_text(json.dumps({"sessionDir": str(tmp_path / "setting")}))
    _run(capsys, tmp_path, "one")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "environment"))
    _run(capsys, tmp_path, "two")
    _run(capsys, tmp_path, "--session-dir", "flag", "three")  # from the current directory
    for where in (tmp_path / "setting", tmp_path / "environment", project / "flag"):
        assert len(_sessions(where)) == 1, where
