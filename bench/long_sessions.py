"""Peak memory and time of the commands a user runs on a long session, against the real Pi.

Run: ``.venv/bin/python bench/long_sessions.py [--sizes 100000] [--full]``

For each size it writes sessions in four shapes (``tests/support/long_sessions.py``):
``chain`` (one branch, no compaction: the context is the whole file), ``compacted`` (the same
with a Pi compaction every 20,000 entries, as a long Pi session has them), ``reversed``
(children written before their parents) and ``cycle`` (parent links forming one cycle the
store cuts, with entries hanging off it). Each command runs in its own process, limited to
4 GiB of address space, and is measured with ``wait4``: wall time and peak resident memory.

* ``session context --json``, ``session show`` (the active path, and ``--full``, the whole
  tree) and ``history list_windows`` on every shape;
* ``tree rollover``: ``ctxmodes run --mode tree`` with a scripted model that calls
  ``new_context`` on the first turn (window 0 opens at the end of the old session, then the
  first rollover archives all of it), on a copy of the file;
* ``pi open+context``: the real Pi 0.85 (``SessionManager.open`` + ``buildSessionContext``)
  on the same file, when node and Pi are installed; ratios are ctxmodes ÷ Pi. Pi loops for
  ever on a parent cycle, so it is given a time limit and reported as not finishing.

``--full`` adds 1,000,000-entry sessions (several minutes; the figures quoted for them in the
project notes come from this flag).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from smoke import parse_args

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.long_sessions import (  # noqa: E402
    write_chain,
    write_cycle,
    write_reversed_chain,
)

CTXMODES = str(Path(sys.executable).with_name("ctxmodes"))
PI_SCRIPT = Path(__file__).with_name("pi_session_open.mjs")
MEMORY_LIMIT = 4 << 30
PI_TIME_LIMIT = 120.0
ROLLOVER_SCRIPT = {
    "responses": [
        {"text": "rolling over", "tool_calls": [{"name": "new_context", "arguments": {}}]},
        {"text": "continuing in the next window"},
    ],
    "summaries": ["the work before Tree was switched on"],
}

SHAPES: dict[str, Callable[[Path, int], list[str]]] = {
    "chain": write_chain,
    "compacted": lambda path, count: write_chain(path, count, compact_every=20_000),
    "reversed": write_reversed_chain,
    "cycle": lambda path, count: write_cycle(path, count, tail=10),
}


def use_compiled_bytecode(cache: Path) -> None:
    """Run the commands as an installed program runs: from compiled bytecode.

    Where the environment forbids writing bytecode (``PYTHONDONTWRITEBYTECODE``), every command
    would compile the modules it imports again, a cost no installed copy pays; the child
    processes write it to ``cache`` instead (run each command once before timing it).
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(command: list[str], timeout: float | None = None) -> tuple[float, float, str]:
    """Run ``command`` in a child limited to 4 GiB: wall time (s), peak RSS (MiB), status.

    A child's peak counts the resident pages of the process it was forked or spawned from,
    until it execs, so a benchmark holding a large file would inflate every figure. Where GNU
    ``time`` and ``prlimit`` are installed, the command is started by ``time`` (a process of a
    megabyte or two), which reports the command's own peak, under ``prlimit``'s limit.
    """
    gnu_time, prlimit = Path("/usr/bin/time"), shutil.which("prlimit")
    measured = gnu_time.exists() and prlimit is not None
    if measured:
        command = [str(gnu_time), "-f", "%M", str(prlimit), f"--as={MEMORY_LIMIT}", *command]
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=None if measured else _limit_memory,
        start_new_session=True,
    )
    try:
        _, stderr_bytes = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        return time.perf_counter() - start, float("nan"), "timeout"
    elapsed = time.perf_counter() - start
    lines = stderr_bytes.decode(errors="replace").strip().splitlines()
    if measured and lines and lines[-1].isdigit():
        peak = int(lines.pop()) / 1024
    else:
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if measured and lines and lines[-1].startswith("Command "):  # time's note of the status
        lines.pop()
    verdict = "ok" if process.returncode == 0 else "failed: " + (lines or ["?"])[-1]
    return elapsed, peak, verdict


def pi_command(file: Path) -> list[str] | None:
    """The command timing the real Pi on ``file`` (``None`` without node or Pi)."""
    node = shutil.which("node")
    oracle = Path(os.environ.get("PI_ORACLE_DIR", REPO.parent / "shared" / "pi-oracle"))
    modules = Path(os.environ.get("PI_NODE_MODULES", REPO / ".pi" / "node_modules"))
    if node is None or not (oracle / "pi_oracle_lib.mjs").exists() or not modules.exists():
        return None
    return [node, str(PI_SCRIPT), str(oracle / "pi_oracle_lib.mjs"), str(file), "1"]


def bench_file(
    file: Path, tmp: Path, script: Path, pi_time_limit: float = PI_TIME_LIMIT
) -> dict[str, tuple[float, float, str]]:
    results: dict[str, tuple[float, float, str]] = {}
    results["session context --json"] = run([CTXMODES, "session", "context", str(file), "--json"])
    results["session show"] = run([CTXMODES, "session", "show", str(file)])
    results["session show --full"] = run([CTXMODES, "session", "show", str(file), "--full"])
    results["history list_windows"] = run(
        [CTXMODES, "history", "--mode", "tree", str(file), "list_windows"]
    )
    copy = tmp / f"rollover-{file.name}"
    shutil.copyfile(file, copy)
    rollover = f"run --mode tree --switch-mode --model scripted:{script} --session {copy}".split()
    rollover += ["--cwd", str(tmp)]  # the file records a directory no machine has
    results["tree rollover"] = run([CTXMODES, *rollover, "carry on"])
    copy.unlink()
    pi = pi_command(file)
    if pi is not None:
        results["pi open+context"] = run(pi, timeout=pi_time_limit)
    return results


def main() -> int:
    os.environ.setdefault("PI_NODE_MODULES", str(REPO / ".pi" / "node_modules"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--full", action="store_true", help="also run 1,000,000-entry sessions")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument(
        "--pi-time-limit", type=float, default=PI_TIME_LIMIT, help="seconds Pi gets per file"
    )
    args = parse_args(parser, sizes="300", pi_time_limit=5.0)
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.full:
        sizes.append(1_000_000)
    print(f"{'session':22} {'MB':>6} {'command':26} {'time':>8} {'peak':>9}  vs Pi")
    failed = 0
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        script = tmp / "rollover.json"
        script.write_text(json.dumps(ROLLOVER_SCRIPT))
        use_compiled_bytecode(tmp / "bytecode")
        warm_up = tmp / "warm-up.jsonl"
        write_chain(warm_up, 20)
        bench_file(warm_up, tmp, script, args.pi_time_limit)
        for size in sizes:
            for shape in args.shapes.split(","):
                file = tmp / f"{shape}-{size}.jsonl"
                SHAPES[shape](file, size)
                megabytes = file.stat().st_size / 1e6
                results = bench_file(file, tmp, script, args.pi_time_limit)
                pi = results.get("pi open+context")
                for command, (seconds, peak, status) in results.items():
                    ratio = ""
                    if pi is not None and pi[2] == "ok" and command != "pi open+context":
                        ratio = f"{seconds / pi[0]:5.2f}x time {peak / pi[1]:5.2f}x memory"
                    shown = "" if status == "ok" else f"  ({status})"
                    # Pi may run out of its time limit; a command of ours may not fail.
                    failed += status != "ok" and command != "pi open+context"
                    print(
                        f"{shape + ' ' + str(size):22} {megabytes:6.0f} {command:26} "
                        f"{seconds:7.2f}s {peak:7.0f}MiB  {ratio}{shown}",
                        flush=True,
                    )
                file.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
