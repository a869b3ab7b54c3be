"""A branch path answers like the list of its ids, without listing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxmodes.session.manager import SessionManager


def grow(manager: SessionManager, count: int, tag: str) -> list[str]:
    return [
        manager.append_message({"role": "user", "content": f"{tag}{n}", "timestamp": 1})
        for n in range(count)
    ]


@pytest.fixture
def branched(tmp_path: Path) -> SessionManager:
    """A trunk, a side branch off its middle, and more work appended to the trunk's end."""
    manager = SessionManager.in_memory(tmp_path)
    trunk = grow(manager, 6, "t")
    manager.branch(trunk[2])
    grow(manager, 4, "s")
    manager.branch(trunk[-1])
    grow(manager, 3, "u")
    return manager


def test_every_leaf_gives_the_ids_of_its_branch(branched: SessionManager) -> None:
    for entry in branched.get_entries():
        expected = branched.get_branch_ids(entry.id)
        path = branched.get_branch_path(entry.id)
        assert list(path) == expected
        assert list(reversed(path)) == expected[::-1]
        assert len(path) == len(expected)
        assert [path[i] for i in range(-len(expected), len(expected))] == expected * 2
        for position, entry_id in enumerate(expected):
            assert path.position(entry_id) == position
            assert path.index(entry_id) == position
            assert entry_id in path


def test_slices_and_membership_follow_the_list(branched: SessionManager) -> None:
    leaf = branched.get_leaf_id()
    assert leaf is not None
    expected = branched.get_branch_ids(leaf)
    path = branched.get_branch_path(leaf)
    for start in range(-len(expected) - 1, len(expected) + 2):
        for stop in (None, -1, 0, 3, len(expected)):
            assert list(path[start:stop]) == expected[start:stop]
    side = [e.id for e in branched.get_entries() if e.id not in expected]
    assert side
    for entry_id in side:
        assert entry_id not in path
        assert path.position(entry_id) is None
        with pytest.raises(ValueError, match="not on the branch path"):
            path.index(entry_id)
    tail = path[3:]
    assert expected[1] not in tail
    assert tail.index(expected[4]) == 1
    with pytest.raises(ValueError, match="not on the branch path"):
        path.index(expected[0], 1)
    with pytest.raises(IndexError):
        path[len(expected)]
    with pytest.raises(ValueError, match="step 1"):
        path[::2]


def test_equal_paths_compare_and_hash_alike(branched: SessionManager) -> None:
    leaf = branched.get_leaf_id()
    assert leaf is not None
    first, again = branched.get_branch_path(leaf), branched.get_branch_path(leaf)
    assert first == again
    assert hash(first) == hash(again)
    assert first[1:] != first
    assert branched.get_branch_path("no such id") == branched.get_branch_path("nor this")
    assert len(branched.get_branch_path("no such id")) == 0


def test_a_chain_of_consecutive_lines_is_one_run(tmp_path: Path) -> None:
    # What makes a cold archive check flat: a window appended line after line is one run.
    manager = SessionManager.in_memory(tmp_path)
    ids = grow(manager, 2_000, "w")
    path = manager.get_branch_path(ids[-1])
    assert repr(path) == "BranchPath(2000 ids in 1 runs)"
    assert path.position(ids[1_000]) == 1_000
