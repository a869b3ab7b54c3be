"""Fixtures shared by the configuration and plugin tests: a user configuration directory, a
project the user trusts (so that its ``.ctxmodes.toml`` loads), one freshly cloned, and plugins
installed for one test."""

import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


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
def installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], None]]:
    """``installed(name, source)``: a plugin module on the path, declared by an entry point."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[ctxmodes]\n{name} = {name}\n")

    yield install
    for name in [module for module in sys.modules if module.startswith("probe_")]:
        del sys.modules[name]
