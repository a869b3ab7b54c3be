"""Running the command line in the test process, with no setting leaking in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxmodes.cli import main
from ctxmodes.cli.process_markers import PROCESS_MARKERS


def isolate_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user, project or environment setting may pick the mode behind a test's back."""
    for name in list(os.environ):
        if name.startswith("CTXMODES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


def pi_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Pi agent folder of the test's own (``$PI_CODING_AGENT_DIR``): Pi's settings,
    models and credentials for the test to write."""
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return agent


def trusted(_cwd: Path) -> bool:
    """The trust of a user who trusts the project (``load_settings(trust=...)``)."""
    return True


def trust_project(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Save the user's decision to trust ``folder``, as ``ctxmodes chat`` saves it (in an
    agent directory of the test's own), so that its ``.ctxmodes.toml`` loads."""
    agent = folder.parent / f"{folder.name}-agent"
    agent.mkdir(exist_ok=True)
    (agent / "trust.json").write_text(json.dumps({str(folder.resolve()): True}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))


def ctxmodes(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command line in this process: exit status, standard output, standard error.
    The process markers a session command sets are taken back, so later tests start from
    an unmarked environment."""
    capsys.readouterr()
    saved = {name: os.environ.get(name) for name in PROCESS_MARKERS}
    try:
        code = main(list(argv))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    out, err = capsys.readouterr()
    return code, out, err
