"""The footer's git branch, named as Pi's footer names it, on checkouts made by the real
git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxmodes.tui.git_branch import GitBranch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *arguments: str) -> str:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *arguments], cwd=folder, capture_output=True, text=True, env=environment
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    git(folder, "init", "--quiet", "--initial-branch", "main")
    return folder


def test_a_new_repository_is_on_its_first_branch_from_any_folder_inside(checkout: Path) -> None:
    inner = checkout / "src" / "deep"
    inner.mkdir(parents=True)
    assert GitBranch(checkout).name == "main"
    assert GitBranch(inner).name == "main"


def test_a_commit_checked_out_off_any_branch_is_detached(checkout: Path) -> None:
    git(checkout, "commit", "--quiet", "--allow-empty", "-m", "first")
    git(checkout, "checkout", "--quiet", "--detach")
    assert GitBranch(checkout).name == "detached"


def test_a_worktree_names_its_own_branch(checkout: Path, tmp_path: Path) -> None:
    git(checkout, "commit", "--quiet", "--allow-empty", "-m", "first")
    tree = tmp_path / "tree"
    git(checkout, "worktree", "add", "--quiet", "-b", "feature/x", str(tree))
    assert GitBranch(tree).name == "feature/x"
    assert GitBranch(checkout).name == "main"


def test_a_head_that_is_not_text_is_no_branch(checkout: Path) -> None:
    (checkout / ".git" / "HEAD").write_bytes(b"\xff\xfe")
    assert GitBranch(checkout).name is None


def test_a_branch_switch_is_seen_at_the_next_check(checkout: Path) -> None:
    git(checkout, "commit", "--quiet", "--allow-empty", "-m", "first")
    branch = GitBranch(checkout)
    assert branch.check() is False
    git(checkout, "checkout", "--quiet", "-b", "release")
    assert branch.check() is True
    assert branch.name == "release"
    assert branch.check() is False
    git(checkout, "checkout", "--quiet", "--detach")
    assert branch.check() is True
    assert branch.name == "detached"


def test_a_reftable_head_asks_git_and_says_detached_when_git_cannot_name_it(
    checkout: Path,
) -> None:
    # A reftable repository's HEAD file; this git (older than reftable) cannot read the refs.
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/.invalid\n")
    assert GitBranch(checkout).name == "detached"


def test_a_pipe_in_place_of_head_is_no_branch_and_never_waited_on(checkout: Path) -> None:
    head = checkout / ".git" / "HEAD"
    head.unlink()
    os.mkfifo(head)
    # Nothing writes to the pipe: reading it would wait for ever.
    assert GitBranch(checkout).name is None
