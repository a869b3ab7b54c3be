"""What corrupt lines cost: a session whose lines are all damaged against the same session
intact, read with ``ctxmodes session context --json`` in-process, with the warnings it
prints counted; and, where node and Pi are installed, the real Pi opening both.

Usage: ``.venv/bin/python bench/corrupt_lines.py [--lines N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

from session_open import time_pi
from smoke import parse_args

from ctxmodes.cli import main as ctxmodes


def build(directory: Path, lines: int) -> tuple[Path, Path]:
    header = {"type": "session", "version": 3, "id": "bench", "timestamp": "t", "cwd": "/p"}
    intact, corrupt = [json.dumps(header)], [json.dumps(header)]
    parent = None
    for number in range(lines):
        entry_id = f"{number:08x}"
        line = json.dumps(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": f"line {number}", "timestamp": number},
            }
        )
        intact.append(line)
        corrupt.append(line[:-9] + "\x01damaged")
        parent = entry_id
    paths = directory / "intact.jsonl", directory / "corrupt.jsonl"
    for path, content in zip(paths, (intact, corrupt), strict=True):
        path.write_text("\n".join(content) + "\n")
    return paths


def run_context(path: Path) -> tuple[float, int]:
    """Seconds for ``session context --json``, and the bytes it wrote to standard error."""
    out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        ctxmodes(["session", "context", str(path), "--json"])
    return time.perf_counter() - start, len(err.getvalue().encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parse_args(parser, lines=2000)
    with tempfile.TemporaryDirectory() as directory:
        intact, corrupt = build(Path(directory), args.lines)
        figures = {path.stem: run_context(path) for path in (intact, corrupt)}
        for name, (seconds, warning_bytes) in figures.items():
            print(f"ctxmodes {name:8}: {seconds:6.2f} s, {warning_bytes} bytes of warnings")
        ratio = figures["corrupt"][0] / figures["intact"][0]
        print(f"ctxmodes corrupt ÷ intact: {ratio:.2f}x")
        pi = {path.stem: time_pi(path, 1) for path in (intact, corrupt)}
        if all(pi.values()):
            seconds = {name: min(report["timesMs"]) / 1000 for name, report in pi.items()}  # type: ignore[index, call-overload]
            for name, value in seconds.items():
                ratio_to_pi = figures[name][0] / value
                print(f"Pi       {name:8}: {value:6.2f} s (ctxmodes ÷ Pi: {ratio_to_pi:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
