"""Fixtures shared by the core's tests: for configuration, a user configuration directory and
a project the user trusts (so that its ``.ctxmodes.toml`` loads), and one freshly cloned; for
work shared with forked processes, the children a test forks; for plugins, ones installed for
one test."""

import json
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxmodes import forked_work


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "user"
    directory.mkdir()
    return directory


@pytest.fixture
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pi's agent directory of this test, where ``trust.json`` is kept."""
    directory = tmp_path / "agent"
    directory.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    return directory


@pytest.fixture
def project(tmp_path: Path, agent_dir: Path) -> Path:
    """A project whose trust the user saved, as ``ctxmodes chat`` saves it."""
    directory = tmp_path / "project"
    directory.mkdir()
    (agent_dir / "trust.json").write_text(json.dumps({str(directory.resolve()): True}))
    return directory


@pytest.fixture
def clone(tmp_path: Path, agent_dir: Path) -> Path:
    """A project nobody decided about: a repository just cloned."""
    directory = tmp_path / "clone"
    directory.mkdir()
    return directory


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The pids of the children forked during the test, on a machine of two cores where
    forking is allowed; each must be gone (reaped) after the test."""
    pids: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(forked_work.os, "fork", fork)
    # Two cores, whatever the machine has: work is shared only where there is a second one.
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv("CTXMODES_READ_PROCESSES", raising=False)
    # A thread another test left behind in this worker would forbid forking.
    monkeypatch.setattr(forked_work, "can_fork", lambda: True)
    yield pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``installed(name, source, entry_point=name)``: a plugin module on the path, declared
    by an entry point."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(name: str, source: str, entry_point: str | None = None) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[ctxmodes]\n{entry_point or name} = {name}\n")

    yield install
    for name in [module for module in sys.modules if module.startswith("probe_")]:
        del sys.modules[name]
