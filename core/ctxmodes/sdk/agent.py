"""``Agent``: an agent session for programs, the same host the terminal session uses.

An agent owns an :class:`~ctxmodes.host.runtime.AgentHost` and its current
:class:`~ctxmodes.host.session.AgentSession`. Two ways to drive it:

* **Blocking** — :meth:`Agent.prompt` runs a prompt to the end on the calling thread.
* **Non-blocking** — :meth:`Agent.submit` returns at once: text typed while the agent works
  is queued (steering or follow-up) or held during a compaction or branch summary, exactly as
  the host does; a prompt or command that starts work runs on the agent's own worker thread.
  :meth:`Agent.wait_for_idle` waits for it. This is how the terminal session drives it.

Listeners registered with :meth:`Agent.subscribe` receive :mod:`ctxmodes.sdk.events` on the
thread that produced them (the worker, during a run); they must return quickly.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ctxmodes import library_log
from ctxmodes.errors import CtxmodesError, SessionCwdMissingError
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.host.interrupt import interrupt_aborts
from ctxmodes.host.queues import queued_text
from ctxmodes.host.runtime import AgentHost
from ctxmodes.hostapi import (
    NavigationRequest,
    NotifyLevel,
    StreamingBehavior,
    TreeNavigationResult,
)
from ctxmodes.sdk.context_state import ContextState, context_state
from ctxmodes.sdk.events import AgentEvent, EventListener, Notice, StatusChanged, translate
from ctxmodes.sdk.worker import SessionWorker
from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import ImageContent
from ctxmodes.session.paths import configured_session_dir
from ctxmodes.session.writer import Durability
from ctxmodes.session_mode import ModeRequest

if TYPE_CHECKING:
    from ctxmodes.commands import Command
    from ctxmodes.config import Settings
    from ctxmodes.events import RetrievalRequest, RetrievalResult
    from ctxmodes.host.options import HostOptions
    from ctxmodes.host.records import HostRecord, Listener
    from ctxmodes.host.session import AgentSession
    from ctxmodes.providers.base import Provider
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.providers.registry import ProviderRegistry
    from ctxmodes.resources import ResourceLoader
    from ctxmodes.session.models import BashExecutionMessage, CompactionEntry

_log = library_log.logger(__name__)


class Editor:
    """Where the host reads and writes the text being composed; a UI replaces the two
    callables with its own editor's (:meth:`Agent.attach_editor`)."""

    def __init__(self) -> None:
        self._text = ""
        self.get: Callable[[], str] = lambda: self._text
        self.set: Callable[[str], None] = self._store

    def _store(self, text: str) -> None:
        self._text = text


class AgentUI:
    """The host's :class:`~ctxmodes.hostapi.UserInterface` for an agent: notifications
    become :class:`~ctxmodes.sdk.events.Notice` events, plugins' status texts
    :class:`~ctxmodes.sdk.events.StatusChanged` (it is a
    :class:`~ctxmodes.hostapi.StatusLine`), confirmations ask ``confirm_with``."""

    def __init__(self, editor: Editor) -> None:
        #: Set by the agent that owns this UI.
        self.emit: Callable[[AgentEvent], None] = lambda event: None
        self._editor = editor
        self.confirm_with: Callable[[str, str], bool] = lambda title, message: False

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self.emit(Notice(message, level))

    def confirm(self, title: str, message: str) -> bool:
        return self.confirm_with(title, message)

    def set_status(self, key: str, text: str | None) -> None:
        self.emit(StatusChanged(key, text))

    def get_editor_text(self) -> str:
        return self._editor.get()

    def set_editor_text(self, text: str) -> None:
        self._editor.set(text)


class Agent:
    """An agent session (see the module docstring). Build it with :func:`open_agent`."""

    def __init__(self, host: AgentHost, ui: AgentUI, editor: Editor) -> None:
        self._host = host
        self._ui = ui
        self._editor = editor
        self._listeners: list[EventListener] = []
        self._listeners_lock = threading.Lock()
        self._worker = SessionWorker()
        self._closed = False
        self._session_file: Path | None = None
        ui.emit = self._emit
        host.subscribe(self._on_record)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Receive every :data:`~ctxmodes.sdk.events.AgentEvent`; returns the unsubscriber.

        An exception a listener raises is logged on the ``ctxmodes.sdk.agent`` logger; the
        other listeners still get the event and the run goes on."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def subscribe_records(self, listener: Listener) -> Callable[[], None]:
        """Receive the host's raw lifecycle records (:mod:`ctxmodes.host.records`)."""
        return self._host.subscribe(listener)

    def _emit(self, event: AgentEvent) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                # A program's listener that fails must not keep the event from the others,
                # nor end the run that reports it.
                _log.exception("agent listener %r failed on %s", listener, event.type)

    def _on_record(self, record: HostRecord) -> None:
        from ctxmodes.host.records import SessionStarted

        if isinstance(record, SessionStarted):
            # Every session (the first and each replacement) hands its work to the worker.
            self._host.session.set_handoff(self._worker)
            self._session_file = self._host.session.session_manager.session_file
        for event in translate(record):
            self._emit(event)

    # ------------------------------------------------------------------ state

    @property
    def host(self) -> AgentHost:
        return self._host

    @property
    def session(self) -> AgentSession:
        """The current host session (it changes on ``/new``, ``/resume``, ``/fork``)."""
        return self._host.session

    @property
    def session_manager(self) -> SessionManager:
        return self.session.session_manager

    @property
    def session_file(self) -> Path | None:
        """The current session's file (after :meth:`close`, the last one's)."""
        return self._session_file if self._closed else self.session_manager.session_file

    @property
    def mode(self) -> str:
        return self.session.mode_name

    @property
    def commands(self) -> tuple[Command, ...]:
        """The slash commands of the current session (built-in and plugins')."""
        return self.session.commands

    def is_streaming(self) -> bool:
        return self.session.is_streaming()

    def is_busy(self) -> bool:
        """True while anything runs or waits to run: a run, a compaction, a summary."""
        session = self.session
        return session.is_busy_elsewhere() or not session.is_idle() or session.has_pending_start()

    def context_state(self) -> ContextState:
        """Window number and usable tokens left, for a footer."""
        session = self.session
        return context_state(session.messages, session.context_window)

    def attach_editor(self, get: Callable[[], str], set_text: Callable[[str], None]) -> None:
        """Let the host read and replace the UI's editor text (a navigation to a user
        message puts its text there; Tree keeps what is typed across a rollover)."""
        self._editor.get = get
        self._editor.set = set_text

    def set_confirm(self, confirm: Callable[[str, str], bool]) -> None:
        self._ui.confirm_with = confirm

    # ------------------------------------------------------------------ input

    def prompt(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Run ``text`` (a prompt or ``/command``) now on this thread, ``images`` following
        it in the user message; returns when settled, also when the reply ended in a model
        error (a :class:`~ctxmodes.sdk.ModelError` event says so). On the main thread,
        Ctrl-C aborts the run, waits for it to settle and then raises ``KeyboardInterrupt``
        (:mod:`ctxmodes.host.interrupt`).

        :raises SessionBusyError: the agent is working (use :meth:`submit`).
        :raises NoModelError: the agent has no model.
        """
        with interrupt_aborts(self.session.abort):
            self.session.prompt(text, images=images)

    def submit(
        self,
        text: str,
        *,
        streaming_behavior: StreamingBehavior | None = "steer",
        images: Sequence[ImageContent] = (),
    ) -> None:
        """Take typed text without blocking: a ``/command`` or prompt starts on the worker
        thread; while the agent works, text is queued as ``streaming_behavior`` (or held
        during a compaction or summary). ``images`` go with the text and follow it in the
        user message.

        :raises SessionBusyError: ``streaming_behavior`` is ``None`` and the agent works.
        """
        self.session.submit(text, streaming_behavior=streaming_behavior, images=images)

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Queue ``text`` (then ``images``) to be delivered after the current turn's tool
        calls."""
        self.session.steer(text, images=images)

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Queue ``text`` (then ``images``) to be delivered when the current run would
        otherwise stop."""
        self.session.follow_up(text, images=images)

    def take_queued(self) -> tuple[list[str], list[str]]:
        """Take back the queued user messages, as ``(steering, follow-ups)`` texts oldest
        first (Pi's dequeue): they will not be sent. Messages plugins queued stay queued."""
        steering, follow_ups = self.session.take_user_messages()
        return [queued_text(m) for m in steering], [queued_text(m) for m in follow_ups]

    def abort(self) -> list[str]:
        """Stop the current run; returns the queued texts taken back (steering first), so
        nothing typed is lost — a UI puts them back in its editor."""
        steering, follow_up = self.take_queued()
        self.session.abort()
        return steering + follow_up

    def run_soon(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the agent's worker thread, after what it is doing now; a
        :class:`CtxmodesError` it raises becomes an error :class:`Notice`. For a UI that must
        not block on an operation (a navigation with a summary, a compaction)."""

        def guarded() -> None:
            try:
                job()
            except CtxmodesError as exc:
                self._emit(Notice(str(exc), "error"))

        self._worker(guarded)

    def change_soon(self, job: Callable[[], None]) -> None:
        """Run ``job``, a change of the model, the thinking level or the session's name:
        at once while the worker drives the session (the host takes it for the run's next
        request, as Pi does), else as :meth:`run_soon` runs it. A :class:`CtxmodesError` it
        raises becomes an error :class:`Notice` either way."""
        if not self.session.is_busy_elsewhere():
            self.run_soon(job)
            return
        try:
            job()
        except CtxmodesError as exc:
            self._emit(Notice(str(exc), "error"))

    def wait_for_idle(self, timeout: float | None = None) -> bool:
        """Block until everything started has settled (False if ``timeout`` passed)."""
        return self.session.wait_for_idle(timeout)

    # ------------------------------------------------------------------ operations

    def compact(self, instructions: str | None = None) -> CompactionEntry:
        """Compact now (aborting a run in progress first), on this thread. On the main
        thread, Ctrl-C cancels the summary, nothing is appended, and ``KeyboardInterrupt``
        is raised (as in :meth:`prompt`)."""
        with interrupt_aborts(self.session.abort):
            return self.session.compact(instructions)

    def run_shell_command(
        self,
        command: str,
        *,
        exclude_from_context: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run a shell command for the user on this thread, as ``!command`` does in the
        terminal (``!!command`` with ``exclude_from_context``: the model never reads it):
        the plugins' ``ctx_user_bash`` first, else a new bash in the session's directory.
        Returns its ``bashExecution`` message, recorded in the session (when a run in
        progress ends, if one is). ``on_output`` gets each cleaned piece of output as it
        arrives; :meth:`abort_shell_commands` stops the command from another thread.

        :raises ToolError: bash cannot be started, or a plugin's runner failed (nothing
            is recorded).
        """
        return self.session.run_shell_command(
            command, exclude_from_context=exclude_from_context, on_output=on_output
        )

    def abort_shell_commands(self) -> None:
        """Stop every command :meth:`run_shell_command` runs now; each is recorded as
        cancelled."""
        self.session.abort_shell_commands()

    def navigate(self, request: NavigationRequest) -> TreeNavigationResult:
        """Move the leaf as ``/tree`` does (the session must be idle). On the main thread,
        Ctrl-C during the branch summary cancels the move, as in :meth:`compact`."""
        if self.is_busy():
            raise SessionBusyError("Wait for the current response to finish before navigating.")
        with interrupt_aborts(self.session.abort):
            return self.session.navigate_tree(request)

    def new_session(self, parent_session: str | None = None) -> None:
        """Continue in a new session (its header names ``parent_session`` when given)."""
        self._host.new_session(parent_session)

    def resume(self, path: Path, *, cwd: Path | None = None) -> None:
        """Continue in the session stored at ``path``, run in the directory it records (or
        in ``cwd``: :class:`~ctxmodes.SessionCwdMissingError` says when the recorded one is
        gone)."""
        self._host.resume_session(path, cwd=cwd)

    def switch_session(self, path: str | Path, *, cwd: Path | None = None) -> None:
        """Continue in the session at ``path`` as Pi's ``switch_session`` opens it: a new
        session to be written there when no file is (see
        :meth:`~ctxmodes.host.runtime.AgentHost.switch_session`); ``cwd`` as :meth:`resume`'s."""
        self._host.switch_session(path, cwd=cwd)

    def import_session(self, path: str | Path, *, cwd: Path | None = None) -> None:
        """Continue in a copy of the session file at ``path``, made in this session's
        directory (see :meth:`~ctxmodes.host.runtime.AgentHost.import_session`); ``cwd`` as
        :meth:`resume`'s."""
        self._host.import_session(path, cwd=cwd)

    def fork(
        self, entry_id: str | None = None, position: Literal["before", "at"] | None = None
    ) -> str | None:
        """Continue in a new file from ``entry_id`` (``position``: as Pi's fork, see
        :meth:`AgentHost.fork_session`); returns text for the editor, if any."""
        return self._host.fork_session(entry_id, position).editor_text

    def switch_mode(self, name: str) -> None:
        self._host.switch_mode(name)

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult | None:
        """Run a ``history`` or ``notes`` operation as the model's tool would, through the
        mode's ``ctx_retrieve``; ``None`` when the mode keeps none (a failing plugin is
        reported as a notice)."""
        from ctxmodes.hooks import HookRelay

        session = self.session
        return session.call_hook(HookRelay(self._host.plugin_manager, session).retrieve, request)

    def model_refs(self) -> list[str]:
        """The ``provider/model-id`` of every model the plugins register (``ctxmodes models``)."""
        return [model.ref for model in self.models()]

    def models(self) -> list[ModelSpec]:
        """Every model the plugins register, with its limits and prices."""
        return list(self._registry().models)

    def model_schemes(self) -> list[str]:
        """The schemes of the ``scheme:ARGUMENT`` model specs the plugins register
        (``scripted``), sorted."""
        return self._registry().schemes

    def switch_model(self, spec: str, thinking_level: str | None = None) -> None:
        """Continue with the model ``spec`` names (``provider/model-id`` or
        ``scripted:FILE``), recorded in the session; during a run on another thread, from
        the run's next request on (as Pi). The thinking
        level becomes ``thinking_level`` when given, else the one ``spec``'s ``:<level>``
        suffix names (``anthropic/claude-sonnet-4-5:high``), else the model's own startup
        level, the configured default or the current one, as the model takes it.

        :raises CtxmodesError: unknown model, missing credentials, bad spec or level.
        """
        if thinking_level is not None:
            from ctxmodes.thinking_levels import require_thinking_level

            require_thinking_level(thinking_level)
        provider, suffix_level = self._host.model_provider(spec)
        self._host.switch_model(provider, thinking_level or suffix_level)

    def _registry(self) -> ProviderRegistry:
        from ctxmodes.providers.registry import registry_from_plugin_manager

        return registry_from_plugin_manager(self._host.plugin_manager)

    @property
    def thinking_level(self) -> str:
        """The level the next request asks for, as the model takes it."""
        return self.session.thinking_level

    def set_thinking_level(self, level: str) -> None:
        """Use ``level`` (Pi's ``off`` … ``max``) from the next request on, or the nearest
        the model takes (``off`` for a model without reasoning), recorded in the session as
        Pi records it; during a run on another thread, from the run's next request on."""
        self._host.set_thinking_level(level)

    def set_name(self, name: str) -> None:
        """Name the session (a ``session_info`` entry, as Pi's ``/name``), ``name`` trimmed
        as Pi trims it; while the agent works, written when its run is about to send its
        next request or ends (the run holds the session file).

        :raises CtxmodesError: ``name`` is only whitespace.
        """
        trimmed = js_trim(name)
        if not trimmed:
            raise CtxmodesError("Session name cannot be empty")
        self.session.set_session_name(trimmed)

    def close(self) -> None:
        """Shut the session down and release the model; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._host.close()
        finally:
            self._worker.stop()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_agent(
    *,
    cwd: Path | str | None = None,
    mode: str | None = None,
    model: str | None = None,
    provider: Provider | None = None,
    thinking_level: str | None = None,
    session_file: Path | str | None = None,
    continue_recent: bool = False,
    session_dir: Path | str | None = None,
    persist: bool = True,
    session_id: str | None = None,
    settings: Settings | None = None,
    options: HostOptions | None = None,
    plugins: Sequence[object] = (),
    switch_mode: bool = False,
    confirm_hint: str = "pass switch_mode=True to switch",
    resources: ResourceLoader | None = None,
    listeners: Sequence[EventListener] = (),
) -> Agent:
    """Open an agent on a new or existing session, like Pi's ``createAgentSession``.

    :param cwd: the working directory (default: the current one). An existing session runs
        in the directory it records unless ``cwd`` is given; when that directory is gone,
        :class:`~ctxmodes.SessionCwdMissingError` is raised (open it again with a ``cwd``
        to continue it there).
    :param mode: the context-management mode of a new session (default: from the
        configuration). An existing session runs in the mode it records (or, for a file
        that records none, the mode its entries show); asking for another one needs
        ``switch_mode``, else :class:`~ctxmodes.session_mode.ModeChangeNotConfirmed` is
        raised with a line on what the switch would change (ending in ``confirm_hint``).
    :param model: a model spec such as ``scripted:FILE`` (or give ``provider``). Without
        one, an existing session runs on the model it last used when the catalog has it and
        it has credentials here (as Pi restores it), else on the configured model.
    :param thinking_level: the thinking level to run at, as Pi's ``--thinking`` (one of
        ``off`` … ``max``, clamped to what the model takes): a new session starts at it, an
        existing one runs at it; otherwise a new session starts at the level
        ``model``'s ``:<level>`` suffix, the model's own setting or the default level sets.
    :param session_file: a session file to continue (created when missing); otherwise a new
        session in Pi's directory for ``cwd``, or the most recent one with
        ``continue_recent``.
    :param persist: ``False`` keeps a new session in memory only, as Pi's ``--no-session``:
        no file is written (nor for the sessions ``/new`` and ``/fork`` make from it).
    :param session_id: the id a new session takes (Pi's ``--session-id``; by default a new
        UUIDv7), checked as Pi checks it.
    :param session_dir: one directory for every project's sessions, where new ones go and
        ``continue_recent`` looks (by default ``PI_CODING_AGENT_SESSION_DIR``, else Pi's
        ``sessionDir`` setting, else Pi's folder per project).
    :param settings: effective settings to start from; by default they are loaded for
        ``cwd`` as the CLI does, with ``mode`` and ``model`` overriding them, the project's
        ``.ctxmodes.toml`` only when ``resources`` trusts the project.
    :param resources: loads context files, ``SYSTEM.md``/``APPEND_SYSTEM.md``, prompt
        templates and skills; by default Pi's agent directory and rules, a project's own
        files only when a saved decision or ``defaultProjectTrust`` trusts it (nobody is
        asked; pass ``default_loader(approve=True)`` to trust it).
    :param listeners: subscribed (as :meth:`Agent.subscribe`) before the session starts, so
        that they also get what happens while it opens: the session's start and the notices
        of its start-up (a confirmed mode switch, a plugin's warning or error).
    :raises CtxmodesError: unknown mode or thinking level, bad model spec, unreadable
        session file.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.resources import default_loader

    where = Path(cwd if cwd is not None else Path.cwd()).resolve()
    if not where.is_dir():
        raise CtxmodesError(f"no such directory: {where}")
    if resources is None:
        resources = default_loader()
    if settings is None:
        # The same decision as the resources': a project file loads only when trusted.
        trusted = resources.trust.is_trusted
        settings = load_settings(cwd=where, cli={"model": model}, trust=trusted).settings
    elif model is not None:
        settings = settings.model_copy(update={"model": model})
    if thinking_level is not None:
        from ctxmodes.host.options import HostOptions
        from ctxmodes.thinking_levels import require_thinking_level

        require_thinking_level(thinking_level)
        base = options if options is not None else HostOptions.of_settings(settings)
        options = dataclasses.replace(base, requested_thinking_level=thinking_level)
    durability = Durability(settings.durability)
    directory = configured_session_dir(
        None if session_dir is None else os.fspath(session_dir), settings.session_dir
    )
    if session_id is not None and (session_file is not None or continue_recent):
        raise CtxmodesError("session_id names a new session: no session_file or continue")
    if not persist and (session_file is not None or continue_recent):
        raise CtxmodesError("a session kept in memory is a new one: no session_file or continue")
    if not persist:
        manager = SessionManager.in_memory(where, session_id=session_id)
    elif session_file is not None:
        manager = SessionManager.open(
            Path(session_file),
            directory,
            cwd_override=where if cwd is not None else None,
            durability=durability,
        )
    elif continue_recent:
        manager = SessionManager.continue_recent(where, directory, durability=durability)
    else:
        manager = SessionManager.create(
            where, directory, session_id=session_id, durability=durability
        )
    if not Path(manager.cwd).is_dir():
        manager.close()
        raise SessionCwdMissingError(str(manager.session_file), manager.cwd, str(where))
    editor = Editor()
    ui = AgentUI(editor)
    try:
        host = AgentHost.from_settings(
            settings,
            provider=provider,
            ui=ui,
            options=options,
            plugins=plugins,
            mode_request=None if mode is None else ModeRequest(mode, confirmed=switch_mode),
            confirm_hint=confirm_hint,
            resources=resources,
            # An explicit model wins; otherwise the session's own, as Pi restores it.
            session_model=manager.context_model() if model is None and provider is None else None,
        )
    except BaseException:
        manager.close()
        raise
    agent = Agent(host, ui, editor)
    for listener in listeners:
        agent.subscribe(listener)
    try:
        host.start(manager)
    except BaseException:
        agent.close()
        raise
    return agent
