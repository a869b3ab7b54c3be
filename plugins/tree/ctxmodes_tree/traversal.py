"""Verifying one archive manifest against the session: pointers, ancestry and bounds.

A manifest is only a claim. Before Tree hides a summary from the model or offers an archived
window to the history tools, it checks that claim against the persisted entries:

1. the manifest data has the manifest shape;
2. ``summaryEntryId`` names a ``branch_summary`` entry that is the manifest's direct parent
   and whose ``fromId`` and ``parentId`` equal ``archivedLeafId`` and ``branchBaseId``;
3. the parent chain from ``archivedLeafId`` reaches ``branchBaseId`` (a true root when it is
   ``null``) within :attr:`ArchiveLimits.max_depth` entries, without a missing parent or a
   cycle, without passing through the manifest or its summary, and through
   ``boundaryEntryId``.

Any failure makes that one archive unavailable, and nothing beyond the failing point is ever
read, so a forged or damaged manifest cannot make Tree read arbitrary entries. The chain is
read from the session's parent index (:class:`EntryGraph`), which decodes no entry and is
acyclic by construction (the store cuts parent cycles when it indexes a file); only the
summary and, for a root base, the first entry of the chain are decoded. The chain is held
as runs of consecutive lines (:meth:`EntryGraph.get_branch_path`), so verifying an archive
costs O(runs), not O(entries), however long the window it archived. Lookups resolve against
every entry of the session, not only the active branch: archived windows are side branches
by design.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ctxmodes.session import BranchPath, BranchSummaryEntry, CustomEntry, SessionEntry
from ctxmodes.windows import StoredEntry

# Re-exported: the limits are part of this module's interface.
from ctxmodes_tree.limits import DEFAULT_LIMITS as DEFAULT_LIMITS
from ctxmodes_tree.limits import ArchiveLimits as ArchiveLimits
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE, TreeArchiveManifest, parse_manifest


class EntryGraph(Protocol):
    """The reads verification and archive history need;
    :class:`~ctxmodes.SessionView` provides them all."""

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        """The entry with this id (the last one, if a file repeats an id), or ``None``."""
        ...

    def get_branch_ids(self, from_id: str | None = None) -> Sequence[str]:
        """Ids from the root to ``from_id``, following parent links, without decoding
        entries; empty when ``from_id`` is unknown. A missing parent ends the chain."""
        ...

    def get_branch_path(self, from_id: str) -> BranchPath:
        """The same ids as a :class:`~ctxmodes.session.branch_path.BranchPath`, whose length,
        membership and slices cost O(runs of consecutive lines), not O(entries)."""
        ...

    def get_parent_id(self, entry_id: str) -> str | None:
        """The entry's parent as the session tree has it: ``None`` for a root, including an
        entry the store made a root to cut a parent cycle."""
        ...

    def get_branch_types(self, from_id: str | None = None) -> Sequence[object]:
        """The stored ``type`` of each entry of :meth:`get_branch_ids`, decoding nothing."""
        ...

    def get_entry_json(self, entry_id: str) -> StoredEntry | None:
        """The entry with this id as stored (its JSON object), or ``None``."""
        ...


class ArchiveRejection(StrEnum):
    """Why an archive is unavailable; the value is a short phrase for diagnostics."""

    MALFORMED = "malformed manifest data"
    SUMMARY_MISSING = "its branch summary does not exist"
    NOT_A_SUMMARY = "its summary id names an entry that is not a branch summary"
    NOT_SUMMARY_CHILD = "the manifest is not the direct child of its summary"
    SUMMARY_MISMATCH = "the summary's id, fromId or parentId disagree with the manifest"
    MISSING_PARENT = "the archived path has a missing parent"
    CYCLE = "the archived path revisits an entry"
    TOO_DEEP = "the archived path exceeds the depth bound"
    NO_BRANCH_BASE = "the archived path reaches a root before its branch base"
    NO_BOUNDARY = "the archived path does not contain the window boundary"
    DUPLICATE = "its summary or window is already archived on this branch"


@dataclass(frozen=True, slots=True)
class VerifiedArchive:
    """An archive whose manifest, summary and archived path all check out.

    :param entry_ids: the archived interval, oldest first, branch base excluded (a
        :class:`~ctxmodes.session.branch_path.BranchPath`: holding it costs nothing per
        entry).
    """

    manifest_entry_id: str
    manifest: TreeArchiveManifest
    summary: BranchSummaryEntry
    entry_ids: Sequence[str]

    @property
    def window_id(self) -> str:
        return self.manifest.window_id


def is_manifest_entry(entry: SessionEntry) -> bool:
    """Whether ``entry`` is a ``codex-context-tree-archive`` custom entry (valid or not)."""
    return isinstance(entry, CustomEntry) and entry.custom_type == TREE_ARCHIVE_CUSTOM_TYPE


def may_be_manifest_entry(entry: StoredEntry) -> bool:
    """Whether a stored entry can be a manifest entry: a cheap test that rules out the others
    without decoding them (:func:`is_manifest_entry` decides)."""
    return entry.get("type") == "custom" and entry.get("customType") == TREE_ARCHIVE_CUSTOM_TYPE


def verify_archive(
    manifest_entry: CustomEntry, graph: EntryGraph, limits: ArchiveLimits = DEFAULT_LIMITS
) -> VerifiedArchive | ArchiveRejection:
    """Check one manifest entry; the result depends only on persisted entries, so callers
    may cache it by entry id."""
    manifest = parse_manifest(manifest_entry.data)
    if manifest is None:
        return ArchiveRejection.MALFORMED
    summary = graph.get_entry(manifest.summary_entry_id)
    if summary is None:
        return ArchiveRejection.SUMMARY_MISSING
    if not isinstance(summary, BranchSummaryEntry):
        return ArchiveRejection.NOT_A_SUMMARY
    if manifest_entry.parent_id != summary.id:
        return ArchiveRejection.NOT_SUMMARY_CHILD
    if not manifest.agrees_with(summary):
        return ArchiveRejection.SUMMARY_MISMATCH
    interval = _archived_interval(manifest, graph, limits.max_depth)
    if isinstance(interval, ArchiveRejection):
        return interval
    if manifest.summary_entry_id in interval or manifest_entry.id in interval:
        # The archive would contain itself: its summary and manifest sit below the base.
        return ArchiveRejection.CYCLE
    if manifest.boundary_entry_id not in interval:
        return ArchiveRejection.NO_BOUNDARY
    return VerifiedArchive(manifest_entry.id, manifest, summary, interval)


def _archived_interval(
    manifest: TreeArchiveManifest, graph: EntryGraph, max_depth: int
) -> Sequence[str] | ArchiveRejection:
    """The entries after the branch base up to the archived leaf, oldest first."""
    chain = graph.get_branch_path(manifest.archived_leaf_id)
    if not chain:
        return ArchiveRejection.MISSING_PARENT
    base = manifest.branch_base_id
    if base is None:
        if len(chain) > max_depth:
            return ArchiveRejection.TOO_DEEP
        return chain if _is_true_root(chain[0], graph) else _why_cut(chain[0], graph)
    # A path never repeats an id (links resolve by id, to one entry), and the path's runs
    # of consecutive lines place the base without listing the path.
    position = chain.position(base)
    if position is None:
        return _why_cut(chain[0], graph)
    if len(chain) - 1 - position > max_depth:
        return ArchiveRejection.TOO_DEEP
    return chain[position + 1 :]


def _is_true_root(entry_id: str, graph: EntryGraph) -> bool:
    # A root of the tree the store resolved: a cycle's cut entry is one (the rollover that
    # navigated to it made its summary a root), a missing parent is not.
    return graph.get_parent_id(entry_id) is None and graph.get_entry(entry_id) is not None


def _why_cut(first_id: str, graph: EntryGraph) -> ArchiveRejection:
    """Why the chain ended at ``first_id`` without meeting the branch base."""
    first = graph.get_entry(first_id)
    parent = first.parent_id if first is not None else None
    if parent is None:
        return ArchiveRejection.NO_BRANCH_BASE
    if parent == first_id or graph.get_entry(parent) is not None:
        # The parent exists, so the chain was cut to break a cycle.
        return ArchiveRejection.CYCLE
    return ArchiveRejection.MISSING_PARENT
