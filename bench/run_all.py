"""Run every benchmark in this folder, one after another, with its default sizes.

Usage: ``.venv/bin/python bench/run_all.py [--smoke]`` (or ``make bench``); ``--smoke`` runs each
at a toy size, to check they all still work. Each benchmark prints its own
figures and ratios; they compare things measured side by side in the same run, because
these machines are too noisy for absolute thresholds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "cli_startup.py",
    "print_mode.py",
    "session_open.py",
    "export.py",
    "appends.py",
    "windows_index.py",
    "local_turn.py",
    "tree_index.py",
    "tree_cold_history.py",
    "crash_loop.py",
    "write_faults.py",
    "corrupt_lines.py",
    "long_sessions.py",
    "provider_streams.py",
    "service.py",
    "service_load.py",
    "service_capacity.py",
    "service_isolation.py",
    "terminal.py",
    "editor_rows.py",
)


def main() -> int:
    extra = ["--smoke"] if sys.argv[1:] == ["--smoke"] else []
    failed = []
    for name in BENCHMARKS:
        print(f"\n=== {name}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name), *extra], check=False).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
