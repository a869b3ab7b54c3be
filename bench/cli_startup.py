"""How long ``ctxmodes --help`` and ``ctxmodes modes`` take to start, next to a bare interpreter.

Each command runs in a fresh interpreter, interleaved round by round so that machine noise
hits every command alike. The figures are the fastest and the median wall time, each
command's ratio (of the fastest times, and of the medians) to the baseline ``python -c
pass``, and the spread of its runs (slowest ÷ fastest); on a shared machine the fastest run
is the repeatable one, since contention only adds time.

A core command (``ctxmodes run --help``) loads no plugin at all. ``ctxmodes --help`` and a
plugin's command must find the plugins' entry points and call their hook (directly, without
pluggy, see :mod:`ctxmodes.plugin_calls`), so they also pay for the entry-point scan; the
"discovery floor" row is argparse and that scan alone, and the plugin modules themselves
must stay import-light to keep close to it. The
"importlib.metadata scan" row is what the same scan costs through the standard library,
which ctxmodes does not use for it (see :mod:`ctxmodes.plugin_discovery`).

The interpreters run in an empty directory (a project without ctxmodes configuration), as
an installed ctxmodes runs: with its compiled bytecode. The
warm-up round writes it to a private cache (``PYTHONPYCACHEPREFIX``), so the figures do not
depend on whether the checkout's ``__pycache__`` folders exist, and a shell that sets
``PYTHONDONTWRITEBYTECODE`` does not turn every start into a compilation of every module.
The installed ``ctxmodes`` script and ``python -m ctxmodes`` are measured next to the
``python -c`` entry the other rows use.

Usage: ``.venv/bin/python bench/cli_startup.py [--rounds N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args

ENTRY = "import sys; from ctxmodes.cli import main; sys.argv[0] = 'ctxmodes'; sys.exit(main())"

FLOOR = (
    "import argparse; from ctxmodes.plugin_discovery import find_entry_points as f; f('ctxmodes')"
)
STDLIB_SCAN = "import importlib.metadata as m; m.entry_points(group='ctxmodes')"
SCRIPT = Path(sys.executable).with_name("ctxmodes")

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python + argparse": [sys.executable, "-c", "import argparse"],
    "importlib.metadata scan": [sys.executable, "-c", STDLIB_SCAN],
    "discovery floor": [sys.executable, "-c", FLOOR],
    "ctxmodes --help": [sys.executable, "-c", ENTRY, "--help"],
    "ctxmodes --help (script)": [str(SCRIPT), "--help"],
    "python -m ctxmodes --help": [sys.executable, "-m", "ctxmodes", "--help"],
    "ctxmodes run --help": [sys.executable, "-c", ENTRY, "run", "--help"],
    "ctxmodes demo --help": [sys.executable, "-c", ENTRY, "demo", "--help"],
    "ctxmodes --version": [sys.executable, "-c", ENTRY, "--version"],
    "ctxmodes modes": [sys.executable, "-c", ENTRY, "modes"],
}
BASELINE = "python -c pass"


def _wall(argv: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    quiet = subprocess.DEVNULL
    subprocess.run(argv, check=True, stdout=quiet, stderr=quiet, env=env, cwd=cwd)
    return time.perf_counter() - started


def measure(rounds: int) -> dict[str, list[float]]:
    commands = {name: argv for name, argv in COMMANDS.items() if Path(argv[0]).exists()}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="ctxmodes-startup-") as scratch:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(scratch, "bytecode")
        project = os.path.join(scratch, "project")
        os.mkdir(project)
        for argv in commands.values():  # one warm-up each: write bytecode, fill the page cache
            _wall(argv, env, project)
        for _ in range(rounds):
            for name, argv in commands.items():
                samples[name].append(_wall(argv, env, project))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parse_args(parser, rounds=2)
    samples = measure(args.rounds)
    base = min(samples[BASELINE])
    base_median = statistics.median(samples[BASELINE])
    figures = {
        name: {
            "fastest": min(times),
            "median": statistics.median(times),
            "ratio": min(times) / base,
            "median_ratio": statistics.median(times) / base_median,
            "spread": max(times) / min(times),
        }
        for name, times in samples.items()
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(
        f"{args.rounds} fresh interpreters each    fastest     median   ratio"
        "  (of medians)  slowest/fastest"
    )
    for name, figure in figures.items():
        print(
            f"{name:<28} {figure['fastest'] * 1000:7.1f} ms {figure['median'] * 1000:7.1f} ms"
            f"   {figure['ratio']:5.2f}x  ({figure['median_ratio']:5.2f}x)"
            f"       {figure['spread']:5.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
