"""``ctxmodes --help`` stays fast: building the parser imports nothing of the interactive
session, the embedding API or the export (prompt_toolkit, jinja2, markdown-it)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "prompt_toolkit",
    "jinja2",
    "markdown_it",
    "ctxmodes.sdk",
    "ctxmodes.tui",
    "ctxmodes.export",
)


def test_help_imports_nothing_heavy():
    probe = (
        "import json, sys\n"
        "from ctxmodes.cli import build_parser\n"
        "build_parser().format_help()\n"
        f"print(json.dumps([name for name in {list(HEAVY)!r} if name in sys.modules]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(result.stdout) == []
