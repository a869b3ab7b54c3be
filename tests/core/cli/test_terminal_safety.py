"""Every command that shows what a session, a model or a tool wrote shows it and never lets
the terminal obey it: escape sequences, carriage returns, backspaces and bidirectional
controls are written as ``\\u`` escapes (``session show`` has its own tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings

from ctxmodes.session.manager import SessionManager

#: Sets the window title, writes the clipboard, clears the screen, draws over the line,
#: reverses what follows.
HOSTILE = "t\x1b]0;owned\x07 c\x1b]52;c;ZXZpbA==\x07 s\x1b[2J r\rb\x08 \x9b31m \u202ex"
SHOWN = (
    "t\\u001b]0;owned\\u0007 c\\u001b]52;c;ZXZpbA==\\u0007 s\\u001b[2J r\\u000db\\u0008 "
    "\\u009b31m \\u202ex"
)
OBEYED = ("\x1b", "\x07", "\r", "\x08", "\x9b", "\u202e")


def shown_and_not_obeyed(text: str) -> None:
    assert not any(character in text for character in OBEYED), repr(text)
    assert SHOWN[:40] in text


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


@pytest.fixture
def hostile_session(tmp_path: Path) -> Path:
    with SessionManager.create(tmp_path) as manager:
        manager.append_message({"role": "user", "content": HOSTILE, "timestamp": 1})
        manager.append_session_info(HOSTILE)
        path = manager.session_file
    assert path is not None
    return path


def test_context_shows_each_message_and_obeys_none(hostile_session: Path, capsys) -> None:
    code, out, err = ctxmodes(capsys, "session", "context", str(hostile_session))
    assert (code, err) == (0, "")
    shown_and_not_obeyed(out)
    assert out.splitlines()[1:] == ["── user", SHOWN]


def test_context_into_a_pipe_keeps_long_lines_whole(tmp_path: Path, capsys) -> None:
    long = " ".join(f"word{number}" for number in range(100))
    with SessionManager.create(tmp_path) as manager:
        manager.append_message({"role": "user", "content": f"{long}\nsecond", "timestamp": 1})
        path = manager.session_file
    assert path is not None
    code, out, _ = ctxmodes(capsys, "session", "context", str(path))
    assert code == 0
    assert out.splitlines()[1:] == ["── user", long, "second"]


def test_context_of_many_messages_lists_them_all_in_order(tmp_path: Path, capsys) -> None:
    with SessionManager.create(tmp_path) as manager:
        for number in range(600):  # more than one block of messages laid out at once
            manager.append_message({"role": "user", "content": f"m{number}", "timestamp": 1})
        path = manager.session_file
    assert path is not None
    code, out, _ = ctxmodes(capsys, "session", "context", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith("600 messages")
    assert lines[1:] == [line for n in range(600) for line in ("── user", f"m{n}")]


def test_list_shows_the_name_and_obeys_none(hostile_session: Path, tmp_path: Path, capsys) -> None:
    code, out, err = ctxmodes(capsys, "session", "list", "--cwd", str(tmp_path))
    assert (code, err) == (0, "")
    # A session's name is on one line (the manager turns line breaks into spaces).
    shown_and_not_obeyed(out)
    assert out.splitlines()[1] == f"    {hostile_session}"


def test_warnings_and_errors_quote_the_file_and_obey_none(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/p"}
    entry = {
        "type": "message",
        "id": HOSTILE,
        "parentId": "gone",
        "timestamp": "t",
        "message": {"role": "user", "content": "q", "timestamp": 1},
    }
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, entry, entry)))
    code, _, err = ctxmodes(capsys, "session", "context", str(path), "--at", HOSTILE)
    shown_and_not_obeyed(err)
    assert "ctxmodes: warning:" in err  # the id used twice
    code, _, err = ctxmodes(capsys, "session", "context", str(path), "--at", f"{HOSTILE}!")
    assert code == 1
    shown_and_not_obeyed(err)
    assert err.splitlines()[-1].startswith("ctxmodes: error: ")


def test_run_prints_what_the_model_wrote_and_obeys_none(tmp_path: Path, capsys) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": f"line one\n{HOSTILE}"}]}))
    code, out, err = ctxmodes(capsys, "run", "--model", f"scripted:{script}", "hello")
    assert code == 0, err
    shown_and_not_obeyed(out)
    assert "line one\nt\\u001b]0;owned" in out  # its own lines kept
