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
    environment = dict(
        os.environ,
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        CTXMODES_CONFIG_DIR=str(tmp_path / "config"),
    )
    environment.pop("CTXMODES_MODE", None)
    environment.pop("CTXMODES_MODEL", None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ctxmodes", "run", "--model", f"scripted:{script_file}", *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
