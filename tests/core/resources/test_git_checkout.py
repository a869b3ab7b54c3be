"""The checkout a folder is in, found as Pi's ``findGitPaths`` finds it, on checkouts made by
the real git and on odd ``.git`` entries."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxmodes.resources.git_checkout import find_git_paths

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *identity, *arguments], cwd=folder, check=True, capture_output=True)


def test_a_checkout_is_found_from_any_folder_inside(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet")
    inner = tmp_path / "src" / "deep"
    inner.mkdir(parents=True)
    paths = find_git_paths(inner)
    assert paths is not None
    assert (paths.repo_dir, paths.common_git_dir) == (tmp_path, tmp_path / ".git")
    assert paths.head == tmp_path / ".git" / "HEAD"


def test_a_linked_worktree_has_its_own_head_and_shares_the_repository(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "--quiet")
    git(main, "commit", "--quiet", "--allow-empty", "-m", "first")
    tree = tmp_path / "tree"
    git(main, "worktree", "add", "--quiet", "-b", "feature", str(tree))
    paths = find_git_paths(tree)
    assert paths is not None
    assert paths.repo_dir == tree
    assert paths.common_git_dir == main / ".git"
    assert paths.head == main / ".git" / "worktrees" / "tree" / "HEAD"


def test_a_folder_outside_any_checkout_is_in_none(tmp_path: Path) -> None:
    if any((folder / ".git").exists() for folder in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary folder is inside a git checkout")
    assert find_git_paths(tmp_path) is None


def test_odd_git_entries(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet")
    folder = tmp_path / "odd"
    folder.mkdir()
    # A .git file naming no git folder is passed by, as Pi passes it.
    (folder / ".git").write_text("not a gitdir line\n")
    found = find_git_paths(folder)
    assert found is not None
    assert found.repo_dir == tmp_path
    # So is a pipe (never read: nothing would answer).
    (folder / ".git").unlink()
    os.mkfifo(folder / ".git")
    assert find_git_paths(folder) == found
    # A .git folder without HEAD is no checkout, and the walk stops there, as Pi's does.
    (folder / ".git").unlink()
    (folder / ".git").mkdir()
    assert find_git_paths(folder) is None
    # A gitdir whose HEAD is missing: none either.
    (folder / ".git").rmdir()
    (folder / ".git").write_text("gitdir: ../nowhere\n")
    assert find_git_paths(folder) is None
