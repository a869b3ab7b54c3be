"""``TerminalSession``: the prompt_toolkit application of the interactive session.

Layout, top to bottom, all of it below the scrollback and the only part ever redrawn::

    [the reply streaming now] [queued messages] [editor | picker] [footer]

Events from the agent arrive on its worker thread; they are queued and handled on the
application's event loop in batches (one redraw per batch, however many tokens came).
Finished messages are printed to the scrollback once, in order: the live region is erased,
the block written, the live region drawn again below it.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.key_binding.defaults import load_key_bindings
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.renderer import print_formatted_text as print_to_output
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import SearchToolbar

from ctxmodes.abort import AbortController
from ctxmodes.host.records import HostRecord, ProviderRequested
from ctxmodes.providers.base import ModelRequest
from ctxmodes.sdk import events as ev
from ctxmodes.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    UserMessage,
)
from ctxmodes.tui import render
from ctxmodes.tui.commands import SlashCommand, all_commands, terminal_commands
from ctxmodes.tui.completion import SlashCompleter
from ctxmodes.tui.footer import FooterState, footer_fragments
from ctxmodes.tui.picker import Picker
from ctxmodes.tui.streaming import BlockSplitter

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ctxmodes.sdk import Agent

#: Two presses of Esc (or of Ctrl+C) this close together count as a double press.
DOUBLE_PRESS_SECONDS: Final = 0.5
EXIT_PRESS_SECONDS: Final = 1.0
#: Lines of the streaming reply kept in the live region (the rest is printed when done).
LIVE_LINES: Final = 12
#: The streaming reply is redrawn at most this often (20 frames a second): a frame costs a
#: few milliseconds of prompt_toolkit's time, keys are drawn at once regardless.
STREAM_FRAME_SECONDS: Final = 1 / 20
#: How often the interpreter lets another thread run: the worker streams tokens while the
#: user types, and a key must not wait the default 5 ms for the worker to yield.
SWITCH_INTERVAL_SECONDS: Final = 0.001
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

STYLE = Style.from_dict(
    {
        "live": "",
        "live.dim": "#888888",
        "queue": "#5fafd7",
        "prompt": "bold #5fafd7",
        "footer": "#a8a8a8",
        "footer.dim": "#707070",
        "footer.warn": "#d7af00 bold",
        "footer.alert": "#d70000 bold",
        "footer.unknown": "#a8a8a8 italic",
        "footer.activity": "#5fafd7",
        "picker.title": "bold",
        "picker.query": "#5fafd7",
        "picker.selected": "reverse",
        "picker.hint": "#707070",
        "picker.archived": "#af8700",
        "picker.active": "#5fafd7",
    }
)

Sink = Callable[[str], None]


def tune_for_typing() -> None:
    """Process-wide: let the interface thread take over from the worker sooner (the
    interactive command calls this; an embedding program decides for itself)."""
    import sys

    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


def plain(text: str) -> str:
    """``text`` without ANSI escapes (what a test's transcript sink receives)."""
    return _ANSI_ESCAPE.sub("", text)


class TerminalSession:
    """The interactive session over one :class:`~ctxmodes.sdk.Agent`.

    :param sink: receives each finished transcript block as ANSI text instead of the
        terminal's scrollback (tests).
    :param clock: monotonic seconds, for double presses.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        input: Input | None = None,
        output: Output | None = None,
        history: History | None = None,
        sink: Sink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agent = agent
        self.terminal_commands: dict[str, SlashCommand] = terminal_commands()
        self._sink = sink
        self._clock = clock
        self._events: deque[ev.AgentEvent] = deque()
        self._events_lock = threading.Lock()
        self._drain_scheduled = False
        self._loop: Any = None
        self._loop_thread: int | None = None
        #: When the next retry attempt starts (``clock`` seconds), during a retry wait.
        self._retry_at: float | None = None
        self._last_frame = 0.0
        self._frame_pending = False
        #: Streamed text waits for the next frame's drain (see :meth:`_receive`).
        self._frame_drain_scheduled = False
        self._context: contextvars.Context | None = None
        # What the live region shows.
        #: The reply streaming now (its tail is what the live region shows).
        self.live_text = ""
        #: Where the unfinished block of the streaming reply starts (the blocks before it
        #: are in the scrollback already).
        self._splitter = BlockSplitter()
        self._thinking_printed = False
        #: (reply, width, its tail) of the last frame.
        self._tail_cache: tuple[str, int, str] = ("", -1, "")
        self.live_thinking = 0
        self.running_tool: str | None = None
        self.activity: str | None = None
        self.queued: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.statuses: dict[str, str] = {}
        self.cost = 0.0
        self.last_reply = ""
        self.tool_outputs: list[tuple[str, str]] = []
        self.picker: Picker | None = None
        self.pending_mode_switch: str | None = None
        #: A compaction is in progress: a window it opens is its fresh window.
        self._compacted = False
        #: Stops the ``!`` command running now, if any.
        self.shell_abort: AbortController | None = None
        #: The last turn request sent, for ``/context``.
        self.last_request: ModelRequest | None = None
        self._last_escape = -1.0
        self._last_interrupt = -1.0
        #: The prompt that started the run now going, until the run shows any output: Esc
        #: meanwhile puts it back in the editor (nothing was answered, nothing is lost).
        self._unanswered_prompt: str | None = None
        self._run_fresh = False
        self._footer: StyleAndTextTuples = []
        self.buffer = Buffer(
            multiline=True,
            history=history if history is not None else InMemoryHistory(),
            completer=SlashCompleter(lambda: all_commands(self), self._argument_values),
            complete_while_typing=True,
        )
        agent.attach_editor(lambda: self.buffer.text, self._set_editor_text_soon)
        self._refresh_footer(recount=True)
        agent.subscribe(self._receive)
        agent.subscribe_records(self._record)
        self.app: Application[None] = self._application(input, output)

    # ================================================================ running

    def run(self) -> None:
        """Run until the user quits (blocks the calling thread)."""
        try:
            self.app.run(pre_run=self._started)
        finally:
            self._stopped()

    async def run_async(self) -> None:
        try:
            await self.app.run_async(pre_run=self._started)
        finally:
            self._stopped()

    def _stopped(self) -> None:
        with self._events_lock:
            self._loop = None

    def _started(self) -> None:
        import asyncio
        import contextvars

        # Callbacks scheduled from the worker run in the application's context, where
        # prompt_toolkit finds the running application.
        self._context = contextvars.copy_context()
        self._loop_thread = threading.get_ident()
        self._loop = asyncio.get_running_loop()
        self.print_blocks([self._banner()])
        self._schedule_drain()

    def _banner(self) -> str:
        manager = self.agent.session_manager
        where = manager.session_file or "in memory"
        return render.styled(
            f"ctxmodes · mode {self.agent.mode} · session {where}\n"
            "Enter sends (steers while working) · Alt+Enter follows up · Esc stops · "
            "Esc Esc tree · / commands · Ctrl+C twice quits",
            "dim",
            self.width,
        )

    def exit(self) -> None:
        if self.app.is_running:
            self.app.exit()

    # ================================================================ events

    def _receive(self, event: ev.AgentEvent) -> None:
        """Any thread: queue ``event`` for the event loop. A piece of streamed text waits for
        the next frame, with the pieces after it (the loop wakes once a frame, not once a
        token); anything else is handled at once, with the text before it."""
        with self._events_lock:
            self._events.append(event)
        self._schedule_drain(urgent=not isinstance(event, ev.TextDeltaEvent))

    def _record(self, record: HostRecord) -> None:
        if isinstance(record, ProviderRequested) and record.request.purpose == "turn":
            self.last_request = record.request

    def _schedule_drain(self, *, urgent: bool = True) -> None:
        with self._events_lock:
            if self._drain_scheduled or self._loop is None:
                return
            if urgent:
                self._drain_scheduled = True
                job = self._drain
            elif self._frame_drain_scheduled:
                return
            else:
                self._frame_drain_scheduled = True
                job = self._drain_at_next_frame
            loop = self._loop
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing is drawn any more
            loop.call_soon_threadsafe(job, context=self._context)

    def _drain_at_next_frame(self) -> None:
        loop = self._loop
        if loop is None:
            return
        loop.call_later(
            max(0.0, self._last_frame + STREAM_FRAME_SECONDS - loop.time()), self._drain
        )

    def _drain(self) -> None:
        with self._events_lock:
            batch = list(self._events)
            self._events.clear()
            self._drain_scheduled = self._frame_drain_scheduled = False
        blocks: list[str] = []
        for event in batch:
            self._handle(event, blocks)
        if blocks:
            self.print_blocks(blocks)
        self._redraw_soon()

    def _redraw_soon(self) -> None:
        """Redraw for what the agent did, at most once per :data:`STREAM_FRAME_SECONDS`
        (keys redraw at once: prompt_toolkit invalidates on each of them)."""
        loop = self._loop
        if loop is None:
            self.app.invalidate()
            return
        wait = self._last_frame + STREAM_FRAME_SECONDS - loop.time()
        if wait <= 0:
            self._last_frame = loop.time()
            self.app.invalidate()
        elif not self._frame_pending:
            self._frame_pending = True
            loop.call_later(wait, self._deferred_frame)

    def _deferred_frame(self) -> None:
        self._frame_pending = False
        self._redraw_soon()

    def print_blocks(self, blocks: list[str]) -> None:
        """Write finished blocks to the scrollback (or the sink), in order, once."""
        text = "\n".join(blocks)
        if self._sink is not None:
            self._sink(text)
            return
        output = self.app.output

        def write() -> None:
            # Straight to the output: the shortcut ``print_formatted_text`` would schedule its
            # own ``run_in_terminal`` and print after the live region was redrawn.
            print_to_output(output, ANSI(text + "\n"), STYLE)
            output.flush()

        if not self.app.is_running:
            write()
            return
        # As run_in_terminal does, but without putting the terminal in cooked mode: a key
        # pressed while a long block prints must still arrive as that key (Enter, not the
        # newline the terminal would turn it into).
        renderer = self.app.renderer
        renderer.erase()
        write()
        renderer.reset()
        renderer.request_absolute_cursor_position()
        self.app.invalidate()

    def notify(self, message: str, level: str = "info") -> None:
        """Print a notice now (UI thread)."""
        self.print_blocks([render.notice(message, level, self.width)])  # type: ignore[arg-type]

    @property
    def width(self) -> int:
        try:
            return self.app.output.get_size().columns
        except Exception:
            return 80

    def _handle(self, event: ev.AgentEvent, blocks: list[str]) -> None:
        width = self.width
        if isinstance(event, (ev.TextDeltaEvent, ev.ToolStarted)):
            self._unanswered_prompt = None
        if isinstance(event, ev.TextDeltaEvent):
            if event.thinking:
                self.live_thinking += len(event.text)
            else:
                self.live_text += event.text
                for block in self._splitter.finished(self.live_text):
                    blocks.append(self._finished_block(block, width))
        elif isinstance(event, ev.AssistantStarted):
            self._reset_live()
            self._run_fresh = False
        elif isinstance(event, ev.MessageFinished):
            self._finished(event, blocks, width)
        elif isinstance(event, ev.ToolStarted):
            self.running_tool = event.name
            blocks.append(render.tool_call(event.name, event.arguments, width))
        elif isinstance(event, ev.ToolFinished):
            self.running_tool = None
            self.tool_outputs.append((event.name, event.text))
            del self.tool_outputs[:-8]
            blocks.append(render.tool_result(event.name, event.text, event.is_error, width))
        elif isinstance(event, ev.ModelError):
            blocks.append(render.model_error(event.message, event.aborted, width))
        elif isinstance(event, ev.UsageReported):
            self.cost += event.cost
            self._refresh_footer()
        elif isinstance(event, ev.WindowOpened):
            if event.number > 0:
                blocks.append(render.window_line(event.number, self._compacted, width))
            self.activity = "working" if self.agent.is_streaming() else None
            self._refresh_footer()
        elif isinstance(event, ev.QueueChanged):
            self.queued = (event.steering, event.follow_up)
        else:
            self._lifecycle(event, blocks, width)

    def _lifecycle(self, event: ev.AgentEvent, blocks: list[str], width: int) -> None:
        if isinstance(event, ev.RunStarted):
            self.activity = "working"
            self._run_fresh = True
        elif isinstance(event, ev.RunSettled):
            self.activity = None
            self._unanswered_prompt, self._run_fresh = None, False
            self._reset_live()
            self.running_tool = None
            self._refresh_footer()
        elif isinstance(event, ev.SummaryStarted):
            self.activity = "summarizing the previous window (Esc cancels)"
        elif isinstance(event, ev.CompactionStarted):
            self.activity = "compacting (Esc cancels)"
            self._compacted = True
        elif isinstance(event, ev.CompactionFinished):
            self.activity = None
            self._compacted = False
            if event.entry is not None:
                blocks.append(render.compaction_line(event.entry, width))
            elif event.error and event.trigger != "manual":
                # A manual compaction's failure is the /compact command's to report.
                blocks.append(render.notice(event.error, "error", width))
            self._refresh_footer()
        elif isinstance(event, ev.Navigated):
            self._refresh_footer()
        elif isinstance(event, ev.SessionChanged):
            self.tool_outputs.clear()
            self._refresh_footer(recount=True)
        elif isinstance(event, ev.Notice):
            blocks.append(render.notice(event.message, event.level, width))
            # Commands answer with a notice: a new name or mode shows in the footer at once.
            self._refresh_footer()
        elif isinstance(event, ev.RetryScheduled):
            blocks.append(
                render.notice(
                    f"{event.error} — retry {event.attempt}/{event.max_attempts}",
                    "warning",
                    width,
                )
            )
            self._retry_at = self._clock() + event.delay_ms / 1000
            self._tick_retry()
        elif isinstance(event, ev.TransportRetryScheduled):
            blocks.append(
                render.notice(
                    f"{event.error} — resending in {event.delay_ms / 1000:g}s "
                    f"({event.attempt}/{event.max_attempts})",
                    "warning",
                    width,
                )
            )
        elif isinstance(event, ev.RetryEnded):
            self._retry_at = None
            self.activity = "working" if self.agent.is_streaming() else None
            if not event.success and event.error:
                blocks.append(render.notice(event.error, "error", width))
        elif isinstance(event, ev.StatusChanged):
            if event.text is None:
                self.statuses.pop(event.key, None)
            else:
                self.statuses[event.key] = event.text

    def _finished(self, event: ev.MessageFinished, blocks: list[str], width: int) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            text = ev.message_text(message)
            if self._run_fresh:
                # The run's first message is its prompt; later ones were steered in.
                self._unanswered_prompt, self._run_fresh = text, False
            blocks.append(render.user_prompt(text, width))
        elif isinstance(message, AssistantMessage):
            text = ev.message_text(message)
            reply = self._rest_of_reply(message, width)
            self._reset_live()
            if reply is not None:
                blocks.append(reply)
            if text.strip():
                self.last_reply = text
        elif isinstance(message, BashExecutionMessage):
            self.tool_outputs.append(("$ " + message.command, message.output))
            blocks.append(render.shell_command(message, width))
        elif (
            isinstance(message, CustomMessage)
            and message.display
            and ev.window_number(message) is None
        ):
            text = render.one_line(ev.message_text(message))
            blocks.append(render.notice(f"[{message.custom_type}] {text}", "info", width))

    def _reset_live(self) -> None:
        self.live_text, self.live_thinking = "", 0
        self._splitter = BlockSplitter()
        self._thinking_printed = False

    def _finished_block(self, block: str, width: int) -> str:
        """A block of the streaming reply, for the scrollback (the thinking line first)."""
        parts = []
        if self.live_thinking and not self._thinking_printed:
            parts.append(render.thinking_line(self.live_thinking, width))
        self._thinking_printed = True
        parts.append(render.markdown(block, width) + "\n")
        return "\n".join(parts)

    def _rest_of_reply(self, message: AssistantMessage, width: int) -> str | None:
        """What the scrollback still lacks of a finished reply: all of it, or, when blocks
        of it were printed as they streamed, what streamed after them. The streamed text is
        what was printed, so the rest is taken from it: a reply of several text parts joins
        them differently from its deltas, and must not be printed a second time."""
        streamed = self._splitter.block_start
        if not streamed:
            return render.assistant_reply(message, width)
        rest = self.live_text[streamed:]
        return render.markdown(rest, width) if rest.strip() else None

    def _refresh_footer(self, *, recount: bool = False) -> None:
        agent = self.agent
        session = agent.session
        if recount:
            self.cost = _session_cost(agent)
        model = session.model
        self._footer = footer_fragments(
            FooterState(
                cwd=session.cwd,
                session_name=agent.session_manager.get_session_name(),
                model=None if model is None else f"{model.provider}/{model.id}",
                mode=agent.mode,
                thinking=agent.thinking_level,
                context=agent.context_state(),
                cost=self.cost,
                activity=self.activity,
                statuses=self.statuses,
            )
        )

    def _tick_retry(self) -> None:
        """The countdown to the next attempt, once a second in the footer."""
        if self._retry_at is None:
            return
        left = self._retry_at - self._clock()
        if left <= 0:
            self.activity = "retrying"
            return
        self.activity = f"retrying in {math.ceil(left)}s (Esc cancels)"
        self.app.invalidate()
        if self._loop is not None:
            self._loop.call_later(min(1.0, left), self._tick_retry, context=self._context)

    def _set_editor_text_soon(self, text: str) -> None:
        """The host puts text in the editor (from any thread)."""
        self.call_soon(lambda: self.set_editor_text(text))

    def call_soon(self, job: Callable[[], None]) -> None:
        """Any thread: run ``job`` on the UI thread (now, when called there)."""
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            job()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing is drawn any more
            loop.call_soon_threadsafe(job, context=self._context)

    def set_editor_text(self, text: str) -> None:
        self.buffer.set_document(Document(text, len(text)), bypass_readonly=True)
        self.app.invalidate()

    def restore_to_editor(self, texts: list[str]) -> None:
        """Put ``texts`` back in the editor, before what is being typed."""
        if not texts:
            return
        current = self.buffer.text
        self.set_editor_text("\n".join([*texts, current] if current else texts))

    # ================================================================ input

    def busy(self) -> bool:
        return self.agent.is_busy()

    def submit(self, streaming_behavior: str = "steer") -> None:
        """Enter (``steer``) or Alt+Enter (``follow_up``)."""
        text = self.buffer.text
        if not text.strip():
            return
        if text.startswith("/") and self._run_slash(text):
            return
        if text.startswith("!") and text.lstrip("!").strip():
            self._run_shell(text)
            return
        self.buffer.append_to_history()
        self.buffer.reset()
        self.agent.submit(
            text, streaming_behavior="follow_up" if streaming_behavior == "follow_up" else "steer"
        )

    def _run_shell(self, text: str) -> None:
        from ctxmodes.tui.actions import shell

        if self.busy() or self.shell_abort is not None:
            self.notify("! commands wait until the agent is idle (Esc stops it)", "warning")
            return
        exclude = text.startswith("!!")
        self.buffer.append_to_history()
        self.buffer.reset()
        shell(self, text[2 if exclude else 1 :].strip(), exclude=exclude)

    def _run_slash(self, text: str) -> bool:
        """Dispatch a slash command; False when ``text`` names none (it is then a prompt)."""
        name, _, args = text[1:].partition(" ")
        command = all_commands(self).get(name)
        if command is None:
            return False
        if self.busy() and not command.while_streaming:
            # Refused, and the text stays in the editor to run later.
            self.notify(f"/{name} waits until the agent is idle (Esc stops it)", "warning")
            return True
        self.buffer.append_to_history()
        self.buffer.reset()
        if command.handler is None:
            self.agent.submit(text)
        else:
            command.handler(self, args.strip())
        return True

    def interrupt(self) -> None:
        """Esc: abort what runs, putting queued text back in the editor (and the prompt
        too, if nothing of its answer has shown yet); twice while idle: the tree navigator."""
        now = self._clock()
        double = now - self._last_escape <= DOUBLE_PRESS_SECONDS
        self._last_escape = now
        running_shell = self.shell_abort
        if running_shell is not None:
            running_shell.abort()
            return
        if self.busy():
            queued = self.agent.abort()
            prompt, self._unanswered_prompt = self._unanswered_prompt, None
            self.restore_to_editor([prompt, *queued] if prompt is not None else queued)
            self._last_escape = -1.0
            return
        if double:
            self._last_escape = -1.0
            from ctxmodes.tui.navigator import open_tree

            open_tree(self, "")

    def take_back_queue(self) -> None:
        """Alt+Up: the queued messages back into the editor; nothing is sent."""
        steering, follow_up = self.agent.take_queued()
        self.restore_to_editor(steering + follow_up)

    def clear_or_exit(self) -> None:
        """Ctrl+C: clear the editor (kept in history); twice: leave."""
        now = self._clock()
        if now - self._last_interrupt <= EXIT_PRESS_SECONDS:
            self.exit()
            return
        self._last_interrupt = now
        if self.buffer.text:
            self.buffer.append_to_history()
            self.buffer.reset()
        else:
            self.notify("Press Ctrl+C again to exit")

    def show_tool_outputs(self) -> None:
        """Ctrl+O: the full output of the last tool call."""
        if not self.tool_outputs:
            self.notify("No tool output yet")
            return
        name, text = self.tool_outputs[-1]
        self.print_blocks([render.full_output(name, text, self.width)])

    def wake(self) -> None:
        """Any thread: redraw soon (something the live region shows changed)."""
        self.app.invalidate()  # thread-safe: it schedules the redraw on the loop

    def open_picker(self, picker: Picker) -> None:
        self.picker = picker
        self.app.invalidate()

    def close_picker(self) -> None:
        self.picker = None
        if self.app.is_running:
            self.app.layout.focus(self.buffer)
        self.app.invalidate()

    def _argument_values(self, name: str) -> list[str]:
        if name == "mode":
            return self.agent.host.mode_names()
        if name == "model":
            return self.agent.model_refs()
        if name == "thinking":
            from ctxmodes.providers.catalog import THINKING_LEVELS

            return list(THINKING_LEVELS)
        return []

    # ================================================================ layout

    def _live_fragments(self) -> StyleAndTextTuples:
        parts: StyleAndTextTuples = []
        if self.live_thinking:
            parts.append(("class:live.dim", f"▸ thinking… ({self.live_thinking} characters)\n"))
        if self.live_text:
            parts.append(("class:live", self._live_tail() + "\n"))
        if self.running_tool:
            parts.append(("class:live.dim", f"⋯ running {self.running_tool}\n"))
        return parts

    def _live_tail(self) -> str:
        """The streaming reply's last :data:`LIVE_LINES` screen rows. Only they are drawn:
        the cost of a frame must not grow with the reply, nor with its lines' length. Kept
        for the next frame while the reply (the same string object) and the width stay:
        keys redraw far more often than the text changes."""
        text, width = self.live_text, self.width
        cached_text, cached_width, tail = self._tail_cache
        if cached_text is not text or cached_width != width:
            unfinished = text[self._splitter.block_start :]
            tail = render.live_tail(unfinished, width, LIVE_LINES)
            self._tail_cache = (text, width, tail)
        return tail

    def _queue_fragments(self) -> StyleAndTextTuples:
        steering, follow_up = self.queued
        parts: StyleAndTextTuples = []
        for text in steering:
            parts.append(("class:queue", f"↳ steer: {render.one_line(text, 200)}\n"))
        for text in follow_up:
            parts.append(("class:queue", f"↳ follow-up: {render.one_line(text, 200)}\n"))
        if parts:
            parts.append(
                ("class:footer.dim", "  Alt+Up takes them back · Esc stops and keeps them\n")
            )
        return parts

    def _footer_fragments(self) -> StyleAndTextTuples:
        if not self.activity:
            return self._footer
        # The activity changes often; everything else only on the events that refresh it.
        return [*self._footer, ("class:footer.activity", f" • {self.activity}")]

    def _application(self, input: Input | None, output: Output | None) -> Application[None]:
        search = SearchToolbar()
        editor = Window(
            BufferControl(self.buffer, search_buffer_control=search.control),
            height=Dimension(min=1, max=12),
            wrap_lines=True,
            dont_extend_height=True,
            get_line_prefix=lambda line, wrap: [
                ("class:prompt", "\u203a " if line == 0 and not wrap else "  ")
            ],
        )
        picking = Condition(lambda: self.picker is not None)
        body = HSplit(
            [
                ConditionalContainer(
                    Window(
                        FormattedTextControl(self._live_fragments),
                        wrap_lines=True,
                        dont_extend_height=True,
                    ),
                    filter=Condition(
                        lambda: bool(self.live_text or self.live_thinking or self.running_tool)
                    ),
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._queue_fragments), dont_extend_height=True),
                    filter=Condition(lambda: bool(self.queued[0] or self.queued[1])),
                ),
                ConditionalContainer(editor, filter=~picking),
                ConditionalContainer(search, filter=~picking),
                ConditionalContainer(
                    Window(
                        FormattedTextControl(
                            lambda: self.picker.fragments() if self.picker else [], focusable=True
                        ),
                        dont_extend_height=True,
                        wrap_lines=False,
                    ),
                    filter=picking,
                ),
                Window(
                    FormattedTextControl(self._footer_fragments), height=2, dont_extend_height=True
                ),
            ]
        )
        root = FloatContainer(
            body,
            floats=[
                Float(
                    xcursor=True,
                    ycursor=True,
                    content=CompletionsMenu(max_height=10, scroll_offset=1),
                )
            ],
        )
        app: Application[None] = Application(
            layout=Layout(root, focused_element=editor),
            key_bindings=merge_key_bindings([load_key_bindings(), self._bindings(picking)]),
            style=STYLE,
            full_screen=False,
            erase_when_done=False,
            input=input,
            output=output,
        )
        # Keys redraw at once; the agent's events are throttled by _redraw_soon instead.
        app.max_render_postpone_time = None
        # Esc is a key of its own here: do not wait long for it to start an Alt sequence.
        app.ttimeoutlen = 0.05
        app.timeoutlen = 0.15
        return app

    def _bindings(self, picking: Condition) -> KeyBindings:
        keys = KeyBindings()
        # While Ctrl+R searches, Enter and Esc belong to the search (accept, cancel).
        editing = ~picking & ~is_searching

        @keys.add("enter", filter=editing)
        def _(event: KeyPressEvent) -> None:
            state = self.buffer.complete_state
            if state is not None and state.completions:
                # Enter takes the highlighted (or first) completion; the next Enter submits.
                chosen = state.current_completion or state.completions[0]
                if chosen.text != self.buffer.document.text_before_cursor:
                    self.buffer.apply_completion(chosen)
                    return
                self.buffer.cancel_completion()
            self.submit("steer")

        @keys.add("escape", "enter", filter=editing)
        def _(event: KeyPressEvent) -> None:
            self.submit("follow_up")

        @keys.add("c-j", filter=editing)
        def _(event: KeyPressEvent) -> None:
            self.buffer.insert_text("\n")

        @keys.add("escape", filter=editing)
        def _(event: KeyPressEvent) -> None:
            if self.buffer.complete_state is not None:
                self.buffer.cancel_completion()
                return
            self.interrupt()

        @keys.add("escape", "up", filter=editing)
        def _(event: KeyPressEvent) -> None:
            self.take_back_queue()

        @keys.add("c-c")
        def _(event: KeyPressEvent) -> None:
            if self.picker is not None:
                self._cancel_picker()
                return
            self.clear_or_exit()

        @keys.add("c-d", filter=editing)
        def _(event: KeyPressEvent) -> None:
            if not self.buffer.text:
                self.exit()
            else:
                self.buffer.delete()

        @keys.add("c-g", filter=editing)
        def _(event: KeyPressEvent) -> None:
            self.buffer.open_in_editor()

        @keys.add("c-o", filter=editing)
        def _(event: KeyPressEvent) -> None:
            self.show_tool_outputs()

        @keys.add("tab", filter=editing)
        def _(event: KeyPressEvent) -> None:
            if self.buffer.complete_state is not None:
                self.buffer.complete_next()
            else:
                self.buffer.start_completion(select_first=True)

        self._picker_bindings(keys, picking)
        return keys

    def _cancel_picker(self) -> None:
        picker = self.picker
        self.close_picker()
        if picker is not None:
            picker.on_cancel()

    def _picker_bindings(self, keys: KeyBindings, picking: Condition) -> None:
        def current() -> Picker:
            assert self.picker is not None
            return self.picker

        @keys.add("up", filter=picking)
        def _(event: KeyPressEvent) -> None:
            current().move(-1)

        @keys.add("down", filter=picking)
        def _(event: KeyPressEvent) -> None:
            current().move(1)

        @keys.add("pageup", filter=picking)
        def _(event: KeyPressEvent) -> None:
            current().move(-10)

        @keys.add("pagedown", filter=picking)
        def _(event: KeyPressEvent) -> None:
            current().move(10)

        @keys.add("enter", filter=picking)
        def _(event: KeyPressEvent) -> None:
            picker = current()
            self.close_picker()
            picker.pick()

        @keys.add("escape", filter=picking, eager=True)
        def _(event: KeyPressEvent) -> None:
            self._cancel_picker()

        @keys.add("c-o", filter=picking)
        def _(event: KeyPressEvent) -> None:
            picker = current()
            if picker.on_cycle is not None:
                picker.on_cycle()

        @keys.add("backspace", filter=picking)
        def _(event: KeyPressEvent) -> None:
            current().backspace()

        for key, action in (("c-left", "fold"), ("c-right", "unfold")):

            @keys.add(key, filter=picking)
            def _(event: KeyPressEvent, action: str = action) -> None:
                run = current().actions.get(action)
                if run is not None:
                    run()

        @keys.add("<any>", filter=picking)
        def _(event: KeyPressEvent) -> None:
            data = event.key_sequence[-1].data
            picker = current()
            if data == "L" and "label" in picker.actions:
                picker.actions["label"]()
            elif data.isprintable():
                picker.type(data)


def _session_cost(agent: Agent) -> float:
    """The cost of the replies in the current context, when a session starts or changes
    branch (its messages are decoded already; the file is not read again)."""
    return sum(
        float(message.usage.cost.total)
        for message in agent.session.messages
        if isinstance(message, AssistantMessage)
    )


__all__ = ["TerminalSession", "plain", "tune_for_typing"]
