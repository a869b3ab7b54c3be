"""``ctxmodes run`` as a real process, with the scripted model and a private agent and config
directory, so that everything it prints (logging included) can be checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_cli(
    tmp_path: Path, script: dict[str, Any], *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    return run_ctxmodes(tmp_path, "run", "--model", f"scripted:{script_file}", *args, env=env)


#: The command line that starts ctxmodes (before its arguments).
CTXMODES = [sys.executable, "-m", "ctxmodes"]


def ctxmodes_environment(tmp_path: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with a private agent and configuration directory in
    ``tmp_path`` and no mode or model chosen by it, ``env`` over it."""
    environment = dict(
        os.environ,
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        CTXMODES_CONFIG_DIR=str(tmp_path / "config"),
    )
    environment.pop("CTXMODES_MODE", None)
    environment.pop("CTXMODES_MODEL", None)
    environment.update(env or {})
    return environment


def run_ctxmodes(
    tmp_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``ctxmodes ARGS`` in ``cwd`` (default: ``tmp_path``), with a private agent and
    configuration directory in ``tmp_path``; ``stdin`` piped in (by default, an empty
    input: never the test runner's own)."""
    return subprocess.run(
        [*CTXMODES, *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=ctxmodes_environment(tmp_path, env),
        cwd=tmp_path if cwd is None else cwd,
        timeout=120,
        check=False,
    )
