"""``TerminalSession``: the interactive session over one agent, drawn with prompt_toolkit.

Layout, top to bottom, all of it below the scrollback and the only part ever redrawn::

    [the reply streaming now] [queued messages] [editor | picker] [footer]

Events from the agent arrive on its worker thread; they are queued and handled on the
application's event loop in batches (one redraw per batch, however many tokens came).
Finished messages are printed to the scrollback once, in order: the live region is erased,
the block written, the live region drawn again below it.

The session's parts, each in a module of its own: what the live region shows
(:mod:`~ctxmodes.tui.live`), the footer (:mod:`~ctxmodes.tui.status`), the agent's events as
the transcript shows them (:mod:`~ctxmodes.tui.transcript`), the keys
(:mod:`~ctxmodes.tui.keys`), the typed commands (:mod:`~ctxmodes.tui.commands`) and the
application's layout (:mod:`~ctxmodes.tui.layout`). This module runs them: the event pump, the
scrollback, the editor's text and the picker.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from prompt_toolkit.application import Application
from prompt_toolkit.completion import merge_completers
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.renderer import print_formatted_text as print_to_output
from prompt_toolkit.widgets import SearchToolbar

from ctxmodes.abort import AbortController
from ctxmodes.config import TerminalSettings
from ctxmodes.sdk import events as ev
from ctxmodes.sdk.model_cycling import model_cycler
from ctxmodes.tui import render
from ctxmodes.tui.commands import SlashCommand, completion_commands, terminal_commands
from ctxmodes.tui.completion import SlashCompleter
from ctxmodes.tui.cycling import scope_line
from ctxmodes.tui.draft import DraftBuffer
from ctxmodes.tui.editor_edits import EditorEdits
from ctxmodes.tui.editor_rows import WrappedBufferControl
from ctxmodes.tui.file_completion import FileCompleter
from ctxmodes.tui.git_branch import CHECK_INTERVAL_S
from ctxmodes.tui.keymap import KeyMap, keybindings_path
from ctxmodes.tui.keys import KeyActions
from ctxmodes.tui.layout import (
    EDITOR_KEY_WAIT,
    PICKER_KEY_WAIT,
    PROMPT_CELLS,
    STYLE,
    build_application,
    editor_rows,
    picker_window,
)
from ctxmodes.tui.live import LiveRegion
from ctxmodes.tui.paste_markers import PasteMarkers
from ctxmodes.tui.picker import Picker
from ctxmodes.tui.redraw import redraw_soon
from ctxmodes.tui.saved_defaults import SavedDefaults
from ctxmodes.tui.status import FooterStatus
from ctxmodes.tui.transcript import Transcript

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from ctxmodes.config_reload import ReloadableSettings
    from ctxmodes.resources.trust import TrustResolver
    from ctxmodes.sdk import Agent
    from ctxmodes.session.models import ImageContent

#: The streaming reply is redrawn at most this often (20 frames a second): a frame costs a
#: few milliseconds of prompt_toolkit's time, keys are drawn at once regardless.
STREAM_FRAME_SECONDS: Final = 1 / 20
#: How often the interpreter lets another thread run: the worker streams tokens while the
#: user types, and a key must not wait the default 5 ms for the worker to yield.
SWITCH_INTERVAL_SECONDS: Final = 0.001
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

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
    :param clock: monotonic seconds, for double presses and the retry countdown.
    :param settings: the ``[terminal]`` settings: how many turns are replayed, the skill
        commands, the filter ``/tree`` opens with, what Esc Esc opens, the external editor.
    :param keymap: which keys run which action (default: Pi's, with the user's
        ``keybindings.json`` over them).
    :param initial_prompts: sent once the session shows, each after the reply to the one
        before (the command line's messages).
    :param initial_images: attached to the first of ``initial_prompts`` (the command line's
        ``@FILE`` images).
    :param model_patterns: the models Ctrl+P cycles through (``--models``, Pi's
        ``enabledModels``); none: every model with credentials.
    :param startup_warnings: shown under the start-up header, with the session's other
        warnings (the command line's, such as a session's model that could not be used).
    :param reloadable: the run's configuration and how to read it again, for ``/reload``
        (its ``[terminal]`` table stands in for ``settings`` when that is not given);
        without it ``/reload`` leaves the settings as they are.
    :param verbose: Pi's ``--verbose``: the start-up header expanded, as Pi's is.
    :param defaults: the model, scope and thinking level a start without ``--model``,
        ``--models`` and ``--thinking`` takes (the pickers mark the defaults); none
        configured when not given.
    :param read_defaults: reads ``defaults`` again from the configuration of a working
        directory, for ``/reload`` and a session of another project.
    :param trust: the run's project trust decisions: the project of a session taken up
        during the run (``/resume``, ``/import``) is decided before it opens (asked about
        when the decisions ask, :mod:`~ctxmodes.tui.trust_question`).
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
        settings: TerminalSettings | None = None,
        keymap: KeyMap | None = None,
        initial_prompts: Sequence[str] = (),
        initial_images: Sequence[ImageContent] = (),
        model_patterns: Sequence[str] = (),
        startup_warnings: Sequence[str] = (),
        reloadable: ReloadableSettings | None = None,
        verbose: bool = False,
        defaults: SavedDefaults | None = None,
        read_defaults: Callable[[Path], SavedDefaults] | None = None,
        trust: TrustResolver | None = None,
    ) -> None:
        self.agent = agent
        self.trust = trust
        self.defaults = defaults if defaults is not None else SavedDefaults()
        self.read_defaults = read_defaults
        #: Pi's ``--verbose``: the start-up header is printed expanded.
        self.verbose = verbose
        self.reloadable = reloadable
        if settings is None and reloadable is not None:
            settings = reloadable.settings.terminal
        if reloadable is not None:
            from ctxmodes.tui.project_settings import follow_project

            agent.host.before_replacement = functools.partial(follow_project, self)
        self._startup_warnings = list(startup_warnings)
        self._initial_prompts = list(initial_prompts)
        self._initial_images = tuple(initial_images)
        self.settings = settings if settings is not None else TerminalSettings()
        self.keymap = keymap if keymap is not None else KeyMap.load(keybindings_path())
        #: The configured scope's patterns, which ``/scoped-models`` opens with when the
        #: running scope is empty.
        self.model_patterns = tuple(model_patterns)
        self.cycler, self._scope_warnings = model_cycler(agent, model_patterns)
        #: Whether ``/scoped-models`` changed the scope this run: it then stands over the
        #: patterns of the settings read for a new session.
        self.scope_chosen = False
        self.terminal_commands: dict[str, SlashCommand] = terminal_commands()
        self._sink = sink
        self._events: deque[ev.AgentEvent] = deque()
        self._events_lock = threading.Lock()
        self._drain_scheduled = False
        self._loop: Any = None
        #: The signals whose handlers the running loop holds for this session.
        self._ending_signals: list[int] = []
        self._loop_thread: int | None = None
        self._last_frame = 0.0
        self._frame_pending = False
        #: Streamed text waits for the next frame's drain (see :meth:`_receive`).
        self._frame_drain_scheduled = False
        self._context: contextvars.Context | None = None
        self._tool_ticking = False
        self.live = self._live_region()
        self.live.show_thinking = not self.settings.hide_thinking
        self.status = FooterStatus(agent, clock, lambda: self.keymap)
        self.transcript = Transcript(
            agent,
            self.live,
            self.status,
            self._tick_retry,
            lambda: self.keymap,
            self.settings.replay_turns,
            self.settings.cache_miss_notices,
            self.settings.anthropic_extra_usage_warning,
        )
        self.keys = KeyActions(self, clock)
        self.picker: Picker | None = None
        #: Stops the ``!`` command running now, if any.
        self.shell_abort: AbortController | None = None
        #: The large pastes the draft holds as markers (Pi's ``[paste #1 +60 lines]``).
        self.pastes = PasteMarkers()
        self.buffer = DraftBuffer(
            self.settings.external_editor,
            self.pastes,
            multiline=True,
            history=history if history is not None else InMemoryHistory(),
            completer=merge_completers(
                [
                    SlashCompleter(lambda: completion_commands(self), self._argument_values),
                    FileCompleter(lambda: Path(self.agent.session.cwd)),
                ]
            ),
            complete_while_typing=True,
        )
        #: Ctrl+R's search of the prompts sent before.
        self.search_toolbar = SearchToolbar()
        #: What the editor's window shows: the draft, wrapped as Pi's editor wraps it.
        self.editor_control = WrappedBufferControl(
            self.buffer,
            reserved=PROMPT_CELLS,
            markers=self.pastes.numbers,
            search_buffer_control=self.search_toolbar.control,
            # Ctrl+R shows the prompt found at each key typed, as readline does.
            preview_search=True,
        )
        #: Pi's moves and deletes on the draft, and their kill ring.
        self.editor_edits = EditorEdits(
            self.buffer,
            self.pastes,
            line_rows=self.editor_control.line_rows,
            page_rows=lambda: editor_rows(self.height),
        )
        agent.attach_editor(
            lambda: self.pastes.expanded(self.buffer.text), self._set_editor_text_soon
        )
        self.status.refresh()
        agent.subscribe(self._receive)
        self.picker_window = picker_window(self)
        self.app: Application[None] = build_application(self, input, output)

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
        loop = self._loop
        if loop is not None and not loop.is_closed():
            for signum in self._ending_signals:
                loop.remove_signal_handler(signum)
        self._ending_signals = []
        with self._events_lock:
            self._loop = None

    def _end_on_termination_signals(self) -> None:
        """``SIGTERM`` and ``SIGHUP`` (``kill``, the terminal's window closed) end the
        session as ``/quit`` does, as Pi's terminal ends on them: the run under way is
        aborted and recorded, the session closed with its shell and the commands it
        started, the terminal given back as it was. Their default would have killed the
        process, leaving the terminal without echo and a tool's commands running."""
        from ctxmodes.host.interrupt import termination_signals_left_default

        assert self._loop is not None
        for signum in termination_signals_left_default():
            try:
                self._loop.add_signal_handler(signum, self.exit)
            except (RuntimeError, ValueError, NotImplementedError):
                return  # not the main thread's loop: the program keeps its signals
            self._ending_signals.append(signum)

    def _started(self) -> None:
        import asyncio
        import contextvars

        # Callbacks scheduled from the worker run in the application's context, where
        # prompt_toolkit finds the running application.
        self._context = contextvars.copy_context()
        self._loop_thread = threading.get_ident()
        self._loop = asyncio.get_running_loop()
        self._end_on_termination_signals()
        # A session opened from its file shows where it stands; a new one has nothing yet.
        manager = self.agent.session_manager
        opened = self.transcript.replay(self.width) if manager.is_written() else []
        problems = [
            *self.command_conflicts(),
            *(
                render.notice(problem, "warning", self.width)
                for problem in (
                    *self.keymap.problems,
                    *self._scope_warnings,
                    *self._startup_warnings,
                )
            ),
        ]
        scope = scope_line(self.cycler, self.keymap.display("app.model.cycleForward"))
        if scope is not None and not self.settings.quiet_startup:
            problems.append(render.notice(scope, "info", self.width))
        if self.agent.session.model is None:
            from ctxmodes.tui.commands import NO_MODEL_AT_START

            problems.append(render.notice(NO_MODEL_AT_START, "warning", self.width))
        problems.extend(self.transcript.extra_usage_warning(self.width))
        self.print_blocks([*self._banner(), *problems, *opened])
        self._schedule_drain()
        self._loop.call_later(CHECK_INTERVAL_S, self._watch_branch, context=self._context)
        if self._initial_prompts:
            from ctxmodes.tui.commands import submit_in_turn

            submit_in_turn(self, self._initial_prompts, self._initial_images)

    def _banner(self) -> list[str]:
        """The start-up header and what was loaded, expanded with ``verbose`` as Pi's is;
        with ``quiet_startup`` (Pi's ``quietStartup``) only the resources' warnings and what
        was left out for want of trust, as Pi still shows its diagnostics."""
        from ctxmodes.resources.summary import loaded_text

        session = self.agent.session
        quiet = self.settings.quiet_startup
        loaded = loaded_text(session.resources, session.cwd, quiet=quiet)
        if quiet:
            return [render.styled(loaded.lstrip("\n"), "dim", self.width)] if loaded else []
        return [self.startup_header(expanded=self.verbose)]

    def startup_header(self, *, expanded: bool) -> str:
        """The header: ctxmodes' line naming the mode and the session file, then Pi's help
        with the keys bound now (:mod:`~ctxmodes.tui.startup_help`), collapsed or expanded,
        then what was loaded."""
        from ctxmodes.own_documentation import own_documentation
        from ctxmodes.resources.summary import loaded_text
        from ctxmodes.tui.startup_help import ASK_ABOUT_CTXMODES, compact_help, expanded_help

        session = self.agent.session
        where = self.agent.session_manager.session_file or "in memory"
        help_lines = expanded_help(self.keymap) if expanded else compact_help(self.keymap)
        header = "\n".join([f"ctxmodes · mode {self.agent.mode} · session {where}", *help_lines])
        if own_documentation() is not None:
            # As Pi's header ends: the model has been told where the documentation is.
            header += f"\n\n{ASK_ABOUT_CTXMODES}"
        loaded = loaded_text(session.resources, session.cwd, quiet=False)
        return render.styled(header + loaded, "dim", self.width)

    def apply_terminal_settings(self, settings: TerminalSettings) -> None:
        """Run with ``settings`` from now on (``/reload``): the thinking shown or collapsed,
        the completion menu's rows, the external editor, the turns replayed after a move
        in the tree, the skill commands, the filter ``/tree`` opens with, the cache-miss
        notices, the extra-usage warning; what is already printed stays as it was."""
        self.settings = settings
        self.live.show_thinking = not settings.hide_thinking
        self.transcript.replay_turns = settings.replay_turns
        self.transcript.cache_notices.enabled = settings.cache_miss_notices
        self.transcript.extra_usage.enabled = settings.anthropic_extra_usage_warning
        self.buffer.editor = settings.external_editor
        self.app.invalidate()

    def command_conflicts(self) -> list[str]:
        """The ``[Extension issues]`` block: the plugins' commands a built-in command
        shadows, in Pi's words (shown at start-up and after ``/reload``, quiet or not)."""
        from ctxmodes.tui.command_conflicts import conflicts_text

        text = conflicts_text(self)
        return [render.notice(text, "warning", self.width)] if text else []

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
        """Print a notice now (UI thread), as Pi words one (``Error: …``)."""
        self.print_blocks([render.said(message, level, self.width)])  # type: ignore[arg-type]

    @property
    def width(self) -> int:
        try:
            return self.app.output.get_size().columns
        except Exception:
            return 80

    @property
    def height(self) -> int:
        """The terminal's rows (24 when the output cannot say)."""
        try:
            return self.app.output.get_size().rows
        except Exception:
            return 24

    def _live_region(self) -> LiveRegion:
        """What the live region shows (a benchmark draws an older variant of it)."""
        return LiveRegion()

    def _handle(self, event: ev.AgentEvent, blocks: list[str]) -> None:
        self.transcript.handle(event, blocks, self.width)
        if isinstance(event, ev.ToolStarted) and not self._tool_ticking:
            self._tool_ticking = True
            self._tick_tool()

    def _tick_tool(self) -> None:
        """While a tool runs, the time it has run in the live region, once a second, as Pi
        counts a command's."""
        if self.live.running_tool is None or self._loop is None:
            self._tool_ticking = False
            return
        self.app.invalidate()
        self._loop.call_later(1.0, self._tick_tool, context=self._context)

    def _watch_branch(self) -> None:
        """The footer's git branch, looked at every :data:`CHECK_INTERVAL_S` seconds."""
        if self._loop is None:
            return
        if self.status.check_branch():
            self.app.invalidate()
        self._loop.call_later(CHECK_INTERVAL_S, self._watch_branch, context=self._context)

    def _tick_retry(self) -> None:
        """The countdown to the next attempt, once a second in the footer."""
        wait = self.status.tick_retry()
        if wait is None:
            return
        self.app.invalidate()
        if self._loop is not None:
            self._loop.call_later(wait, self._tick_retry, context=self._context)

    # ================================================================ editor and picker

    def _set_editor_text_soon(self, text: str) -> None:
        """The host puts text in the editor (from any thread)."""
        self.call_soon(lambda: self.set_editor_text(text))

    def may_wait_for_answer(self) -> bool:
        """Whether the calling thread may wait for what the user answers on the terminal:
        the application runs, and on another thread."""
        return self._loop is not None and threading.get_ident() != self._loop_thread

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

    def expand_pastes(self) -> None:
        """The draft's paste markers replaced by their pastes, as Pi's editor expands them
        when the text is sent, cleared or edited elsewhere; the pastes are then forgotten."""
        text = self.pastes.expanded(self.buffer.text)
        self.pastes.clear()
        if text != self.buffer.text:
            self.set_editor_text(text)

    def restore_to_editor(self, texts: list[str]) -> None:
        """Put ``texts`` back in the editor, before what is being typed."""
        if not texts:
            return
        current = self.buffer.text
        self.set_editor_text("\n".join([*texts, current] if current else texts))

    def busy(self) -> bool:
        return self.agent.is_busy()

    def wake(self) -> None:
        """Any thread: redraw soon (something the live region shows changed)."""
        redraw_soon(self.app)

    def open_picker(self, picker: Picker) -> None:
        self.picker = picker
        # The picker takes the keys: prompt_toolkit's own editing keys no longer reach the
        # draft (Alt+U would upper-case a word of it, Ctrl+Q insert the next key).
        self.app.layout.focus(self.picker_window)
        self.app.timeoutlen = PICKER_KEY_WAIT
        self.app.invalidate()

    def close_picker(self) -> None:
        self.picker = None
        self.app.layout.focus(self.buffer)
        self.app.timeoutlen = EDITOR_KEY_WAIT
        self.app.invalidate()

    def cancel_picker(self) -> None:
        picker = self.picker
        self.close_picker()
        if picker is not None:
            picker.on_cancel()

    def _argument_values(self, name: str) -> list[str]:
        if name == "mode":
            return self.agent.host.mode_names()
        if name == "model":
            # Pi completes a model among the scope's when there is one.
            scope = self.cycler.scope
            return [scoped.model.ref for scoped in scope] if scope else self.agent.model_refs()
        if name == "thinking":
            from ctxmodes.thinking_levels import THINKING_LEVELS

            return list(THINKING_LEVELS)
        return []


__all__ = ["TerminalSession", "plain", "tune_for_typing"]
