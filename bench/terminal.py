"""Benchmarks of the interactive session, in-process (pipe input, a VT100 output over a
string), with a scripted reply streamed at ``--rate`` tokens per second (4 characters each).

Run: ``.venv/bin/python bench/terminal.py [--rate 200] [--keys 300] [--sessions 1000]``

* **Keystroke to screen**: the time from a key arriving on the input to the end of the
  render that shows it, while a reply streams, and while a reply streams with a command's
  output streaming into the live region at the same time (a real ``bash`` loop printing a
  line every 2 ms, its output reaching the terminal as the ``bash`` tool's updates do),
  side by side with the same keys while idle (p50 and p99, and the ratio to idle). Target:
  ≤ 16 ms at p99 in both.
* **Rendering CPU per streamed token**: process CPU while a long reply streams with the
  terminal attached, minus the same reply streamed through the embedding API alone, per
  token.

Both are measured for the terminal as it is and, side by side, for the way it drew a
streaming reply before (``WholeReplyLive``: every line of the reply in the live region until
it ends, its Markdown rendered whole at the end, the loop woken for each piece of text),
with the ratios.
* **Resume picker start-up**: a directory of ``--sessions`` small sessions and one of 100 MB;
  the picker (heads only) side by side with the full listing Pi's ``/resume`` does
  (``SessionManager.list_sessions``), and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from smoke import parse_args

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402
from support.session_dirs import write_sessions  # noqa: E402

from ctxmodes.config import Settings  # noqa: E402
from ctxmodes.providers.base import Provider  # noqa: E402
from ctxmodes.providers.script import Script  # noqa: E402
from ctxmodes.providers.scripted import ScriptedProvider  # noqa: E402
from ctxmodes.sdk import RunSettled, open_agent  # noqa: E402
from ctxmodes.session.manager import SessionManager  # noqa: E402
from ctxmodes.tui.app import TerminalSession, tune_for_typing  # noqa: E402
from ctxmodes.tui.live import LiveRegion  # noqa: E402
from ctxmodes.tui.resume import ResumePicker  # noqa: E402
from ctxmodes.tui.streaming import BlockSplitter  # noqa: E402

LIVE_LINES = 12


class _NeverFinished(BlockSplitter):
    def finished(self, text: str) -> list[str]:
        return []


class WholeReplyRegion(LiveRegion):
    """The reply's last 12 lines (however long) live, all of it rendered as Markdown once
    it ended."""

    def reset(self) -> None:
        super().reset()
        self._splitter = _NeverFinished()

    def _tail(self, width: int) -> str:
        tail = self.text[-LIVE_LINES * max(width, 40) :]
        return "\n".join(tail.splitlines()[-LIVE_LINES:])


class WholeReplyLive(TerminalSession):
    """The terminal as it drew a streaming reply before blocks went to the scrollback as
    they finished (:class:`WholeReplyRegion`), each piece of text handled as it came."""

    def _live_region(self) -> LiveRegion:
        region = WholeReplyRegion()
        region.reset()
        return region

    def _receive(self, event: Any) -> None:
        # Each piece of text woke the loop and was drawn in the next frame.
        with self._events_lock:
            self._events.append(event)
        self._schedule_drain()


CHARS_PER_TOKEN = 4


class Paced(Provider):
    """The scripted model, one event every ``1 / rate`` seconds."""

    def __init__(self, inner: ScriptedProvider, rate: float) -> None:
        self.inner = inner
        self.interval = 1.0 / rate

    @property
    def transport(self) -> str:
        return self.inner.transport

    @property
    def info(self) -> Any:
        return self.inner.info

    def stream(self, request: Any, signal: Any) -> Any:
        events = self.inner.stream(request, signal)

        def paced() -> Any:
            next_at = time.perf_counter()
            for event in events:
                next_at += self.interval
                delay = next_at - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                yield event

        return paced()


def reply(tokens: int) -> str:
    words = ["alpha", "beta", "gamma", "delta"]
    text = " ".join(words[i % 4] for i in range(tokens))
    return "\n\n".join(text[i : i + 300] for i in range(0, len(text), 300))


def make_agent(directory: Path, tokens: int, rate: float, replies: int = 1) -> Any:
    script = Script.model_validate({"responses": [{"text": reply(tokens)}] * replies})
    provider = Paced(ScriptedProvider(script, chunk_chars=CHARS_PER_TOKEN), rate)
    return open_agent(
        cwd=directory,
        settings=Settings(mode="off", durability="none"),
        provider=provider,
        session_dir=directory / "sessions",
    )


class CommandOutput:
    """A real shell command printing a line every 2 ms, its output handed to the terminal as
    the ``bash`` tool hands it: a start, then an update with the output's tail (at most
    50 KB, as the tool keeps) for every chunk read."""

    TAIL_BYTES = 50 * 1024
    COMMAND = 'i=0; while :; do i=$((i+1)); echo "line $i of the build log"; sleep 0.002; done'

    def __init__(self, receive: Any) -> None:
        import subprocess

        self._receive = receive
        self._process = subprocess.Popen(
            ["bash", "-c", self.COMMAND], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        import os

        from ctxmodes.sdk import ToolStarted, ToolUpdated

        assert self._process.stdout is not None
        self._receive(ToolStarted("bench", "bash", {"command": self.COMMAND}))
        tail = b""
        fd = self._process.stdout.fileno()
        while chunk := os.read(fd, 65536):
            tail = (tail + chunk)[-self.TAIL_BYTES :]
            self._receive(ToolUpdated("bench", "bash", tail.decode("utf-8", "replace")))

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()
        self._thread.join(5)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def keystrokes(session: TerminalSession, send: Any, keys: int, gap: float) -> list[float]:
    """Latency of ``keys`` key presses, ``gap`` seconds apart, in milliseconds."""
    app = session.app
    latencies: list[float] = []
    rendered = asyncio.Event()
    app.after_render += lambda _app: rendered.set()
    for index in range(keys):
        expected = len(session.buffer.text) + 1
        rendered.clear()
        start = time.perf_counter()
        send("x")
        while len(session.buffer.text) < expected or not rendered.is_set():
            rendered.clear()
            await rendered.wait()
        latencies.append((time.perf_counter() - start) * 1000)
        if index % 50 == 49:
            send("\x15")  # Ctrl+U: keep the line short
            while session.buffer.text:
                await asyncio.sleep(0)
        await asyncio.sleep(gap)
    return latencies


def measure_keys(
    rate: float, keys: int, terminal: type[TerminalSession] = TerminalSession
) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as scratch:
        agent = make_agent(Path(scratch), tokens=int(rate * keys * 0.04) + 800, rate=rate)
        settled = threading.Event()
        agent.subscribe(lambda e: settled.set() if isinstance(e, RunSettled) else None)
        results: dict[str, list[float]] = {}

        async def main() -> None:
            with create_pipe_input() as pipe:
                output = Vt100_Output(
                    io.StringIO(), lambda: Size(rows=40, columns=120), term="xterm"
                )
                session = terminal(agent, input=pipe, output=output, sink=lambda text: None)
                task = asyncio.create_task(session.run_async())
                while not session.app.is_running:
                    await asyncio.sleep(0.001)
                results["idle"] = await keystrokes(session, pipe.send_text, keys, 0.01)
                pipe.send_text("\x15go\r")
                while not session.live.text:
                    await asyncio.sleep(0.001)
                results["streaming"] = await keystrokes(session, pipe.send_text, keys, 0.01)
                command = CommandOutput(session._receive)
                while not session.live.tool_output:
                    await asyncio.sleep(0.001)
                try:
                    results["with output"] = await keystrokes(session, pipe.send_text, keys, 0.01)
                finally:
                    command.stop()
                streamed = session.live.text
                assert streamed, "the reply ended before the keys were measured"
                session.exit()
                await task

        asyncio.run(main())
        agent.abort()
        agent.close()
        return results


def cpu_per_token(
    rate: float, tokens: int, terminal: type[TerminalSession] = TerminalSession
) -> tuple[float, float]:
    """Process CPU seconds for one streamed reply: through the API alone, then with the
    terminal attached."""

    def run(with_terminal: bool) -> float:
        with tempfile.TemporaryDirectory() as scratch:
            agent = make_agent(Path(scratch), tokens, rate)
            done = threading.Event()
            agent.subscribe(lambda e: done.set() if isinstance(e, RunSettled) else None)
            used = 0.0
            if not with_terminal:
                start = time.process_time()
                agent.prompt("go")
                used = time.process_time() - start
            else:

                async def main() -> float:
                    with create_pipe_input() as pipe:
                        output = Vt100_Output(
                            io.StringIO(), lambda: Size(rows=40, columns=120), term="xterm"
                        )
                        session = terminal(agent, input=pipe, output=output, sink=lambda text: None)
                        task = asyncio.create_task(session.run_async())
                        while not session.app.is_running:
                            await asyncio.sleep(0.001)
                        start = time.process_time()
                        pipe.send_text("go\r")
                        while not done.is_set():
                            await asyncio.sleep(0.005)
                        spent = time.process_time() - start
                        session.exit()
                        await task
                        return spent

                used = asyncio.run(main())
            agent.close()
            return used

    return run(False), run(True)


def picker_startup(count: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "sessions"
        write_sessions(root, count, large_bytes=100 * 1024 * 1024)
        start = time.perf_counter()
        resume = ResumePicker(root, lambda path: None)
        rows = resume.picker.rows()
        heads = time.perf_counter() - start
        assert len(rows) == count + 1
        # The picker goes on to read the files whole in the background, as Pi's listing
        # does before it shows anything: the listing is timed once it is done.
        resume.join_load()
        start = time.perf_counter()
        listed = SessionManager.list_sessions("/project", root)
        full = time.perf_counter() - start
        assert len(listed) == count + 1
        return heads * 1000, full * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0, help="tokens per second")
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--tokens", type=int, default=2000, help="reply length for CPU")
    parser.add_argument("--sessions", type=int, default=1000)
    args = parse_args(parser, keys=20, tokens=100, sessions=20)
    tune_for_typing()  # as `ctxmodes chat` does

    p99: dict[str, float] = {}
    for label, terminal in (("before", WholeReplyLive), ("now", TerminalSession)):
        keys = measure_keys(args.rate, args.keys, terminal)
        print(
            f"keystroke to screen, {label} ({args.keys} keys, reply streaming at "
            f"{args.rate:.0f} tokens/s):"
        )
        for name in ("idle", "streaming", "with output"):
            samples = keys.get(name)
            if samples is None:
                continue  # the terminal as it was drew no command output
            print(
                f"  {name:<11} p50 {statistics.median(samples):6.2f} ms   "
                f"p99 {percentile(samples, 0.99):6.2f} ms   max {max(samples):6.2f} ms"
            )
        p99[label] = percentile(keys["streaming"], 0.99)
        ratio = p99[label] / percentile(keys["idle"], 0.99)
        print(f"  p99 streaming / idle: {ratio:.2f}")
    print(f"  p99 while streaming, now / before: {p99['now'] / p99['before']:.2f}")

    per_token: dict[str, float] = {}
    for label, terminal in (("before", WholeReplyLive), ("now", TerminalSession)):
        api, attached = cpu_per_token(args.rate, args.tokens, terminal)
        per_token[label] = (attached - api) / args.tokens * 1e6
        print(
            f"CPU for a {args.tokens}-token reply, {label}: API alone {api * 1000:.0f} ms, with "
            f"the terminal {attached * 1000:.0f} ms; rendering ≈ {per_token[label]:.0f} µs per "
            f"token (ratio {attached / api:.2f})"
        )
    print(f"  rendering per token, now / before: {per_token['now'] / per_token['before']:.2f}")

    heads, full = picker_startup(args.sessions)
    print(
        f"resume picker on {args.sessions} sessions + one of 100 MB: {heads:.0f} ms "
        f"(Pi's full listing: {full:.0f} ms, ratio {full / heads:.1f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
