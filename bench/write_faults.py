"""Inject write faults (short writes, then ENOSPC/EIO; failed fdatasync; refused truncation)
into session writers and check that nothing acknowledged is lost.

After every fault the file is reopened: it must hold every acknowledged entry, in order, on an
unbroken parent chain, equal to what the writing manager holds in memory, and the next append
must land intact (see ``ctxmodes.testing.faults``).

Usage: ``.venv/bin/python bench/write_faults.py [--faults N] [--seed S] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from smoke import parse_args

from ctxmodes.session.writer import Durability
from ctxmodes.testing.faults import run_campaign


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=1000, help="faults per durability")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    args = parse_args(parser, faults=10)
    reports = {}
    for durability in (Durability.FSYNC, Durability.FLUSH):
        with tempfile.TemporaryDirectory() as directory:
            started = time.perf_counter()
            report = run_campaign(
                Path(directory), faults=args.faults, seed=args.seed, durability=durability
            )
            reports[durability.value] = {**asdict(report), "seconds": time.perf_counter() - started}
    if args.json:
        print(json.dumps(reports))
    else:
        for name, report in reports.items():
            print(
                f"{name:>5}: {report['faults']} faults injected, {report['acknowledged']} entries"
                f" acknowledged, {report['refused']} appends refused, {report['kept']} kept"
                f" after a failed sync, {report['fragments_left']} fragments left (skipped),"
                f" {len(report['problems'])} problems, {report['seconds']:.1f} s"
            )
            for problem in report["problems"][:10]:
                print(f"       {problem}")
    return 1 if any(report["problems"] for report in reports.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
