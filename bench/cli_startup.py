"""How long ``ctxmodes --help`` and ``ctxmodes modes`` take to start, next to a bare interpreter.

Each command runs in a fresh interpreter, interleaved round by round so that machine noise
hits every command alike. The figures are the fastest and the median wall time, and each
command's ratio (of the fastest times) to the baseline ``python -c pass``; on
a shared machine the fastest run is the repeatable one, since contention only adds time.

A core command (``ctxmodes run --help``) loads no plugin at all. ``ctxmodes --help`` and a
plugin's command must find the plugins' entry points and call their hook, so they also pay
for pluggy and :mod:`importlib.metadata`; the "discovery floor" row is that cost alone, and
the plugin modules themselves must stay import-light to keep close to it.

Usage: ``.venv/bin/python bench/cli_startup.py [--rounds N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from smoke import parse_args

ENTRY = "import sys; from ctxmodes.cli import main; sys.argv[0] = 'ctxmodes'; sys.exit(main())"

FLOOR = "import argparse, pluggy, importlib.metadata as m; m.entry_points(group='ctxmodes')"

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python + argparse": [sys.executable, "-c", "import argparse"],
    "discovery floor": [sys.executable, "-c", FLOOR],
    "ctxmodes --help": [sys.executable, "-c", ENTRY, "--help"],
    "ctxmodes run --help": [sys.executable, "-c", ENTRY, "run", "--help"],
    "ctxmodes demo --help": [sys.executable, "-c", ENTRY, "demo", "--help"],
    "ctxmodes --version": [sys.executable, "-c", ENTRY, "--version"],
    "ctxmodes modes": [sys.executable, "-c", ENTRY, "modes"],
}
BASELINE = "python -c pass"


def _wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # one warm-up each: fill the page cache
        _wall(argv)
    for _ in range(rounds):
        for name, argv in COMMANDS.items():
            samples[name].append(_wall(argv))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parse_args(parser, rounds=2)
    samples = measure(args.rounds)
    base = min(samples[BASELINE])
    figures = {
        name: {
            "fastest": min(times),
            "median": statistics.median(times),
            "ratio": min(times) / base,
        }
        for name, times in samples.items()
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{args.rounds} fresh interpreters each    fastest     median   ratio")
    for name, figure in figures.items():
        print(
            f"{name:<28} {figure['fastest'] * 1000:7.1f} ms {figure['median'] * 1000:7.1f} ms"
            f"   {figure['ratio']:5.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
