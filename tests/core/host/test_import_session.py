"""``AgentHost.import_session``: a session file copied into the session directory under a
free name, as Pi's ``importFromJsonl`` copies it, or opened in place when it is there."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import pytest
from support.agents import make_agent

from ctxmodes.errors import CtxmodesError, SessionCwdMissingError


def test_a_copy_under_a_free_name_or_the_stored_file_itself(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with make_agent(tmp_path / "a", [{"text": "one"}]) as first:
        first.prompt("hi")
        source = first.session_file
    with make_agent(tmp_path, []) as agent:
        sessions = tmp_path / "sessions"
        agent.import_session(source)
        copied = agent.session_file
        agent.import_session(str(source))
        renamed = agent.session_file
        agent.import_session(copied)
        in_place = agent.session_file
        with pytest.raises(CtxmodesError, match=r"^File not found: "):
            agent.import_session(tmp_path / "missing.jsonl")
    assert copied == sessions / source.name
    assert renamed == sessions / f"{source.stem}-1.jsonl"
    assert in_place == copied
    assert sorted(sessions.iterdir()) == sorted([copied, renamed])


def test_a_file_that_is_not_a_session_is_refused_and_its_copy_removed(tmp_path: Path) -> None:
    """The copy is made to be opened: when it cannot be, the session directory is left as
    it was, the source untouched, and the session goes on."""
    junk = tmp_path / "notes.jsonl"
    junk.write_text("not a session\n")
    with make_agent(tmp_path, [{"text": "one"}]) as agent:
        agent.prompt("hi")
        sessions = tmp_path / "sessions"
        before = sorted(sessions.iterdir())
        current = agent.session_file
        with pytest.raises(CtxmodesError, match="not a valid pi session"):
            agent.import_session(junk)
        assert sorted(sessions.iterdir()) == before
        assert agent.session_file == current
    assert junk.read_text() == "not a session\n"


def test_a_session_whose_directory_is_gone_is_copied_only_when_continued_elsewhere(
    tmp_path: Path,
) -> None:
    moved = tmp_path / "moved.jsonl"
    gone = tmp_path / "gone"
    header = f'{{"type":"session","version":3,"id":"m","timestamp":"t","cwd":"{gone}"}}\n'
    moved.write_text(header)
    with make_agent(tmp_path, [{"text": "one"}]) as agent:
        agent.prompt("hi")
        sessions = tmp_path / "sessions"
        before = sorted(sessions.iterdir())
        with pytest.raises(SessionCwdMissingError) as missing:
            agent.import_session(moved)
        assert missing.value.fallback_cwd == str(tmp_path)
        assert sorted(sessions.iterdir()) == before
        agent.import_session(moved, cwd=tmp_path)
        assert agent.session_manager.cwd == str(tmp_path)
        assert agent.session_file == sessions / "moved.jsonl"
    assert (sessions / "moved.jsonl").read_text().startswith(header)


def test_a_copy_cut_short_by_a_full_disk_is_one_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import shutil

    (tmp_path / "a").mkdir()
    with make_agent(tmp_path / "a", [{"text": "one"}]) as first:
        first.prompt("hi")
        source = first.session_file
    original = source.read_bytes()

    def fill_the_disk(reader: BinaryIO, writer: BinaryIO) -> None:
        writer.write(reader.read(10))
        raise OSError(errno.ENOSPC, "No space left on device")

    with make_agent(tmp_path, [{"text": "two"}]) as agent:
        agent.prompt("hi")
        sessions = tmp_path / "sessions"
        before = sorted(sessions.iterdir())
        current = agent.session_file
        monkeypatch.setattr(shutil, "copyfileobj", fill_the_disk)
        with pytest.raises(CtxmodesError, match=r": No space left on device$"):
            agent.import_session(source)
        assert sorted(sessions.iterdir()) == before
        assert agent.session_file == current
    assert source.read_bytes() == original
