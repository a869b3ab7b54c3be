"""Tree on long sessions and on files whose parent links the store had to repair: switching
an existing long Pi session to Tree, and rolling over on a branch that runs through a cut
parent cycle."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.long_sessions import write_chain, write_cycle

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import BranchSummaryEntry
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE
from ctxmodes_tree.traversal import ArchiveRejection

pytestmark = pytest.mark.slow

LONG = 200_000


def _switch_and_roll_over(harness, respond, tmp_path: Path, file: Path):
    """Open ``file`` in Tree, run one turn that calls ``new_context``, and let it settle."""
    h = harness(
        [respond.call("new_context"), respond.text("continuing")],
        summaries=["what happened before"],
        session_file=file,
    )
    h.session.prompt("carry on")
    return h


def _count_calls(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` (a model decoder) from now on."""
    count = [0]
    decode = getattr(module, name)

    def counting(data):
        count[0] += 1
        return decode(data)

    monkeypatch.setattr(module, name, counting)
    return count


def _count_entry_models(monkeypatch) -> list[int]:
    """Count the entry models the session manager decodes from now on."""
    from ctxmodes.session import manager as manager_module

    return _count_calls(monkeypatch, manager_module, "entry_from_json")


def _rolled_over(h, old_ids: list[str]) -> None:
    """One verified archive holds every old entry; the active path holds none of them."""
    assert [n for n in h.ui.notifications if n[0] == "error"] == []
    archives = h.mode.parts.state.archives
    assert archives.rejected == ()
    (archive,) = archives.archives
    assert set(old_ids) <= set(archive.entry_ids)
    branch = h.manager.get_branch_ids()
    assert set(branch).isdisjoint(old_ids)
    kinds = [getattr(e, "custom_type", None) or e.type for e in h.manager.get_branch()]
    assert kinds[:4] == [
        "branch_summary",
        TREE_ARCHIVE_CUSTOM_TYPE,
        "codex-context-note-snapshot",
        CONTEXT_WINDOW_CUSTOM_TYPE,
    ]
    # The continuation turn ran in the new window and saw none of the old work.
    continuation = h.requests()[-1]
    assert "request 0 " not in str(continuation.messages)


def test_the_first_rollover_archives_a_long_pi_session(
    harness, respond, tmp_path, monkeypatch
) -> None:
    """A Pi session of 200,000 entries (compacted every 20,000, as Pi does) switched to Tree:
    window 0 opens at the end, and the first rollover archives everything since the first
    message, a path four times longer than the old verification bound. Neither the start
    nor the rollover decodes an entry model per branch entry (that is what made a 1M-entry
    session peak at 8 GB): the branch is read through the store's indexes."""
    file = tmp_path / "long.jsonl"
    ids = write_chain(file, LONG, compact_every=20_000)
    decoded = _count_entry_models(monkeypatch)
    h = _switch_and_roll_over(harness, respond, tmp_path, file)
    # The summary reads the newest entries its budget takes; everything else stays encoded.
    assert decoded[0] < LONG // 10
    _rolled_over(h, ids)
    # A resumed session verifies the same archive from the file.
    h.close()
    with SessionManager.open(file, cwd_override=tmp_path, read_only=True) as manager:
        from ctxmodes_tree.state import TreeState

        state = TreeState(manager)
        assert len(state.archives.archives) == 1
        assert state.archives.rejected == ()
        state.close()


def test_a_long_uncompacted_session_is_read_lazily(harness, respond, tmp_path, monkeypatch) -> None:
    """A Pi session of 200,000 entries that was never compacted: its context is the whole
    branch. Start-up, the request and the first rollover read only the end of it (the store
    keeps the rest as file offsets, the host's context decodes what is read), and the
    rollover still archives everything."""
    from ctxmodes.session import context as context_module

    file = tmp_path / "long.jsonl"
    ids = write_chain(file, LONG)
    built = _count_calls(monkeypatch, context_module, "message_from_json")
    decoded = _count_entry_models(monkeypatch)
    h = _switch_and_roll_over(harness, respond, tmp_path, file)
    _rolled_over(h, ids)
    assert built[0] < LONG // 100
    assert decoded[0] < LONG // 10
    # What the store decoded and kept: the scan's recent region and what was asked for.
    assert len(h.manager._table._decoded) < LONG // 10


@pytest.mark.parametrize("length", [3, 7])
def test_a_rollover_through_a_cut_parent_cycle_leaves_the_cycle_behind(
    harness, respond, tmp_path, length: int
) -> None:
    """The store made the cycle's first entry a root; the first rollover navigates to it.
    The summary must become a root too (its stored parent is on the branch being archived),
    and the archive is verified against the tree the store resolved."""
    file = tmp_path / "cycle.jsonl"
    ids = write_cycle(file, length, tail=2)
    h = _switch_and_roll_over(harness, respond, tmp_path, file)
    _rolled_over(h, ids)
    (summary,) = [e for e in h.entries() if isinstance(e, BranchSummaryEntry)]
    assert summary.parent_id is None
    # Nothing was left behind by a failed attempt.
    assert len(h.of_type(TREE_ARCHIVE_CUSTOM_TYPE)) == 1


def test_a_rejected_archive_is_reported_once_per_session(harness, respond, tmp_path) -> None:
    """A manifest on the active branch that fails verification makes its archive
    unavailable; the user is told which one and why, once, and again in a resumed session."""
    h = harness([respond.call("new_context"), respond.text("one"), respond.text("two")])
    h.session.prompt("start")
    (good,) = h.of_type(TREE_ARCHIVE_CUSTOM_TYPE)
    forged = h.manager.append_custom_entry(
        TREE_ARCHIVE_CUSTOM_TYPE, {**good.data, "protocol": True}
    )
    h.session.prompt("again")
    expected = (
        "warning",
        f"Tree archive {forged} is unavailable: {ArchiveRejection.MALFORMED.value}",
    )
    assert [n for n in h.ui.notifications if n[0] != "info"] == [expected]
    file = h.manager.session_file
    h.close()
    resumed = harness([respond.text("three")], session_file=file)
    resumed.session.prompt("resumed")
    assert [n for n in resumed.ui.notifications if n[0] != "info"] == [expected]
