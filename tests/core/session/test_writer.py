from __future__ import annotations

from pathlib import Path

import pytest

from ctxmodes.session.errors import SessionError, SessionLockedError, SessionWriteError
from ctxmodes.session.writer import Durability, SessionWriter


def test_create_refuses_existing_files(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"x\n")
    with pytest.raises(SessionError, match="already exists"):
        SessionWriter.create(path, b"{}\n", Durability.FSYNC)
    assert path.read_bytes() == b"x\n"
    with pytest.raises(SessionError, match="cannot open session file for writing"):
        SessionWriter.open_existing(tmp_path / "missing.jsonl", Durability.FSYNC)


def test_lock_is_held_until_close(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.create(path, b"a\n", Durability.FLUSH)
    with pytest.raises(SessionLockedError):
        SessionWriter.open_existing(path, Durability.FLUSH)
    writer.close()
    writer.close()
    with pytest.raises(SessionError, match="closed"):
        writer.append(b"b\n")
    SessionWriter.open_existing(path, Durability.FLUSH).close()


def test_unbuffered_modes_write_immediately_and_none_buffers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.create(path, b"h\n", Durability.NONE)
    writer.append(b"small\n")
    assert path.read_bytes() == b"h\n"
    writer.append(b"y" * 70_000 + b"\n")
    assert path.read_bytes().startswith(b"h\nsmall\nyyy")
    writer.append(b"tail\n")
    writer.close()
    assert path.read_bytes().endswith(b"\ntail\n")


def test_missing_final_newline_is_added_with_the_first_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"complete\nfragm")
    writer = SessionWriter.open_existing(path, Durability.FSYNC)
    assert path.read_bytes() == b"complete\nfragm"
    writer.append(b"next\n")
    writer.append(b"more\n")
    writer.close()
    assert path.read_bytes() == b"complete\nfragm\nnext\nmore\n"


def test_a_dropped_writer_flushes_and_unlocks(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.create(path, b"h\n", Durability.NONE)
    writer.append(b"buffered\n")
    del writer
    assert path.read_bytes() == b"h\nbuffered\n"
    SessionWriter.open_existing(path, Durability.FLUSH).close()


@pytest.mark.parametrize("durability", list(Durability))
def test_a_file_removed_while_written_is_made_again_whole(
    tmp_path: Path, durability: Durability
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "s.jsonl"
    writer = SessionWriter.create(path, b"header\n", durability)
    writer.append(b"first\n")
    writer.flush()
    path.unlink()
    folder.rmdir()  # the sessions folder cleaned up whole
    writer.append(b"second\n")
    writer.flush()
    # The file made again is held as the removed one was.
    with pytest.raises(SessionLockedError):
        SessionWriter.open_existing(path, durability)
    writer.close()
    assert path.read_bytes() == b"header\nfirst\nsecond\n"


def test_a_file_standing_where_the_removed_one_was_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter.create(path, b"header\n", Durability.FLUSH)
    path.unlink()
    path.write_bytes(b"someone else's\n")
    with pytest.raises(SessionWriteError, match="another file now stands there"):
        writer.append(b"line\n")
    writer.close()
    assert path.read_bytes() == b"someone else's\n"
