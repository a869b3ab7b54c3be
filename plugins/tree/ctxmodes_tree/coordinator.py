"""The two-phase rollover: ``new_context`` schedules, ``ctx_agent_settled`` archives.

Tree cannot archive a window while the model is streaming: navigating the tree needs an
idle session, and the turn that called ``new_context`` is still running. So a rollover has
two phases, with one pending rollover per session in between.

Tool phase (:meth:`RolloverCoordinator.schedule`, from the ``new_context`` tool)
    Check that the session has a navigation capability, a current window and its boundary
    entry; record the session id, the boundary, the window identity and the leaf; ask the
    host to abort the run. Nothing is appended while the old turn streams.

Settled phase (:meth:`RolloverCoordinator.settle`, inside ``ctx_agent_settled``)
    Runs directly in the hook, never through a timer or thread, so no prompt can start
    against the old leaf. In order: take the pending rollover; check that the session,
    the recorded leaf and the boundary are still on the active branch; capture the editor
    text; materialize the notes; navigate with a summary to the boundary (the first
    rollover of a branch starts at the first user or custom message before it, so history
    from before management was enabled is archived too); restore the editor text; append
    the archive manifest, then the note snapshot; make the archived window's search filter
    (:mod:`ctxmodes_tree.search_cache`); then send the next window marker, the only entry
    that starts a turn.

Input during a rollover
    From ``new_context`` until the marker is sent, submitted input is held (``ctx_input``
    answers "handled") and replayed, images and all, as follow-ups after the new boundary.
    Steering it into the aborted run would only archive it with the old window, and a prompt
    started before the marker would open the new branch without one. Messages already queued
    for the run that called ``new_context`` (steering typed while its tools ran, follow-ups)
    are taken out of the host's queues when the rollover is scheduled — the aborted run
    would otherwise deliver them into the old window — and queued again, each in its own
    queue, right after the marker. Custom messages other plugins send to start a turn while
    the rollover is under way (from ``ctx_session_tree``, say) are held by the host
    (:meth:`~ctxmodes.hostapi.HostSession.hold_turns`) and delivered after the marker too:
    only the marker may start the next turn. Input may arrive on another thread, so the held
    list and the phase it depends on are guarded by a lock.

Failure policy
    Every failure ends the rollover with one error notification, "Tree context rollover
    failed: <reason>", and puts the saved editor text and any held input back in the
    editor (input with images, which the editor cannot hold, waits as a follow-up instead).
    When navigation did not complete, the old branch is untouched. When it did, no model
    turn starts: the marker is sent only after the manifest and snapshot exist, so a
    failure before that leaves the session idle and inspectable (its side branch, summary
    and whatever recovery entries were written stay in the file). An unexpected exception
    ends the rollover the same way but propagates, so the host reports it instead.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxmodes import (
    CtxmodesError,
    InputEvent,
    NavigationRequest,
    NewContextOutcome,
    QueuedMessage,
    StreamingBehavior,
    TreeNavigation,
    TreeNavigationEvent,
    TurnHold,
)
from ctxmodes.session import (
    BranchSummaryEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
    TextContent,
    UserMessage,
)
from ctxmodes.windows import (
    NOTE_SNAPSHOT_CUSTOM_TYPE,
    ManagedMode,
    WindowIdentity,
    new_context_outcome,
)
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE, manifest_for_summary
from ctxmodes_tree.state import TreeState

FAILURE_PREFIX = "Tree context rollover failed: "
#: The queues emptied when a rollover is scheduled, in the order they are put back.
QUEUES: tuple[StreamingBehavior, ...] = ("steer", "follow_up")
NOT_READY = "Tree context management is not ready for this session"
NOTHING_TO_ARCHIVE = "No active context window can be archived"


class RolloverError(CtxmodesError):
    """A rollover step failed; the message is the reason shown to the user."""


@dataclass(frozen=True, slots=True)
class PendingRollover:
    """What the tool phase recorded for the settled phase."""

    session_id: str
    boundary_entry_id: str
    identity: WindowIdentity
    leaf_id_at_request: str
    requested_at_ms: int


@dataclass(slots=True)
class _Navigation:
    """State kept while the navigation runs."""

    old_leaf_id: str
    saved_editor_text: str
    target_text: str | None
    summary_entry: BranchSummaryEntry | None = None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class RolloverCoordinator:
    """One session's pending rollover and its completion."""

    def __init__(
        self, mode: ManagedMode, tree: TreeState, now_ms: Callable[[], int] = _now_ms
    ) -> None:
        self._mode = mode
        self._session = mode.session
        self._tree = tree
        self._now_ms = now_ms
        self._pending: PendingRollover | None = None
        self._navigation: _Navigation | None = None
        self._continuation_window_id: str | None = None
        self._lock = threading.Lock()
        #: Input held from ``new_context`` until the marker is sent (or the rollover fails).
        self._holding = False
        self._held: list[InputEvent] = []
        #: Messages that were queued for the run that called ``new_context``, taken out of
        #: the queues so that the aborted run cannot deliver them into the old window.
        self._taken: list[tuple[StreamingBehavior, QueuedMessage]] = []
        #: Other plugins' turn requests, held from ``new_context`` until the marker is sent.
        self._turns: TurnHold | None = None

    @property
    def pending(self) -> PendingRollover | None:
        return self._pending

    @property
    def busy(self) -> bool:
        """True from ``new_context`` until the next window's marker is on the branch; no
        other boundary may be created meanwhile."""
        if self._continuation_window_id is not None:
            current = self._tree.state.current
            if current is not None and current.current_window_id == self._continuation_window_id:
                self._continuation_window_id = None
        return (
            self._pending is not None
            or self._navigation is not None
            or self._continuation_window_id is not None
        )

    # -- tool phase ------------------------------------------------------------------------

    def schedule(self) -> NewContextOutcome:
        """Record a rollover and abort the run (``new_context`` in Tree).

        :raises RolloverError: no navigation capability or no current window.
        """
        if self._pending is not None:
            return new_context_outcome(started=False)
        pending = self._request()
        with self._lock:
            self._pending = pending
            self._holding = True
        session = self._session
        self._taken = [
            (queue, message) for queue in QUEUES for message in session.take_queued(queue)
        ]
        # Other plugins may ask for a turn before the marker exists (while the run ends, or
        # from ctx_session_tree during the navigation): only the marker, the last entry the
        # model sees, may start one; theirs follow it.
        self._turns = session.hold_turns()
        session.abort()
        return new_context_outcome(started=True, terminate=True)

    def _request(self) -> PendingRollover:
        self._navigation_capability()
        windows = self._tree.state
        manager = self._session.session_manager
        identity = windows.current
        boundary = windows.identity.boundary_entry_id
        leaf = manager.get_leaf_id()
        if identity is None or boundary is None or leaf is None:
            raise RolloverError(NOTHING_TO_ARCHIVE)
        return PendingRollover(
            session_id=manager.session_id,
            boundary_entry_id=boundary,
            identity=identity,
            leaf_id_at_request=leaf,
            requested_at_ms=self._now_ms(),
        )

    def _navigation_capability(self) -> TreeNavigation:
        try:
            return self._session.navigation
        except CtxmodesError:
            raise RolloverError(NOT_READY) from None

    # -- settled phase ---------------------------------------------------------------------

    def settle(self) -> bool:
        """Complete the pending rollover, if any; True when there was one (whether it
        succeeded or failed)."""
        pending, self._pending = self._pending, None
        turns, self._turns = self._turns, None
        if pending is None:
            return False
        assert turns is not None
        try:
            self._complete(pending, turns)
        except (CtxmodesError, OSError) as error:
            # OSError: the session file could not take an entry (disk full, lost mount).
            self._fail(str(error), turns)
        except Exception:
            # Unexpected: the host reports it. The rollover still ends here, or the input
            # held for it would stay held for good.
            self._fail(None, turns)
            raise
        return True

    def _complete(self, pending: PendingRollover, turns: TurnHold) -> None:
        navigation = self._navigation_capability()
        if not navigation.ready:
            raise RolloverError(NOT_READY)
        manager = self._session.session_manager
        if manager.session_id != pending.session_id:
            raise RolloverError("The active session changed before rollover")
        branch_ids = manager.get_branch_ids()
        if pending.leaf_id_at_request not in branch_ids:
            raise RolloverError("The active branch changed before rollover")
        if pending.boundary_entry_id not in branch_ids:
            raise RolloverError("The context-window boundary is no longer active")
        target = self._target(pending, branch_ids)
        # The archive will hold the target and everything after it; a manifest the archive
        # index would reject for its depth must not be written in the first place.
        archived = len(branch_ids) - branch_ids.index(target.id)
        max_depth = self._tree.archives.limits.max_depth
        if archived > max_depth:
            raise RolloverError(
                f"the window holds {archived} entries, more than an archive may ({max_depth})"
            )
        old_leaf = branch_ids[-1]
        ui = self._session.ui
        # Materialized before the cut: notes written in this window move to the side branch.
        snapshot = self._tree.state.notes.snapshot(self._now_ms())
        self._navigation = _Navigation(old_leaf, ui.get_editor_text(), _entry_text(target))
        try:
            result = navigation.navigate_tree(
                NavigationRequest(target.id, summarize=True, internal=True)
            )
        except CtxmodesError as error:
            raise RolloverError(f"navigation failed: {error}") from None
        if result.cancelled:
            raise RolloverError("Tree archive was cancelled")
        # From here on the old window is a side branch; no turn may start before the
        # manifest and snapshot exist.
        summary = self._navigation.summary_entry or result.summary_entry
        if summary is None or summary.from_id != old_leaf:
            raise RolloverError("Pi did not create a branch summary")
        self._restore_editor()
        manifest = manifest_for_summary(
            pending.identity.current_window_id, pending.boundary_entry_id, summary
        )
        self._session.append_entry(TREE_ARCHIVE_CUSTOM_TYPE, manifest.dump())
        self._session.append_entry(NOTE_SNAPSHOT_CUSTOM_TYPE, snapshot.dump())
        archive = self._tree.archives.latest
        if archive is None or archive.summary.id != summary.id:
            raise RolloverError("the archive manifest could not be verified")
        # Now, while the window is fresh: a search after a resume then skips this window
        # unless it may hold a hit, without reading it. The cache is optional: a window it
        # could not be made for is read instead, and the rollover goes on.
        with contextlib.suppress(OSError):
            self._tree.archive_history.window_of(archive).index_contents()
        marker = self._tree.state.next_window_marker(
            previous=self._tree.previous_window_ids(archive), identity=pending.identity
        )
        # Released first, as steering, so the run the marker starts delivers them after it.
        turns.release()
        self._mode.send_marker(marker, trigger_turn=True)
        self._continuation_window_id = marker.identity.current_window_id
        self._navigation = None
        self._requeue_taken()
        for held in self._release_held():
            self._session.follow_up(held.text, images=held.images)

    def _target(self, pending: PendingRollover, branch_ids: Sequence[str]) -> SessionEntry:
        """The entry to navigate to: the boundary, or on a branch without archives the first
        user or custom message before it."""
        manager = self._session.session_manager
        archives = self._tree.archives
        if not archives.has_archives() and not archives.has_rejections():
            for entry_id in branch_ids:
                entry = manager.get_entry(entry_id)
                if _opens_conversation(entry):
                    assert entry is not None
                    return entry
                if entry_id == pending.boundary_entry_id:
                    break
        boundary = manager.get_entry(pending.boundary_entry_id)
        if boundary is None:
            raise RolloverError("Tree archive target is no longer available")
        return boundary

    def _restore_editor(self) -> None:
        # Navigating to a user or custom message offers its text for editing; the boundary
        # is not something the user wrote, so put back what they were composing.
        navigation = self._navigation
        assert navigation is not None
        ui = self._session.ui
        if navigation.target_text is not None and ui.get_editor_text() == navigation.target_text:
            ui.set_editor_text(navigation.saved_editor_text)

    def _requeue_taken(self) -> None:
        """Queue the taken messages again, each in its own queue: after the marker, they
        reach the model in the new window."""
        taken, self._taken = self._taken, []
        for queue, message in taken:
            self._session.enqueue(message, deliver_as=queue)

    def _release_held(self) -> list[InputEvent]:
        with self._lock:
            held, self._held = self._held, []
            self._holding = False
        return held

    def _fail(self, reason: str | None, turns: TurnHold) -> None:
        """End the rollover: editor text and held input back in the editor, other plugins'
        turn requests appended without a turn, and the failure notified (``reason``
        ``None``: the caller leaves reporting to the host)."""
        turns.release(start_turns=False)
        navigation, self._navigation = self._navigation, None
        # Back in their queues, they wait for the next run (none starts after a failure).
        self._requeue_taken()
        held = self._release_held()
        # Input with images cannot go back into the editor: it waits in the follow-up queue,
        # as the taken messages do.
        for event in held:
            if event.images:
                self._session.follow_up(event.text, images=event.images)
        typed = [event.text for event in held if not event.images]
        ui = self._session.ui
        if navigation is not None or typed:
            # What the navigation put in the editor (the target's text) gives way to what the
            # user was composing; anything typed since the rollover began is kept.
            saved = ui.get_editor_text()
            target_text = navigation.target_text if navigation is not None else None
            if navigation is not None and target_text is not None and saved == target_text:
                saved = navigation.saved_editor_text
            ui.set_editor_text("\n\n".join(text for text in (saved, *typed) if text))
        if reason is not None:
            ui.notify(FAILURE_PREFIX + reason, "error")

    # -- during a rollover ------------------------------------------------------------------

    def hold_input(self, event: InputEvent) -> bool:
        """Hold the input (its text and images) while a rollover is under way; True when it
        was held."""
        with self._lock:
            if not self._holding:
                return False
            self._held.append(event)
            return True

    def observe_tree_event(self, event: TreeNavigationEvent) -> bool:
        """Take the summary from this rollover's own navigation event; True when the event
        was that navigation (the caller then skips its user-navigation handling)."""
        navigation = self._navigation
        if navigation is None or not event.internal or event.old_leaf_id != navigation.old_leaf_id:
            return False
        navigation.summary_entry = event.summary_entry
        return True


def _opens_conversation(entry: SessionEntry | None) -> bool:
    if isinstance(entry, CustomMessageEntry):
        return True
    return isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)


def _entry_text(entry: SessionEntry) -> str | None:
    """The text navigation offers for editing when ``entry`` is the target."""
    content: object
    if isinstance(entry, CustomMessageEntry):
        content = entry.content
    elif isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
        content = entry.message.content
    else:
        return None
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(block.text for block in content if isinstance(block, TextContent))
