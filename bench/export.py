"""``ctxmodes session export`` against the real Pi's HTML export of the same session file.

Each command runs as a whole process (start-up, reading the session, writing the page),
alternated run by run with Pi's ``exportFromFile`` (node importing Pi's export module), and
is measured with ``wait4`` through GNU ``time``: wall time and peak resident memory, medians
and spread, and the ratios ctxmodes ÷ Pi. The sessions are ``bench/session_open.py``'s two
shapes: ``ordinary`` (~950 bytes an entry, tool calls and results, a side branch every
~1,000 entries, a compaction every 20,000) and ``compacted`` (the short exchanges of
``tests/support/long_sessions.py``, a compaction every 20,000).

Pi renders the page in the browser from the session embedded as JSON; ctxmodes renders every
entry on the machine (the page's one script is pinned by its hash; see docs/security.md), so
the two pages differ, and what is compared is the command a user runs.

``--baseline EXE`` times another ``ctxmodes`` executable (an earlier version's) in the same
alternation.

Usage: ``.venv/bin/python bench/export.py [--sizes 10000,100000] [--shapes ordinary,compacted]
[--runs N] [--baseline EXE]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from long_sessions import run as run_measured
from long_sessions import use_compiled_bytecode
from session_open import _oracle_dir, _pi_node_modules, generate
from smoke import parse_args

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.long_sessions import write_chain  # noqa: E402

CTXMODES = str(Path(sys.executable).with_name("ctxmodes"))
PI_SCRIPT = Path(__file__).with_name("pi_export.mjs")

SHAPES: dict[str, Callable[[Path, int], object]] = {
    "ordinary": generate,
    "compacted": lambda path, count: write_chain(path, count, compact_every=20_000),
}

Command = Callable[[Path, Path], list[str]]
#: Per command: (wall seconds, peak MiB) of each run.
Samples = dict[str, list[tuple[float, float]]]


def _ctxmodes(executable: str) -> Command:
    return lambda session, page: [executable, "session", "export", str(session), "-o", str(page)]


def _pi() -> Command | None:
    """Pi's export of a session to a page, as a command (``None`` without node or Pi)."""
    node, modules, oracle = shutil.which("node"), _pi_node_modules(), _oracle_dir()
    if node is None or modules is None or oracle is None:
        return None
    os.environ["PI_NODE_MODULES"] = str(modules)
    library = str(oracle / "pi_oracle_lib.mjs")
    return lambda session, page: [node, str(PI_SCRIPT), library, str(session), str(page)]


def _measure(commands: dict[str, Command], session: Path, pages: Path, runs: int) -> Samples:
    """``runs`` rounds of every command in turn."""
    samples: Samples = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            page = pages / f"{name}.html"
            seconds, peak, status = run_measured(command(session, page))
            if status != "ok" or not page.stat().st_size:
                raise SystemExit(f"{name} failed on {session.name}: {status}")
            page.unlink()
            samples[name].append((seconds, peak))
    return samples


def _spread(values: list[float], unit: str, digits: int) -> str:
    return (
        f"{statistics.median(values):.{digits}f} {unit} "
        f"({min(values):.{digits}f} to {max(values):.{digits}f})"
    )


def _report(label: str, samples: Samples) -> None:
    medians = {}
    for name, pairs in samples.items():
        walls, peaks = [wall for wall, _ in pairs], [peak for _, peak in pairs]
        medians[name] = statistics.median(walls), statistics.median(peaks)
        print(
            f"{label:22} {name:9} wall {_spread(walls, 's', 2)}, "
            f"peak {_spread(peaks, 'MiB', 0)} ({len(pairs)} runs)",
            flush=True,
        )
    if "Pi" not in medians:
        return
    pi_wall, pi_peak = medians["Pi"]
    for name, (wall, peak) in medians.items():
        if name != "Pi":
            print(
                f"{label:22} {name:9} ÷ Pi (medians): wall {wall / pi_wall:.2f}x, "
                f"peak memory {peak / pi_peak:.2f}x",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="another ctxmodes executable to time alongside")
    args = parse_args(parser, sizes="300", runs=1)

    commands: dict[str, Command] = {"ctxmodes": _ctxmodes(CTXMODES)}
    if args.baseline:
        commands["baseline"] = _ctxmodes(args.baseline)
    pi = _pi()
    if pi is None:
        print("real Pi not timed: node, Pi or pi-oracle not found")
    else:
        commands["Pi"] = pi
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        use_compiled_bytecode(directory / "bytecode")
        # One untimed run of each command writes its bytecode.
        warm_up = directory / "warm-up.jsonl"
        write_chain(warm_up, 20)
        _measure(commands, warm_up, directory, 1)
        for size in (int(size) for size in args.sizes.split(",")):
            for shape in args.shapes.split(","):
                session = directory / f"{shape}-{size}.jsonl"
                SHAPES[shape](session, size)
                label = f"{shape} {size} ({session.stat().st_size / 1e6:.1f} MB)"
                _report(label, _measure(commands, session, directory, args.runs))
                session.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
