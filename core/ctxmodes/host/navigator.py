"""Moving the leaf through the session tree: Pi's ``navigateTree``.

One navigation, on an idle session::

    ctx_session_before_tree (cancel, supply the summary, change instructions or label)
      → branch summary call (only with ``summarize`` and entries to summarize)
      → the leaf moves (a user or custom-message target: to its parent, its text becomes
        editor text) and the summary entry is appended there, or the label is set
      → context rebuilt → ctx_session_tree

A navigation without summary and label writes nothing. The caller marks the session as
summarizing for the whole navigation, so it is never idle in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxmodes.abort import AbortController, AbortedError
from ctxmodes.compaction import generate_branch_summary
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import TreeNavigationEvent, TreePreparation
from ctxmodes.host import records
from ctxmodes.host.core import SessionCore
from ctxmodes.host.errors import NoModelError
from ctxmodes.hostapi import NavigationRequest, TreeNavigationResult
from ctxmodes.session.models import (
    BranchSummaryEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
    TextContent,
    UserMessage,
)

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


def entry_not_found(entry_id: str) -> CtxmodesError:
    return CtxmodesError(f"Entry {entry_id} not found")


def editor_text_of(entry: SessionEntry) -> str | None:
    """The text a navigation to ``entry`` hands back for editing: the text of a user or
    custom message (its text blocks joined), ``None`` for every other entry."""
    if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
        content: Any = entry.message.content
    elif isinstance(entry, CustomMessageEntry):
        content = entry.content
    else:
        return None
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


class Navigator:
    """Tree navigation of one session."""

    def __init__(self, core: SessionCore) -> None:
        self._core = core

    def navigate(self, request: NavigationRequest) -> TreeNavigationResult:
        target_id, summarize, internal = request.target_id, request.summarize, request.internal
        # A ``ctx_session_before_tree`` decision may change these three.
        custom_instructions = request.custom_instructions
        replace_instructions = request.replace_instructions
        label = request.label
        core = self._core
        manager = core.manager
        old_leaf = manager.get_leaf_id()
        if summarize and core.provider is None:
            raise NoModelError("No model available for summarization")
        target = manager.get_entry(target_id)
        if target is None:
            raise entry_not_found(target_id)
        abandoned = _AbandonedBranch(manager, old_leaf, target_id) if summarize else None
        entries: Sequence[SessionEntry] = abandoned.entries if abandoned is not None else ()
        common = abandoned.common_ancestor_id if abandoned is not None else None
        preparation = TreePreparation(
            target_id=target_id,
            old_leaf_id=old_leaf,
            common_ancestor_id=common,
            entries_to_summarize=entries,
            summarize=summarize,
            custom_instructions=custom_instructions,
            label=label,
            internal=internal,
            replace_instructions=replace_instructions,
        )
        decision = core.hook(core.relay.session_before_tree, preparation)
        cancelled = decision is not None and decision.cancel
        core.emit(records.TreeNavigationStarted(target_id, old_leaf, cancelled))
        if cancelled:
            return TreeNavigationResult(cancelled=True, new_leaf_id=old_leaf)
        if decision is not None:
            if decision.custom_instructions is not None:
                custom_instructions = decision.custom_instructions
            if decision.replace_instructions is not None:
                replace_instructions = decision.replace_instructions
            if decision.label is not None:
                label = decision.label

        summary: str | None = None
        details: Any = None
        usage: Any = None
        from_plugin = False
        if summarize and decision is not None and decision.summary is not None:
            summary, details, from_plugin = decision.summary, decision.summary_details, True
        elif summarize and entries:
            controller = AbortController()
            core.activity_controller = controller
            model = core.model
            try:
                assert abandoned is not None
                result = generate_branch_summary(
                    entries,
                    core.summarizer(controller.signal, "branch_summary"),
                    summaries=abandoned.summaries(),
                    context_window=None if model is None else model.context_window,
                    reserve_tokens=core.options.branch_summary.reserve_tokens,
                    model_max_tokens=None if model is None else model.max_tokens,
                    custom_instructions=custom_instructions,
                    replace_instructions=replace_instructions,
                )
            except AbortedError:
                return TreeNavigationResult(cancelled=True, aborted=True, new_leaf_id=old_leaf)
            finally:
                core.activity_controller = None
            summary, details, usage = result.summary, result.details, result.usage

        editor_text = editor_text_of(target)
        # The parent as the store resolved it: an entry it made a root to cut a parent cycle
        # has no parent to move to, whatever its stored parentId says.
        new_leaf = manager.get_parent_id(target_id) if editor_text is not None else target_id
        summary_entry: BranchSummaryEntry | None = None
        if summary:
            summary_id = manager.branch_with_summary(new_leaf, summary, details, from_plugin, usage)
            found = manager.get_entry(summary_id)
            assert isinstance(found, BranchSummaryEntry)
            summary_entry = found
            if label:
                manager.append_label(summary_id, label)
        elif new_leaf is None:
            manager.reset_leaf()
        else:
            manager.branch(new_leaf)
        if label and not summary:
            manager.append_label(target_id, label)

        core.rebuild_messages()
        leaf = manager.get_leaf_id()
        event = TreeNavigationEvent(old_leaf, leaf, summary_entry, internal)
        core.hook(core.relay.session_tree, event)
        core.emit(records.TreeNavigated(old_leaf, leaf, summary_entry, internal, editor_text))
        return TreeNavigationResult(
            cancelled=False,
            editor_text=editor_text,
            summary_entry=summary_entry,
            new_leaf_id=leaf,
        )


class _AbandonedBranch:
    """The entries a navigation from ``old_leaf`` to ``target_id`` leaves behind, oldest
    first, decoded only as they are read: the old path below the deepest entry it shares
    with the target's path (paths as the store resolved them, so a cut parent cycle ends
    one). The first rollover of a long session abandons its whole branch, and the summary
    reads only its newest entries and its earlier summaries."""

    def __init__(self, manager: SessionManager, old_leaf: str | None, target_id: str) -> None:
        self._manager = manager
        self._old_leaf = old_leaf
        old_path = manager.get_branch_ids(old_leaf) if old_leaf is not None else []
        shared = _shared_prefix(old_path, manager.get_branch_ids(target_id))
        self._shared = shared
        self.common_ancestor_id = old_path[shared - 1] if shared else None
        self.entries: Sequence[SessionEntry] = (
            manager.get_branch(old_leaf)[shared:] if old_leaf is not None else ()
        )

    def summaries(self) -> list[SessionEntry]:
        """The branch summaries among :attr:`entries`, found by type without decoding."""
        if self._old_leaf is None:
            return []
        types = self._manager.get_branch_types(self._old_leaf)[self._shared :]
        return [self.entries[i] for i, kind in enumerate(types) if kind == "branch_summary"]


def _shared_prefix(first: Sequence[str], second: Sequence[str]) -> int:
    """How many leading ids two root-first paths share. Paths of one tree agree up to their
    common ancestor and differ from there on, so a binary search finds it."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[middle - 1] == second[middle - 1]:
            low = middle
        else:
            high = middle - 1
    return low
