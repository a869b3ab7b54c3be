"""What the session pickers do to a file, as Pi's picker does: a rename appends one
``session_info`` entry (the rest of the file byte for byte as it was, and the real Pi reads
the name), a delete goes through ``trash`` when there is one and removes the file when not,
and a failure is a sentence."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path

import orjson
import pytest
from support.pi_oracle import pi_session_name

from ctxmodes.errors import CtxmodesError
from ctxmodes.session import UserMessage
from ctxmodes.session.errors import SessionLockedError
from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.session_files import delete_session_file, name_session_file

ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def make_session(directory: Path, text: str = "fix the parser") -> Path:
    manager = SessionManager.create(directory, directory / "sessions")
    manager.append_message(UserMessage(content=text, timestamp=1))
    manager.append_message(UserMessage(content="and the tests", timestamp=2))
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


def entries(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_a_rename_appends_pi_s_session_info_entry_and_nothing_else(tmp_path):
    path = make_session(tmp_path)
    before = path.read_bytes()
    last_id = entries(path)[-1]["id"]
    name_session_file(path, "  parser work  ")
    after = path.read_bytes()
    assert after.startswith(before)
    added = [orjson.loads(line) for line in after[len(before) :].splitlines()]
    assert len(added) == 1
    entry = added[0]
    assert set(entry) == {"type", "id", "parentId", "timestamp", "name"}
    assert entry["type"] == "session_info"
    assert entry["parentId"] == last_id
    assert entry["name"] == "parser work"
    assert re.fullmatch(r"[0-9a-f]{8}", str(entry["id"]))
    assert ISO_TIME.match(str(entry["timestamp"]))


@pytest.mark.pi
def test_the_real_pi_reads_the_name_a_rename_appended(tmp_path):
    path = make_session(tmp_path)
    assert pi_session_name(path) is None
    name_session_file(path, "parser work")
    name_session_file(path, "parser work, take two")
    assert pi_session_name(path) == "parser work, take two"


def test_a_session_another_writer_holds_is_not_renamed(tmp_path):
    path = make_session(tmp_path)
    before = path.read_bytes()
    with SessionManager.open(path), pytest.raises(SessionLockedError):
        name_session_file(path, "taken")
    assert path.read_bytes() == before


def test_a_vanished_file_is_not_renamed_into_a_new_session(tmp_path):
    missing = tmp_path / "sessions" / "gone.jsonl"
    with pytest.raises(CtxmodesError, match="no such session file"):
        name_session_file(missing, "nothing")
    assert not missing.exists()


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """A ``PATH`` of one empty directory, where a test may put its own ``trash``."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", str(directory))
    return directory


def fake_trash(bin_dir: Path, body: str) -> Path:
    """A ``trash`` command that records its arguments in ``calls`` then runs ``body``."""
    calls = bin_dir / "calls"
    script = bin_dir / "trash"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {calls}\n{body}\n')
    script.chmod(0o755)
    return calls


def test_a_delete_moves_the_file_to_the_trash_when_a_trash_command_exists(tmp_path, bin_dir):
    path = make_session(tmp_path)
    move = shutil.which("mv", path=os.defpath)  # PATH holds nothing but the fake trash
    calls = fake_trash(bin_dir, f'{move} "$1" {bin_dir / "trashed.jsonl"}')
    deletion = delete_session_file(path)
    assert calls.read_text().splitlines() == [str(path)]
    assert not path.exists()
    assert (bin_dir / "trashed.jsonl").exists()
    assert (deletion.method, deletion.error) == ("trash", None)
    assert deletion.message == "Session moved to trash"


def test_without_a_trash_command_the_file_is_removed(tmp_path, bin_dir):
    path = make_session(tmp_path)
    deletion = delete_session_file(path)
    assert not path.exists()
    assert (deletion.method, deletion.error) == ("unlink", None)
    assert deletion.message == "Session deleted"


def test_when_trash_fails_the_file_is_removed_all_the_same(tmp_path, bin_dir):
    path = make_session(tmp_path)
    calls = fake_trash(bin_dir, "echo 'trash: no trash can here' >&2; exit 1")
    deletion = delete_session_file(path)
    assert calls.read_text().splitlines() == [str(path)]
    assert not path.exists()
    assert deletion.message == "Session deleted"


def test_a_file_that_cannot_be_removed_is_a_sentence_with_trash_s_word(tmp_path, bin_dir):
    # A directory cannot be unlinked, even by root.
    stuck = tmp_path / "sessions" / "stuck.jsonl"
    stuck.mkdir(parents=True)
    fake_trash(bin_dir, "echo 'trash: no trash can here' >&2; exit 1")
    deletion = delete_session_file(stuck)
    assert stuck.exists()
    assert deletion.error is not None
    assert deletion.message.startswith("Failed to delete: ")
    assert deletion.message.endswith("(trash: trash: no trash can here)")
    assert any(os.strerror(code) in deletion.message for code in (errno.EISDIR, errno.EPERM))
