"""Replacing a file whole: the new text, or the old file untouched, and nothing left over."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ctxmodes.file_replace import replacing


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_file_is_replaced_and_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    target.write_text("old")
    target.chmod(0o640)
    with replacing(target) as out:
        out.write("new ü")
    assert target.read_text("utf-8") == "new ü"
    assert _mode(target) == 0o640
    assert os.listdir(tmp_path) == ["page.html"]


def test_a_new_file_is_made_as_open_makes_it(tmp_path: Path) -> None:
    umask = os.umask(0o027)
    try:
        with replacing(tmp_path / "new.json") as out:
            out.write("{}")
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "new.json") == 0o640


def test_a_mode_given_holds_from_the_start(tmp_path: Path) -> None:
    target = tmp_path / "auth.json"
    target.write_text("{}")
    target.chmod(0o644)
    with replacing(target, mode=0o600, durable=True) as out:
        # Other users cannot read the temporary file while the secret is written.
        (temporary,) = (path for path in tmp_path.iterdir() if path.name.endswith(".tmp"))
        assert _mode(temporary) == 0o600
        out.write('{"key": "secret"}')
    assert _mode(target) == 0o600
    assert target.read_text() == '{"key": "secret"}'


def test_a_failure_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "trust.json"
    target.write_text("old\n")

    def write_half() -> None:
        with replacing(target) as out:
            out.write("half")
            raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError):
        write_half()
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["trust.json"]


def test_a_link_keeps_pointing_at_the_replaced_file(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "trust.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "trust.json"
    link.symlink_to(real)
    with replacing(link) as out:
        out.write("new")
    assert link.is_symlink()
    assert real.read_text() == "new"
    assert sorted(os.listdir(real.parent)) == ["trust.json"]
