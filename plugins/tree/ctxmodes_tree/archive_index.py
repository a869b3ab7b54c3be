"""The archives of the active branch, kept up to date as entries are appended.

:class:`TreeArchiveIndex` answers, without rescanning the session, which archived windows
the active branch owns (oldest first), which branch summaries they hide from the model and
which manifests on the branch were rejected.

Cost model. Verifying a manifest walks its archived path once (bounded by
:attr:`~ctxmodes_tree.traversal.ArchiveLimits.max_depth`); the verdict depends only on
persisted, immutable entries and is cached by manifest entry id. An append that extends the
leaf costs O(1), plus one verification when the entry is a manifest. When the leaf moves
(tree navigation, or a resume), the index re-reads the manifests of the new active branch
by walking its parent pointers once, lazily, on the next read, decoding only the manifest
entries on the way. Nothing here is authoritative beyond the session file: a resumed
session rebuilds the index from the persisted entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import compress, repeat
from operator import eq

from ctxmodes.session import CustomEntry, SessionEntry
from ctxmodes_tree.signatures import SummarySignature, summary_signature
from ctxmodes_tree.traversal import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    ArchiveRejection,
    EntryGraph,
    VerifiedArchive,
    is_manifest_entry,
    may_be_manifest_entry,
    verify_archive,
)


class TreeArchiveIndex:
    """Verified archives of the active branch, fed entry by entry.

    :param graph: resolves ids against every entry of the session (archived windows are
        side branches, so the active branch alone cannot resolve them).
    :param current_leaf: where the session's leaf is now; read on every query so that a
        leaf moved without an append (a navigation without summary) is noticed.
    :param on_rejected: told about each rejected manifest (its entry id and the reason) the
        first time it is found on the active branch, so that it is reported once.
    """

    __slots__ = (
        "_active",
        "_current_leaf",
        "_graph",
        "_leaf_id",
        "_limits",
        "_on_rejected",
        "_rejected",
        "_reported",
        "_signatures",
        "_stale",
        "_summary_ids",
        "_verdicts",
        "_window_ids",
    )

    def __init__(
        self,
        graph: EntryGraph,
        limits: ArchiveLimits = DEFAULT_LIMITS,
        *,
        current_leaf: Callable[[], str | None] | None = None,
        on_rejected: Callable[[str, ArchiveRejection], None] | None = None,
    ) -> None:
        self._graph = graph
        self._current_leaf = current_leaf
        self._on_rejected = on_rejected
        self._reported: set[str] = set()
        self._limits = limits
        self._verdicts: dict[str, VerifiedArchive | ArchiveRejection] = {}
        self._leaf_id: str | None = None
        self._stale = False
        self._active: list[VerifiedArchive] = []
        self._rejected: list[tuple[str, ArchiveRejection]] = []
        self._summary_ids: set[str] = set()
        self._window_ids: set[str] = set()
        self._signatures: set[SummarySignature] = set()

    @property
    def limits(self) -> ArchiveLimits:
        return self._limits

    # -- feeding ---------------------------------------------------------------------------

    def observe(self, entry: SessionEntry) -> None:
        """Take an appended entry (the new leaf) into account; observing the leaf again is a
        no-op."""
        if entry.id == self._leaf_id:
            return
        if entry.parent_id != self._leaf_id:
            # The leaf moved before this append (a navigation): the branch is re-read lazily.
            self._stale = True
        self._leaf_id = entry.id
        if not self._stale and is_manifest_entry(entry):
            assert isinstance(entry, CustomEntry)
            self._admit(entry)

    def reset_branch(self, branch: Iterable[SessionEntry]) -> None:
        """Rebuild the active view from the active branch, root first."""
        self._clear_view()
        leaf_id: str | None = None
        for entry in branch:
            leaf_id = entry.id
            if is_manifest_entry(entry):
                assert isinstance(entry, CustomEntry)
                self._admit(entry)
        self._leaf_id = leaf_id
        self._stale = False

    def follow_leaf(self, leaf_id: str | None) -> None:
        """The leaf is now ``leaf_id``; re-read the active branch only if it moved."""
        if leaf_id != self._leaf_id:
            self._leaf_id = leaf_id
            self._stale = True

    # -- reading ---------------------------------------------------------------------------

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def archives(self) -> tuple[VerifiedArchive, ...]:
        """Verified archives on the active branch, oldest first."""
        self._sync()
        return tuple(self._active)

    @property
    def latest(self) -> VerifiedArchive | None:
        self._sync()
        return self._active[-1] if self._active else None

    @property
    def rejected(self) -> tuple[tuple[str, ArchiveRejection], ...]:
        """Manifests on the active branch that were rejected, with the reason."""
        self._sync()
        return tuple(self._rejected)

    def has_archives(self) -> bool:
        self._sync()
        return bool(self._active)

    def has_rejections(self) -> bool:
        self._sync()
        return bool(self._rejected)

    def hides(self, signature: SummarySignature) -> bool:
        """Whether a branch summary with ``signature`` belongs to an archive of this branch."""
        self._sync()
        return signature in self._signatures

    def hidden_signatures(self) -> frozenset[SummarySignature]:
        self._sync()
        return frozenset(self._signatures)

    def archive_for_window(self, window_id: str) -> VerifiedArchive | None:
        self._sync()
        for archive in self._active:
            if archive.window_id == window_id:
                return archive
        return None

    def verdict(self, manifest_entry: CustomEntry) -> VerifiedArchive | ArchiveRejection:
        """The structural verdict on one manifest entry (cached), wherever it is."""
        cached = self._verdicts.get(manifest_entry.id)
        if cached is None:
            cached = verify_archive(manifest_entry, self._graph, self._limits)
            self._verdicts[manifest_entry.id] = cached
        return cached

    # -- internals -------------------------------------------------------------------------

    def _clear_view(self) -> None:
        self._active.clear()
        self._rejected.clear()
        self._summary_ids.clear()
        self._window_ids.clear()
        self._signatures.clear()

    def _admit(self, manifest_entry: CustomEntry) -> None:
        verdict = self.verdict(manifest_entry)
        if isinstance(verdict, ArchiveRejection):
            self._reject(manifest_entry.id, verdict)
            return
        if verdict.summary.id in self._summary_ids or verdict.window_id in self._window_ids:
            self._reject(manifest_entry.id, ArchiveRejection.DUPLICATE)
            return
        self._active.append(verdict)
        self._summary_ids.add(verdict.summary.id)
        self._window_ids.add(verdict.window_id)
        self._signatures.add(summary_signature(verdict.summary))

    def _reject(self, manifest_id: str, reason: ArchiveRejection) -> None:
        self._rejected.append((manifest_id, reason))
        if self._on_rejected is not None and manifest_id not in self._reported:
            self._reported.add(manifest_id)
            self._on_rejected(manifest_id, reason)

    def _sync(self) -> None:
        if self._current_leaf is not None:
            self.follow_leaf(self._current_leaf())
        if not self._stale:
            return
        # The store's parent and type indexes give the new active branch without decoding
        # it; only its custom entries are read, and only its manifests decoded, root first.
        manifests: list[CustomEntry] = []
        graph = self._graph
        leaf = self._leaf_id
        ids = graph.get_branch_ids(leaf) if leaf else []
        types = graph.get_branch_types(leaf) if leaf else []
        # Custom entries are few: find them in one C-level pass over the types.
        for position in compress(range(len(types)), map(eq, types, repeat("custom"))):
            entry_id = ids[position]
            stored = graph.get_entry_json(entry_id)
            if stored is None or not may_be_manifest_entry(stored):
                continue
            entry = graph.get_entry(entry_id)
            if entry is not None and is_manifest_entry(entry):
                assert isinstance(entry, CustomEntry)
                manifests.append(entry)
        self._clear_view()
        for manifest_entry in manifests:
            self._admit(manifest_entry)
        self._stale = False
