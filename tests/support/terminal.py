"""Driving the interactive session in-process: keys through prompt_toolkit's pipe input, the
screen into a VT100 output over a string, the transcript into a list, a manual clock."""

from __future__ import annotations

import asyncio
import io
import select
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.base import ModelRequest, Provider, StreamEvent
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import Agent
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.tui.app import TerminalSession, plain

WAIT = 10.0

ENTER = "\r"
ALT_ENTER = "\x1b\r"
ALT_UP = "\x1b\x1b[A"
ESC = "\x1b"
TAB = "\t"
CTRL_C = "\x03"
UP = "\x1b[A"
DOWN = "\x1b[B"


class GateTool:
    """Blocks until the test opens the gate (or the run is aborted)."""

    name = "gate"
    label = "Gate"
    description = "Wait for the gate."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        self.entered.set()
        while not self.opened.wait(0.01):
            if context.signal.aborted:
                return ToolResult.error("Operation aborted")
        return ToolResult.text("gate passed")


class GatedStream(Provider):
    """The scripted model, holding each answer (of ``purpose``) after its first
    ``hold_after`` events until the test releases it: a reply is then visibly half streamed,
    a branch summary half made."""

    def __init__(
        self, inner: ScriptedProvider, hold_after: int, purpose: str | None = None
    ) -> None:
        self.inner = inner
        self.hold_after = hold_after
        #: Only requests of this purpose are held (all when ``None``).
        self.purpose = purpose
        self.held = threading.Event()
        self.release = threading.Event()
        #: The abort signal of the request being held.
        self.signal: AbortSignal | None = None

    @property
    def transport(self) -> str:
        return self.inner.transport

    @property
    def info(self) -> Any:
        return self.inner.info

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        events = self.inner.stream(request, signal)
        if self.purpose is not None and request.purpose != self.purpose:
            return events
        self.signal = signal
        return self._held(events)

    def _held(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        for index, event in enumerate(events):
            if index == self.hold_after:
                self.held.set()
                self.release.wait(WAIT)
            yield event


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Terminal:
    """A running :class:`TerminalSession` and what it printed."""

    session: TerminalSession
    send: Callable[[str], None]
    pending: Callable[[], bool]
    screen: io.StringIO
    clock: Clock
    transcript: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    @property
    def agent(self) -> Agent:
        return self.session.agent

    @property
    def editor(self) -> str:
        return self.session.buffer.text

    def text(self) -> str:
        return "\n".join(self.transcript)

    async def until(self, predicate: Callable[[], bool], what: str = "condition") -> None:
        """Let the application run until ``predicate`` holds (fails after ``WAIT``)."""
        deadline = time.monotonic() + WAIT
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; transcript:\n{self.text()}")
            await asyncio.sleep(0.002)

    def flat(self) -> str:
        """The transcript with line wrapping undone (whitespace runs as one space)."""
        return " ".join(self.text().split())

    async def printed(self, text: str) -> None:
        needle = " ".join(text.split())
        await self.until(lambda: needle in self.flat(), f"{text!r} in the transcript")

    async def idle(self) -> None:
        await self.until(lambda: not self.agent.is_busy(), "the agent to be idle")
        await self.until(lambda: self.session.status.activity is None, "the footer to settle")

    async def type(self, keys: str) -> None:
        """Send keys and wait until the application has read them (a lone Esc is then
        handled once its timeout ran out)."""
        self.send(keys)
        await self.until(lambda: not self.pending(), "the keys to be read")
        await asyncio.sleep(0)

    async def escape(self) -> None:
        """Press Esc alone: sent, then waited out as the terminal waits for the rest of an
        Alt key, so that the next key sent is no Alt key (sent sooner, it would be, as in
        Pi)."""
        await self.type(ESC)
        await asyncio.sleep(self.session.app.ttimeoutlen + 0.05)


def run_terminal(agent: Agent, scenario: Callable[[Terminal], Any], **options: Any) -> Terminal:
    """Run ``scenario(terminal)`` against a live application (given ``options`` of
    :class:`TerminalSession`), then quit it."""

    async def main() -> Terminal:
        with create_pipe_input() as pipe:
            screen = io.StringIO()
            output = Vt100_Output(screen, lambda: Size(rows=40, columns=100), term="xterm")
            clock = Clock()
            read_end = pipe.pipe.read_fd  # type: ignore[attr-defined]

            def pending() -> bool:
                return bool(select.select([read_end], [], [], 0)[0])

            terminal = Terminal(None, pipe.send_text, pending, screen, clock)  # type: ignore[arg-type]
            terminal.session = TerminalSession(
                agent,
                input=pipe,
                output=output,
                sink=lambda block: terminal.transcript.append(plain(block)),
                clock=clock,
                **options,
            )
            terminal.task = asyncio.create_task(terminal.session.run_async())
            await terminal.until(lambda: terminal.session.app.is_running, "the application")
            try:
                await scenario(terminal)
            finally:
                terminal.session.exit()
                await asyncio.wait_for(terminal.task, WAIT)
            return terminal

    try:
        return asyncio.run(main())
    finally:
        agent.close()
