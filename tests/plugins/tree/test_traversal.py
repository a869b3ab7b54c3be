"""Verifying archive manifests: pointers, ancestry, bounds and cycles."""

from __future__ import annotations

import pytest

from ctxmodes.session.models import CustomEntry
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes_tree.manifest import manifest_for_summary
from ctxmodes_tree.traversal import (
    ArchiveLimits,
    ArchiveRejection,
    VerifiedArchive,
    verify_archive,
)

W0 = WindowIdentity.first("w0")


def window(tape, size: int = 3):
    """A session with a prefix, window 0 (marker + ``size`` exchanges); returns ids."""
    tape.custom("model", {})
    first_user = tape.user("before management")
    boundary = tape.marker(W0)
    for n in range(size):
        tape.user(f"request {n}")
        tape.assistant(f"answer {n}", tool="bash")
        tape.tool_result("bash", f"output {n}")
    return first_user.id, boundary.id


def test_a_rollover_archives_the_exact_interval(tape) -> None:
    first_user, boundary = window(tape)
    interval = [e.id for e in tape.branch()][1:]  # everything from the first user message
    summary, manifest = tape.rollover("w0", boundary, first_user)
    verdict = verify_archive(manifest, tape)
    assert isinstance(verdict, VerifiedArchive)
    assert list(verdict.entry_ids) == interval
    assert verdict.summary == summary
    assert verdict.window_id == "w0"


def test_a_summary_at_a_new_root_has_no_branch_base(tape) -> None:
    first = tape.user("first, a root")
    boundary = tape.marker(W0, parent=first.id)
    tape.user("work")
    summary, manifest = tape.rollover("w0", boundary.id, first.id)
    assert summary.parent_id is None
    verdict = verify_archive(manifest, tape)
    assert isinstance(verdict, VerifiedArchive)
    assert verdict.entry_ids[0] == first.id


def forged(tape, summary, **changes) -> CustomEntry:
    """A manifest for ``summary`` with some fields changed, appended at ``summary``."""
    data = manifest_for_summary("w0", "unused", summary).dump()
    data.update(changes)
    return tape.manifest(data, parent=summary.id)


def test_pointer_checks(tape) -> None:
    first_user, boundary = window(tape)
    summary, _ = tape.rollover("w0", boundary, first_user)
    other = tape.user("not a summary")
    cases = {
        ArchiveRejection.MALFORMED: forged(tape, summary, protocol=9),
        ArchiveRejection.SUMMARY_MISSING: forged(tape, summary, summaryEntryId="nope"),
        ArchiveRejection.NOT_A_SUMMARY: forged(tape, summary, summaryEntryId=other.id),
        ArchiveRejection.SUMMARY_MISMATCH: forged(
            tape, summary, boundaryEntryId=boundary, archivedLeafId=first_user
        ),
        ArchiveRejection.NOT_SUMMARY_CHILD: tape.manifest(
            manifest_for_summary("w0", boundary, summary).dump(), parent=other.id
        ),
    }
    for expected, manifest in cases.items():
        assert verify_archive(manifest, tape) == expected, expected


def test_the_boundary_must_lie_in_the_archived_interval(tape) -> None:
    _, boundary = window(tape)
    tail = tape.user("after")
    summary = tape.summary("s", parent=tail.id)  # base below the boundary
    manifest = forged(tape, summary, boundaryEntryId=boundary)
    assert verify_archive(manifest, tape) == ArchiveRejection.NO_BOUNDARY


def test_a_leaf_that_is_not_below_the_base_reaches_a_root(tape) -> None:
    _, boundary = window(tape)
    side = tape.user("unrelated root", parent=None)
    summary = tape.summary("s", parent=boundary, from_id=side.id)
    manifest = forged(tape, summary, boundaryEntryId=side.id)
    assert verify_archive(manifest, tape) == ArchiveRejection.NO_BRANCH_BASE


def test_missing_parent(tape) -> None:
    first_user, _ = window(tape)
    orphan = tape.user("orphan", parent="gone")
    summary = tape.summary("s", parent=first_user, from_id=orphan.id)
    manifest = forged(tape, summary, boundaryEntryId=orphan.id)
    assert verify_archive(manifest, tape) == ArchiveRejection.MISSING_PARENT


def test_a_cycle_stops_the_walk_at_once(tape) -> None:
    window(tape)
    a = tape.user("a", parent="e-cycle-b")
    b = tape.user("b", parent=a.id)
    # Close the loop: a's parent is b.
    tape.entries[a.id] = a.model_copy(update={"parent_id": b.id})
    base = tape.user("base", parent=None)
    summary = tape.summary("s", parent=base.id, from_id=b.id)
    manifest = forged(tape, summary, boundaryEntryId=a.id)
    tape.lookups = 0
    assert verify_archive(manifest, tape) == ArchiveRejection.CYCLE
    assert tape.lookups <= 3  # the summary, then the two entries of the loop


def test_an_archive_cannot_contain_its_own_summary(tape) -> None:
    first_user, boundary = window(tape)
    summary = tape.summary("s", parent=first_user, from_id="self")
    # The archived leaf is the manifest itself: the walk would pass through the summary.
    manifest = tape.manifest(
        {**manifest_for_summary("w0", boundary, summary).dump(), "archivedLeafId": "e999"},
        parent=summary.id,
    )
    looped = manifest.model_copy(update={"id": "e999"})
    tape.entries["e999"] = looped
    tape.entries[summary.id] = summary.model_copy(update={"from_id": "e999"})
    assert verify_archive(looped, tape) == ArchiveRejection.CYCLE


def test_depth_is_bounded(tape) -> None:
    first_user, boundary = window(tape, size=10)
    _, manifest = tape.rollover("w0", boundary, first_user)
    tape.lookups = 0
    limits = ArchiveLimits(max_depth=5)
    assert verify_archive(manifest, tape, limits) == ArchiveRejection.TOO_DEEP
    assert tape.lookups <= 5 + 1
    assert isinstance(verify_archive(manifest, tape, ArchiveLimits(32)), VerifiedArchive)


@pytest.mark.parametrize("size", [0, 1, 40])
def test_interval_sizes(tape, size: int) -> None:
    first_user, boundary = window(tape, size=size)
    _, manifest = tape.rollover("w0", boundary, first_user)
    verdict = verify_archive(manifest, tape)
    assert isinstance(verdict, VerifiedArchive)
    assert len(verdict.entry_ids) == 2 + 3 * size
