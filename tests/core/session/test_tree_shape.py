"""The tree's shape read from the index is the tree :func:`build_tree` makes, and message
roles read without decoding entries are the roles of the decoded entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.varied_sessions import write_varied_session

from ctxmodes.session import store
from ctxmodes.session.errors import SessionChangedError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.reader import scan_file
from ctxmodes.session.store import EntryTable
from ctxmodes.session.tree import SessionTreeNode
from ctxmodes.session.tree_shape import TreeShape


def _expand(shape: TreeShape, index: int) -> list[int]:
    """The children of ``index`` as the shape has them, a chain taken one entry at a time."""
    end = shape.chain_end(index)
    return [index + 1] if end > index else list(shape.children(index))


def _assert_same_tree(shape: TreeShape, roots: list[SessionTreeNode]) -> None:
    assert shape.roots == [root.index for root in roots]
    stack = list(roots)
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        assert _expand(shape, node.index) == [child.index for child in node.children]
        assert (len(node.children) > 1) == (node.index in shape.forks)
        stack.extend(node.children)
    members = sum(last - first + 1 for root in shape.roots for first, last in shape.chains(root))
    assert members == seen


@pytest.mark.parametrize("hostile", [False, True])
@pytest.mark.parametrize("seed", range(30))
def test_the_shape_is_the_tree(tmp_path: Path, seed: int, hostile: bool) -> None:
    path = tmp_path / "s.jsonl"
    write_varied_session(path, seed, count=50 + 11 * seed, hostile=hostile)
    with SessionManager.open(path, read_only=True, preload=False) as manager:
        shape = manager.get_tree_shape()
        _assert_same_tree(shape, manager.get_tree())
        on_path = set(manager.get_branch_ids())
        ids = shape.ids
        drawn = [index for run in shape.path for index in run]
        assert all(shape.on_path(index) == (ids[index] in on_path) for index in range(len(ids)))
        if not hostile:
            assert [ids[index] for index in drawn] == manager.get_branch_ids()


@pytest.mark.parametrize("preload", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_message_roles_are_the_decoded_roles(tmp_path: Path, seed: int, preload: bool) -> None:
    path = tmp_path / "s.jsonl"
    write_varied_session(path, 500 + seed, count=300)
    table = EntryTable.from_scan(scan_file(path, preload=preload), path, keep=preload)
    try:
        everything = range(len(table))

        def role(index: int) -> object:
            if table.types[index] != "message":
                return None
            message = table.entry(index).get("message")
            return message.get("role") if isinstance(message, dict) else None

        expected = [role(index) for index in everything]
        # As one block of the file, entry by entry, and in pieces.
        assert table.message_roles(everything) == expected
        assert table.message_roles(list(everything)) == expected
        assert table.message_roles(range(7, 90)) == expected[7:90]
        scattered = list(everything)[::-3]
        assert table.message_roles(scattered) == [expected[index] for index in scattered]
        mixed = [*range(5, 100), *range(200, 210), 3, 2, 1, *range(150, 300)]
        assert table.message_roles(mixed) == [expected[index] for index in mixed]
    finally:
        table.close()


def test_a_rewritten_file_is_noticed_when_roles_are_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_varied_session(path, 9, count=200)
    table = EntryTable.from_scan(scan_file(path, preload=False), path, keep=False)
    messages = [index for index in range(len(table)) if table.types[index] == "message"]
    # The same lengths, other ids: every entry is where it was, but not what it was.
    path.write_bytes(path.read_bytes().replace(b'"id": "000000', b'"id": "zzzzzz'))
    with pytest.raises(SessionChangedError, match="rewritten"):
        table.message_roles(range(len(table)))
    with pytest.raises(SessionChangedError, match="rewritten"):
        table.message_roles(messages)
    table.close()


def test_roles_are_read_a_bounded_block_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many entries are asked for at once, no read holds more than the budget and
    one line: a session of large entries never lands in memory whole."""
    path = tmp_path / "s.jsonl"
    write_varied_session(path, 21, count=400)
    budget = 3000
    monkeypatch.setattr(store, "_ROLE_BLOCK_BYTES", budget)
    table = EntryTable.from_scan(scan_file(path, preload=False), path, keep=False)
    longest = max(table._ends[i] - table._starts[i] for i in range(len(table)))
    reads: list[int] = []
    read_spans = table._reader.read_spans  # type: ignore[union-attr]

    def recorded(spans: list[tuple[int, int]]) -> list[memoryview]:
        reads.append(spans[-1][1] - spans[0][0])
        return read_spans(spans)

    monkeypatch.setattr(table._reader, "read_spans", recorded)
    everything = range(len(table))
    expected = [
        (table.peek([i])[0].get("message") or {}).get("role")
        if table.types[i] == "message" and isinstance(table.peek([i])[0].get("message"), dict)
        else None
        for i in everything
    ]
    reads.clear()
    assert table.message_roles(everything) == expected
    assert table.message_roles(list(everything)[::2]) == expected[::2]
    assert len(reads) > 1
    assert max(reads) <= budget + longest
    table.close()
