"""Fixtures shared by the configuration tests: a user configuration directory and a project
the user trusts (so that its ``.ctxmodes.toml`` loads), and one freshly cloned."""

import json
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
