"""Loading the Remote plugin, as every command-line start does (``ctxmodes --help`` collects
the commands of every plugin), imports neither the mode's HTTP client nor the service."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a fresh interpreter: this test process has imported everything already.
PROBE = """
import json, sys
from ctxmodes.cli import main
try:
    code = main(["--help"])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

HEAVY = ("httpx", "httpcore", "cryptography", "aiohttp", "prometheus_client")
MODE_AND_SERVICE = (
    "ctxmodes_remote.mode",
    "ctxmodes_remote.backend",
    "ctxmodes_remote.service.app",
    "ctxmodes_remote.service.crypto",
    "ctxmodes_remote.service.storage",
)


def test_help_loads_the_plugin_without_its_heavy_parts(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
        env={"CTXMODES_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)},
    )
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["code"] == 0
    modules = set(report["modules"])
    assert "ctxmodes_remote" in modules, "the plugin was not loaded at all"
    assert "serve" in run.stdout, "the plugin's command was not collected"
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []
    assert sorted(modules & set(MODE_AND_SERVICE)) == []
