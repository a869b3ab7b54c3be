"""Fixtures shared by the configuration tests: a user configuration directory and a project."""

from pathlib import Path

import pytest


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "user"
    directory.mkdir()
    return directory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory
