"""The incremental archive index: active-branch view, duplicates, navigation, cost."""

from __future__ import annotations

from ctxmodes.windows.identity import WindowIdentity
from ctxmodes_tree.archive_index import TreeArchiveIndex
from ctxmodes_tree.signatures import summary_signature
from ctxmodes_tree.traversal import ArchiveRejection


def rollovers(tape, count: int, index: TreeArchiveIndex | None = None):
    """``count`` rollovers as Tree performs them; ``index`` observes every append."""
    if index is not None:
        tape.listeners.append(index.observe)
    first = tape.user("first request")
    identity = WindowIdentity.first("w0")
    boundary = tape.marker(identity)
    target = first.id
    summaries = []
    for n in range(count):
        tape.user(f"work {n}")
        tape.assistant(f"done {n}")
        summary, _ = tape.rollover(identity.current_window_id, boundary.id, target, f"s{n}")
        summaries.append(summary)
        tape.custom("codex-context-note-snapshot", {"protocol": 1, "timestamp": 1, "files": []})
        identity = identity.advance(f"w{n + 1}")
        boundary = tape.marker(identity)
        target = boundary.id
    return summaries


def test_rebuild_from_the_branch(tape) -> None:
    summaries = rollovers(tape, 3)
    index = TreeArchiveIndex(tape)
    index.reset_branch(tape.branch())
    assert [a.window_id for a in index.archives] == ["w0", "w1", "w2"]
    assert [a.summary for a in index.archives] == summaries
    assert index.hidden_signatures() == {summary_signature(s) for s in summaries}
    assert not index.has_rejections()


def test_incremental_equals_rebuild(tape) -> None:
    index = TreeArchiveIndex(tape)
    rollovers(tape, 4, index)
    rebuilt = TreeArchiveIndex(tape)
    rebuilt.reset_branch(tape.branch())
    assert index.archives == rebuilt.archives
    assert index.hidden_signatures() == rebuilt.hidden_signatures()


def test_appends_cost_constant_lookups(tape) -> None:
    index = TreeArchiveIndex(tape)
    rollovers(tape, 2, index)
    index.archives  # noqa: B018 - settle the view
    tape.lookups = 0
    for n in range(200):
        tape.user(f"more {n}")
        index.observe(tape.entries[tape.leaf])
        assert index.has_archives()
    assert tape.lookups == 0


def test_reading_a_new_branch_decodes_only_its_manifests(tape) -> None:
    rollovers(tape, 2)
    for n in range(100):
        tape.user(f"more {n}")
    index = TreeArchiveIndex(tape)
    tape.lookups = 0
    index.follow_leaf(tape.leaf)
    assert len(index.archives) == 2
    # Two manifests, and each verification's reads (its summary, the root of its path).
    assert tape.lookups <= 2 * 3


def test_duplicate_window_or_summary_is_rejected(tape) -> None:
    rollovers(tape, 1)
    boundary = tape.leaf
    tape.user("more work")
    # A second archive that claims window w0 again.
    _, again = tape.rollover("w0", boundary, boundary)
    index = TreeArchiveIndex(tape)
    index.reset_branch(tape.branch())
    assert [a.window_id for a in index.archives] == ["w0"]
    assert index.rejected == ((again.id, ArchiveRejection.DUPLICATE),)


def test_navigation_rereads_the_new_branch(tape) -> None:
    index = TreeArchiveIndex(tape)
    rollovers(tape, 2, index)
    assert len(index.archives) == 2
    # The user navigates back into the first archived window and continues there.
    archived = index.archives[0].entry_ids[-1]
    tape.user("continuing an old branch", parent=archived)
    index.observe(tape.entries[tape.leaf])
    assert index.archives == ()
    assert index.hidden_signatures() == frozenset()
    # ... and back to the main line.
    main_leaf = [e.id for e in tape if e.type == "custom_message"][-1]
    index.follow_leaf(main_leaf)
    assert len(index.archives) == 2


def test_manual_summaries_and_side_branch_manifests_are_not_archives(tape) -> None:
    rollovers(tape, 1)
    leaf = tape.leaf
    manual = tape.summary("a manual summary", parent=leaf, from_id=leaf)
    index = TreeArchiveIndex(tape)
    index.reset_branch(tape.branch())
    assert summary_signature(manual) not in index.hidden_signatures()
    assert len(index.archives) == 1


def test_a_rejected_manifest_is_reported_and_hides_nothing(tape) -> None:
    first = tape.user("first")
    tape.marker(WindowIdentity.first("w0"))
    summary = tape.summary("s", parent=first.parent_id)
    tape.manifest({"protocol": 1, "strategy": "codex-context-tree"}, parent=summary.id)
    index = TreeArchiveIndex(tape)
    index.reset_branch(tape.branch())
    assert index.archives == ()
    assert index.has_rejections()
    assert not index.hides(summary_signature(summary))
