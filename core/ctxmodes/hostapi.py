"""What a plugin may ask of the agent host.

Hooks receive a :class:`HostSession`; plugins (built-in modes included) program against this
protocol, never against the host class, so a mode can be tested with any object that
satisfies it. The session file reaches them read-only (:class:`~ctxmodes.SessionView`); they
write through the session: :meth:`HostSession.append_entry`, the ``send_*`` methods and
:attr:`HostSession.navigation`.

Threading
    The host runs one top-level run at a time on the thread that started it, and calls the
    run's hooks on that thread. Text submitted on another thread (a UI) during a run goes
    through ``ctx_input`` on the submitting thread; hook implementations are never called
    concurrently, so a plugin needs no locking of its own (but a hook must not wait for
    another thread that is about to call into the session). The methods that only *request*
    something (:meth:`HostSession.abort`, :meth:`HostSession.steer`,
    :meth:`HostSession.follow_up`, the ``send_*`` methods) are thread-safe and may be called
    from inside hooks and tools, where they return at once (a run they start begins when
    control is back with the host; see :meth:`HostSession.send_message`).

Navigation
    :attr:`HostSession.navigation` is the capability a mode uses to move the leaf through the
    session tree (Tree mode's rollover). It is bound to the session it was made for: after
    that session was replaced (``/new``, ``/resume``, ``/fork``) or shut down, every call
    raises :class:`ctxmodes.errors.StaleContextError`. It refuses while a run, a compaction or
    another navigation is in progress; the first safe point after a run is
    ``ctx_agent_settled``, where the session is idle.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from ctxmodes.providers.base import ModelInfo, Provider
    from ctxmodes.session.models import (
        BranchSummaryEntry,
        CustomMessage,
        ImageContent,
        TextContent,
        UserMessage,
    )
    from ctxmodes.session_view import SessionView

#: A message waiting in a run queue: submitted text, or a plugin's custom message. Spelled
#: as a string so that importing this module (every plugin does, to annotate its session)
#: does not load the session models and pydantic.
QueuedMessage: TypeAlias = "UserMessage | CustomMessage"

NotifyLevel = Literal["info", "warning", "error"]

#: How a message sent while a run is active is delivered: ``steer`` after the current turn's
#: tool calls, ``follow_up`` once the run would otherwise stop, ``next_turn`` with the next
#: prompt (never starting a turn by itself).
DeliverAs = Literal["steer", "follow_up", "next_turn"]

#: How text submitted while a run is active is queued.
StreamingBehavior = Literal["steer", "follow_up"]


class UserInterface(Protocol):
    """The seam between the host and whoever watches it (terminal, tests, an editor)."""

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Show a short message."""

    def confirm(self, title: str, message: str) -> bool:
        """Ask a yes/no question; headless implementations answer from a policy."""

    def get_editor_text(self) -> str:
        """The text the user is composing but has not submitted."""

    def set_editor_text(self, text: str) -> None:
        """Replace the text being composed."""


@runtime_checkable
class StatusLine(Protocol):
    """A user interface with a status line plugins may write to (the terminal's footer).

    Not every interface has one: check with ``isinstance(session.ui, StatusLine)``.
    """

    def set_status(self, key: str, text: str | None) -> None:
        """Show ``text`` in the slot ``key`` (one per plugin); ``None`` clears it."""


@dataclass(frozen=True, slots=True)
class NavigationRequest:
    """A move of the leaf through the session tree, with what Pi's ``navigateTree`` takes.

    :ivar target_id: the entry to move to. A user or custom-message target moves the leaf to
        the target's parent and returns its text as ``editor_text``; any other target
        becomes the leaf.
    :ivar summarize: summarize the branch being left into a ``branch_summary`` entry
        appended at the new leaf.
    :ivar custom_instructions: added to the summary prompt's instructions, or, with
        ``replace_instructions``, used instead of them.
    :ivar label: labels the summary entry (or the target, without a summary).
    :ivar internal: the navigation is the mode's own rollover (``ctx_session_tree`` says so,
        and runtime state such as the notebook survives it); a user navigation otherwise.
    """

    target_id: str
    summarize: bool = False
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None
    internal: bool = False


@dataclass(frozen=True, slots=True)
class TreeNavigationResult:
    """The outcome of a tree navigation.

    :ivar cancelled: nothing moved: a ``ctx_session_before_tree`` implementation cancelled,
        or the summarization was aborted (then ``aborted`` is True too).
    :ivar editor_text: the target's text when the target was a user or custom message (the
        leaf then moved to its parent, so the text can be edited and sent again).
    :ivar summary_entry: the ``branch_summary`` entry appended for the branch left behind.
    :ivar new_leaf_id: the leaf after the navigation.
    """

    cancelled: bool
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: BranchSummaryEntry | None = None
    new_leaf_id: str | None = None


class TreeNavigation(Protocol):
    """Moving the leaf of one session through its tree (see the module docstring)."""

    @property
    def ready(self) -> bool:
        """True when :meth:`navigate_tree` may be called now: the session this capability
        was made for is still current and idle."""

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        """Move the leaf as ``request`` says, as Pi's ``navigateTree`` does, appending the
        branch summary and the label it asks for.

        Returns after ``ctx_session_tree`` ran. Runs on the caller's thread; a summary model
        call is aborted by :meth:`HostSession.abort`.

        :raises StaleContextError: the session was replaced or shut down.
        :raises SessionBusyError: a run, compaction or navigation is in progress.
        :raises CtxmodesError: unknown target, or the summary could not be made.
        """


class TurnHold(Protocol):
    """Custom messages that asked for a turn while a mode held turns (see
    :meth:`HostSession.hold_turns`)."""

    def release(self, *, start_turns: bool = True) -> None:
        """End the hold. The held messages, in the order they were sent, are queued as
        steering, so the next run — the one a message sent right after starts, say —
        delivers them after its own prompt; with ``start_turns=False`` they are appended
        without starting anything. Releasing twice does nothing."""


class HostSession(Protocol):
    """The running agent session as plugins see it."""

    @property
    def session_manager(self) -> SessionView:
        """The current session file, read-only (:mod:`ctxmodes.session_view`); a mode writes
        through :meth:`append_entry`, the ``send_*`` methods and :attr:`navigation`."""

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Append a ``custom`` entry (a mode's own state, never sent to the model) at the
        leaf, as Pi's ``appendEntry`` does; returns its id. Call it on the host's thread
        (from a hook or tool), where the session is not moving."""

    @property
    def cwd(self) -> Path:
        """The working directory tools run in."""

    @property
    def ui(self) -> UserInterface:
        """The user interface seam."""

    @property
    def mode_name(self) -> str:
        """The name of the active mode (``"off"`` when none is configured)."""

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens, when known."""

    @property
    def model(self) -> ModelInfo | None:
        """The model the session runs with (``None`` when it has none, e.g. offline)."""

    @property
    def provider(self) -> Provider | None:
        """The model's provider, for modes that use a provider's own backend (Remote calls
        the Codex history and notes service through
        :class:`~ctxmodes.providers.backend.BackendAccess`)."""

    def is_idle(self) -> bool:
        """True when no run, compaction or branch summary is in progress."""

    def abort(self) -> None:
        """Ask the current run to stop; returns at once (the run settles later)."""

    @property
    def navigation(self) -> TreeNavigation:
        """The tree-navigation capability bound to this session."""

    def is_streaming(self) -> bool:
        """True while a run is active (between ``ctx_agent_start`` and settling)."""

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Queue a user message (``text``, then ``images``) delivered after the current
        turn's tool calls; while idle it waits for the next run."""

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        """Queue a user message (``text``, then ``images``) delivered once the current run
        would otherwise stop."""

    def take_queued(self, queue: StreamingBehavior = "steer") -> list[QueuedMessage]:
        """Remove and return, oldest first, the messages waiting in the ``steer`` or
        ``follow_up`` queue, so that a mode can deliver them later — after a context boundary
        it is about to create, say — with :meth:`enqueue`. Thread-safe."""

    def hold_turns(self) -> TurnHold:
        """Hold every custom message that would start or steer a turn (``send_message`` and
        ``send_custom_message`` without ``trigger_turn=False`` or ``next_turn``), from any
        plugin, until the returned hold is released: a mode that must append entries before
        the next turn (Tree's archive manifest, snapshot and marker) keeps other plugins'
        turns behind them. One hold at a time. Thread-safe.

        :raises SessionBusyError: turns are already held.
        """

    def enqueue(self, message: QueuedMessage, *, deliver_as: StreamingBehavior) -> None:
        """Queue a message taken with :meth:`take_queued` (or built by the plugin) again,
        as it is: ``ctx_input`` does not see it a second time. Like a queued custom message,
        it waits for the next run when none is active. Thread-safe."""

    def send_user_message(
        self,
        text: str,
        *,
        deliver_as: StreamingBehavior = "steer",
        images: Sequence[ImageContent] = (),
    ) -> None:
        """Submit ``text`` as if typed (``ctx_input`` sees it, source ``"extension"``; a
        slash command is dispatched): queued as ``deliver_as`` while a run is active, else it
        starts a run (see "Starting runs" in :meth:`send_message`). ``images`` follow the
        text in the user message."""

    def send_message(
        self,
        message: CustomMessage,
        *,
        deliver_as: DeliverAs | None = None,
        trigger_turn: bool | None = None,
    ) -> None:
        """Deliver a custom message, with the rules of Pi's ``sendMessage``, in this order:

        * ``deliver_as="next_turn"``: held and sent with the next prompt (lost when the
          session is replaced);
        * a run is active and ``trigger_turn`` is not False: queued as steering, or as a
          follow-up with ``deliver_as="follow_up"``;
        * idle and ``trigger_turn``: starts a run whose only prompt is this message;
        * a run is active and ``trigger_turn`` is False: appended when the current turn
          ends, never between a tool call and its result;
        * otherwise (idle): appended at once, without a turn.

        Starting runs: called from a hook or tool (on the host's thread), the run starts as
        soon as control returns to the host — after ``ctx_agent_settled`` handlers, for
        example — and settles on its own; called from another thread while nothing runs,
        the run happens on the caller's thread before this method returns.
        """

    def send_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool | None = None,
        deliver_as: DeliverAs | None = None,
    ) -> None:
        """Build a custom message (timestamped now) and :meth:`send_message` it."""
