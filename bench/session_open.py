"""Time opening a large session and building its context, against the real Pi when present.

Generates a deterministic 100,000-entry session (~95 MB: user / assistant / toolResult turns
with ~600-character texts, a side branch every ~1,000 entries, a compaction every ~20,000),
then times ``SessionManager.open`` + ``build_session_context`` (JSON form, and separately the
validated message models). If node and Pi 0.85 are available (``$PI_NODE_MODULES`` or
``<repo>/.pi/node_modules``) the same file is timed with Pi's ``SessionManager.open`` +
``buildSessionContext`` and both contexts are checked to serialize to the same bytes.

Usage: ``.venv/bin/python bench/session_open.py [--entries N] [--runs N] [--keep PATH]``
"""

from __future__ import annotations

import argparse
import gc
import hashlib
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

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager

REPO = Path(__file__).resolve().parents[1]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this file")
    args = parse_args(parser, entries=2000, runs=1)

    with tempfile.TemporaryDirectory() as scratch:
        path = args.keep or Path(scratch) / "bench.jsonl"
        if not path.exists():
            started = time.perf_counter()
            generate(path, args.entries)
            print(f"generated {path} in {time.perf_counter() - started:.1f}s")
        size_mb = path.stat().st_size / 1e6
        print(f"session: {args.entries} entries, {size_mb:.1f} MB")

        ours, with_models, digest, messages = time_ours(path, args.runs)
        ours_median = statistics.median(ours)
        print(
            f"ctxmodes open + build_session_context: median {ours_median * 1000:.0f} ms, "
            f"best {min(ours) * 1000:.0f} ms ({messages} context messages)"
        )
        print(
            "ctxmodes including message models:     "
            f"median {statistics.median(with_models) * 1000:.0f} ms"
        )
        pi = time_pi(path, args.runs)
        if pi is None:
            return 0
        pi_times = [float(t) / 1000 for t in pi["timesMs"]]  # type: ignore[attr-defined]
        pi_median = statistics.median(pi_times)
        print(
            f"Pi {pi['version']} open + buildSessionContext: median {pi_median * 1000:.0f} ms, "
            f"best {min(pi_times) * 1000:.0f} ms"
        )
        print(f"ratio ctxmodes / Pi (medians): {ours_median / pi_median:.2f}")
        same = pi["contextSha256"] == digest
        print(f"contexts identical: {'yes' if same else 'NO'}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
