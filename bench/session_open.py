"""Open a large session and print its context, against the real Pi when present.

Two shapes (``--shape``): ``ordinary`` generates a deterministic session (~950 bytes per entry:
user / assistant / toolResult turns with ~600-character texts and float costs, a side branch
every ~1,000 entries, a compaction every ~20,000); ``compacted`` is the short-exchange chain of
``tests/support/long_sessions.py`` (~330 bytes per entry) with a compaction every 20,000.

Two measurements, each alternated with Pi's in the same run:

* in-process: ``SessionManager.open`` + ``build_session_context`` (JSON form, and separately
  the validated message models), against Pi's ``SessionManager.open`` +
  ``buildSessionContext`` timed inside node; both contexts must serialize to the same bytes;
* whole commands: ``ctxmodes session context FILE --json`` (start-up, open, the report
  written to a pipe) against node running Pi's open + context, each in its own process
  measured with ``wait4``: wall time and peak resident memory, medians and spread.

With ``--show`` the whole-command comparison includes ``ctxmodes session show FILE``.
It also times the nesting guard (the check that skips lines nested deeper than the codec's
limit) as a share of ``open``: opens with it alternated with opens without it.

Usage: ``.venv/bin/python bench/session_open.py [--entries N] [--shape S] [--runs N] [--keep PATH]
[--show] [--no-in-process]``
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args

from ctxmodes.session import codec, reader
from ctxmodes.session.manager import SessionManager

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from long_sessions import run as run_measured  # noqa: E402
from long_sessions import use_compiled_bytecode  # noqa: E402
from support.long_sessions import write_chain  # noqa: E402

CTXMODES = str(Path(sys.executable).with_name("ctxmodes"))
PI_SCRIPT = Path(__file__).with_name("pi_session_open.mjs")
WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
    "parser",
    "buffer",
    "index",
    "branch",
    "compaction",
    "session",
    "context",
    "token",
    "window",
    "module",
    "request",
    "response",
    "function",
    "variable",
    "return",
    "value",
    "error",
    "handler",
    "stream",
    "cursor",
    "offset",
)


def _text(rng: random.Random, length: int) -> str:
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def _usage(rng: random.Random) -> dict[str, object]:
    tokens_in = rng.randint(1000, 90000)
    tokens_out = rng.randint(10, 900)
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out,
        "cost": {
            "input": tokens_in * 3e-6,
            "output": tokens_out * 1.5e-5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "total": tokens_in * 3e-6 + tokens_out * 1.5e-5,
        },
    }


def generate(path: Path, entries: int, seed: int = 7) -> None:
    """Write a Pi-format session with ``entries`` entries to ``path``."""
    rng = random.Random(seed)
    ids: set[str] = set()
    clock = 1_767_225_600_000

    def new_id() -> str:
        while True:
            candidate = f"{rng.getrandbits(32):08x}"
            if candidate not in ids:
                ids.add(candidate)
                return candidate

    def stamp() -> str:
        seconds, millis = divmod(clock, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"

    path_ids: list[str] = []
    lines = [
        codec.dumps_line(
            {"type": "session", "version": 3, "id": "bench", "timestamp": stamp(), "cwd": "/bench"}
        )
    ]

    def append(entry_type: str, **fields: object) -> None:
        nonlocal clock
        clock += 1500
        entry = {
            "type": entry_type,
            "id": new_id(),
            "parentId": path_ids[-1] if path_ids else None,
            "timestamp": stamp(),
            **fields,
        }
        lines.append(codec.dumps_line(entry))
        path_ids.append(entry["id"])  # type: ignore[arg-type]

    append("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    append("thinking_level_change", thinkingLevel="medium")
    turn = 0
    while len(lines) - 1 < entries:
        count = len(lines) - 1
        if count % 20_000 == 10_000:
            append(
                "compaction",
                summary=_text(rng, 2000),
                firstKeptEntryId=path_ids[-30],
                tokensBefore=rng.randint(100_000, 180_000),
            )
            continue
        if count % 1_000 == 999:
            del path_ids[-rng.randint(5, 40) :]  # leave a side branch behind
        phase = turn % 3
        turn += 1
        if phase == 0:
            message: dict[str, object] = {
                "role": "user",
                "content": [{"type": "text", "text": _text(rng, 640)}],
                "timestamp": clock,
            }
        elif phase == 1:
            message = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": _text(rng, 640)},
                    {
                        "type": "toolCall",
                        "id": f"call_{turn}",
                        "name": "read",
                        "arguments": {"path": f"src/file{turn}.ts"},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": _usage(rng),
                "stopReason": "toolUse",
                "timestamp": clock,
            }
        else:
            message = {
                "role": "toolResult",
                "toolCallId": f"call_{turn - 1}",
                "toolName": "read",
                "content": [{"type": "text", "text": _text(rng, 640)}],
                "isError": False,
                "timestamp": clock,
            }
        append("message", message=message)
    path.write_bytes(b"".join(lines))


def _pi_node_modules() -> Path | None:
    configured = os.environ.get("PI_NODE_MODULES")
    candidates = [Path(configured)] if configured else []
    candidates.append(REPO / ".pi" / "node_modules")
    for candidate in candidates:
        for root in (candidate, candidate / "node_modules"):
            if (root / "@earendil-works" / "pi-coding-agent" / "package.json").exists():
                return root
    return None


def _oracle_dir() -> Path | None:
    configured = os.environ.get("PI_ORACLE_DIR")
    candidate = Path(configured) if configured else REPO.parent / "shared" / "pi-oracle"
    return candidate if (candidate / "pi_oracle_lib.mjs").exists() else None


def time_ours(path: Path, runs: int) -> tuple[list[float], list[float], str, int]:
    times: list[float] = []
    with_models: list[float] = []
    digest = ""
    messages = 0
    for _ in range(runs):
        gc.collect()  # start each run without the previous run's garbage
        start = time.perf_counter()
        manager = SessionManager.open(path, read_only=True)
        context = manager.build_session_context()
        times.append(time.perf_counter() - start)
        models = list(context.messages)  # validates every message
        with_models.append(time.perf_counter() - start)
        digest = hashlib.sha256(codec.dumps(context.to_json())).hexdigest()
        messages = len(models)
        manager.close()
        del manager, context, models
    return times, with_models, digest, messages


def time_pi(path: Path, runs: int) -> dict[str, object] | None:
    node = shutil.which("node")
    modules = _pi_node_modules()
    oracle = _oracle_dir()
    if node is None or modules is None or oracle is None:
        missing = [
            name
            for name, value in (("node", node), ("Pi", modules), ("pi-oracle", oracle))
            if value is None
        ]
        print(f"real Pi not timed: {', '.join(missing)} not found")
        return None
    env = dict(os.environ, PI_NODE_MODULES=str(modules))
    result = subprocess.run(
        [node, str(PI_SCRIPT), str(oracle / "pi_oracle_lib.mjs"), str(path), str(runs)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    report: dict[str, object] = json.loads(result.stdout)
    return report


def _spread(values: list[float], scale: float, unit: str) -> str:
    return (
        f"median {statistics.median(values) * scale:.0f} {unit} "
        f"({min(values) * scale:.0f} to {max(values) * scale:.0f})"
    )


def guard_share(path: Path, runs: int) -> tuple[float, float]:
    """Seconds the nesting guard adds to an open of ``path``, and the open's (medians of
    ``runs`` opens with the guard, alternated with opens without it).

    The guard is what :mod:`ctxmodes.session.reader` does only to find lines nested too
    deeply: its lowered recursion limit and probe lines around each validated read, and the
    count of openers in the reads it decodes in full."""
    guarded = (
        reader._validate_within_nesting_limit,
        reader.deep_lines_in_chunk,
        reader._deep_lines,
    )
    unguarded = (
        lambda lines, proven: reader._parse_each(reader._validate_head, lines, {}),
        lambda chunk, lines: [],
        lambda lines: [],
    )
    names = ("_validate_within_nesting_limit", "deep_lines_in_chunk", "_deep_lines")
    samples: dict[bool, list[float]] = {True: [], False: []}
    try:
        for _ in range(max(runs, 3)):
            for with_guard in (True, False):
                for name, function in zip(names, guarded if with_guard else unguarded, strict=True):
                    setattr(reader, name, function)
                gc.collect()
                started = time.perf_counter()
                SessionManager.open(path, read_only=True).close()
                samples[with_guard].append(time.perf_counter() - started)
    finally:
        for name, function in zip(names, guarded, strict=True):
            setattr(reader, name, function)
    opened = statistics.median(samples[True])
    return opened - statistics.median(samples[False]), opened


def compare_commands(path: Path, runs: int, show: bool) -> None:
    """``ctxmodes session context --json`` (and with ``show``, ``ctxmodes session show``)
    and Pi's open + context as whole processes."""
    commands = {
        "ctxmodes": [CTXMODES, "session", "context", str(path), "--json"],
        "Pi": _pi_command(path),
    }
    if show:
        commands["show"] = [CTXMODES, "session", "show", str(path)]
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    # One untimed run of each command on the first lines of the file writes its bytecode.
    with tempfile.TemporaryDirectory() as scratch, path.open("rb") as lines:
        warm_up = Path(scratch) / path.name
        warm_up.write_bytes(b"".join(itertools.islice(lines, 20)))
        for command in commands.values():
            if command is not None:
                run_measured([str(warm_up) if part == str(path) else part for part in command])
    for _ in range(runs):
        for name, command in commands.items():
            if command is None:
                continue
            seconds, peak_mib, status = run_measured(command)
            if status != "ok":
                raise SystemExit(f"{name} failed: {status}")
            samples[name].append((seconds, peak_mib))
    for name, pairs in samples.items():
        if pairs:
            walls, peaks = [wall for wall, _ in pairs], [peak for _, peak in pairs]
            print(
                f"{name:9} process: wall {_spread(walls, 1000, 'ms')}, "
                f"peak {_spread(peaks, 1, 'MiB')} ({len(pairs)} runs)"
            )
    if not samples["Pi"]:
        return
    pi_wall = statistics.median(wall for wall, _ in samples["Pi"])
    pi_peak = statistics.median(peak for _, peak in samples["Pi"])
    for name, what in (("ctxmodes", "session context --json"), ("show", "session show")):
        if samples.get(name):
            wall = statistics.median(wall for wall, _ in samples[name])
            peak = statistics.median(peak for _, peak in samples[name])
            print(
                f"{what} ÷ Pi open + context (medians): wall {wall / pi_wall:.2f}x, "
                f"peak memory {peak / pi_peak:.2f}x"
            )


def _pi_command(path: Path) -> list[str] | None:
    node = shutil.which("node")
    modules = _pi_node_modules()
    oracle = _oracle_dir()
    if node is None or modules is None or oracle is None:
        return None
    os.environ["PI_NODE_MODULES"] = str(modules)
    return [node, str(PI_SCRIPT), str(oracle / "pi_oracle_lib.mjs"), str(path), "1"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--shape", choices=["ordinary", "compacted"], default="ordinary")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this file")
    parser.add_argument("--show", action="store_true", help="also time `ctxmodes session show`")
    parser.add_argument(
        "--in-process",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time open + context inside the interpreter (and inside node)",
    )
    args = parse_args(parser, entries=2000, runs=1, show=True)

    with tempfile.TemporaryDirectory() as scratch:
        use_compiled_bytecode(Path(scratch) / "bytecode")
        path = args.keep or Path(scratch) / "bench.jsonl"
        if not path.exists():
            started = time.perf_counter()
            if args.shape == "ordinary":
                generate(path, args.entries)
            else:
                write_chain(path, args.entries, compact_every=20_000)
            print(f"generated {path} in {time.perf_counter() - started:.1f}s")
        size_mb = path.stat().st_size / 1e6
        with path.open("rb") as lines:
            entries = sum(1 for _ in lines) - 1  # a reused file may be of any size
        print(f"session: {args.shape}, {entries} entries, {size_mb:.1f} MB")

        guard, opened = guard_share(path, args.runs)
        print(
            f"nesting guard: {guard * 1000:.1f} ms of a {opened * 1000:.0f} ms open "
            f"({guard / opened:.1%}; medians of {max(args.runs, 3)} opens with and without)"
        )
        compare_commands(path, args.runs, args.show)
        if not args.in_process:
            return 0

        ours, with_models, digest, messages = time_ours(path, args.runs)
        ours_median = statistics.median(ours)
        print(
            f"ctxmodes open + build_session_context: {_spread(ours, 1000, 'ms')} "
            f"({messages} context messages)"
        )
        print(f"ctxmodes including message models:     {_spread(with_models, 1000, 'ms')}")
        pi = time_pi(path, args.runs)
        if pi is None:
            return 0
        pi_times = [float(t) / 1000 for t in pi["timesMs"]]  # type: ignore[attr-defined]
        pi_median = statistics.median(pi_times)
        print(f"Pi {pi['version']} open + buildSessionContext: {_spread(pi_times, 1000, 'ms')}")
        print(f"in-process ratio ctxmodes / Pi (medians): {ours_median / pi_median:.2f}")
        same = pi["contextSha256"] == digest
        print(f"contexts identical: {'yes' if same else 'NO'}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
