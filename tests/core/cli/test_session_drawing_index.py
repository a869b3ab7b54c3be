"""``session show`` drawn from the index makes the lines the node-per-entry drawing made.

The reference (``tests/support/node_drawing.py``) builds :meth:`SessionManager.get_tree` and
decodes every entry it describes; the drawing under test reads the tree's shape from the
index and message roles without decoding entries. On sessions of every shape (branches,
compactions, branch summaries, labels, window markers, odd roles, lone surrogates, skipped
lines, duplicated ids, cycles) both must make the same lines, segment for segment, with the
same styles, whether the session was opened with its end preloaded or not.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from support import node_drawing
from support.varied_sessions import write_varied_session

from ctxmodes.cli.session_drawing import active_path_lines, tree_lines, write_lines
from ctxmodes.session.manager import SessionManager


def _assert_same_drawings(path: Path, preload: bool) -> None:
    with SessionManager.open(path, read_only=True, preload=preload) as manager:
        assert list(active_path_lines(manager)) == list(node_drawing.active_path_lines(manager))
        assert list(tree_lines(manager)) == list(node_drawing.tree_lines(manager))


@pytest.mark.parametrize("seed", range(40))
def test_varied_sessions_draw_as_from_nodes(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "varied.jsonl"
    write_varied_session(path, seed, count=60 + 7 * seed)
    _assert_same_drawings(path, preload=seed % 2 == 0)


@pytest.mark.parametrize("seed", range(25))
def test_hostile_sessions_draw_as_from_nodes(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "hostile.jsonl"
    write_varied_session(path, 1000 + seed, count=80 + 5 * seed, hostile=True)
    _assert_same_drawings(path, preload=seed % 2 == 1)


@pytest.mark.slow  # a long session
def test_a_long_session_with_many_windows_draws_as_from_nodes(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    write_varied_session(path, 7, count=6000)
    _assert_same_drawings(path, preload=False)


def test_sessions_managed_in_memory_draw_as_from_nodes(tmp_path: Path) -> None:
    """Appended entries have no stored line yet: their roles come from the cache."""
    with SessionManager.in_memory(tmp_path) as manager:
        first = manager.append_message({"role": "user", "content": "a", "timestamp": 1})
        manager.append_message({"role": "assistant", "content": [], "timestamp": 2})
        manager.branch(first)
        manager.append_custom_entry("ext")
        manager.append_label(first, "start")
        assert list(active_path_lines(manager)) == list(node_drawing.active_path_lines(manager))
        assert list(tree_lines(manager)) == list(node_drawing.tree_lines(manager))


def test_a_version_2_session_shows_its_renamed_roles(tmp_path: Path) -> None:
    """Old files are migrated in memory: the role shown is the migrated one."""
    path = tmp_path / "v2.jsonl"
    header = {"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/p"}
    hook = {
        "type": "message",
        "id": "h1",
        "parentId": None,
        "timestamp": "t",
        "message": {"role": "hookMessage", "customType": "x", "content": "c", "timestamp": 1},
    }
    path.write_text(f"{json.dumps(header)}\n{json.dumps(hook)}\n")
    with SessionManager.open(path, read_only=True, preload=False) as manager:
        lines = list(active_path_lines(manager))
        assert lines == list(node_drawing.active_path_lines(manager))
    assert ("h1", "bold cyan") in lines[1]
    assert (" custom", "green") in lines[1]


@pytest.mark.parametrize("color_system", [None, "truecolor"])
def test_written_lines_match_with_and_without_colour(
    tmp_path: Path, color_system: str | None
) -> None:
    path = tmp_path / "varied.jsonl"
    write_varied_session(path, 3, count=150)

    def written(lines: object) -> str:
        out = io.StringIO()
        console = Console(file=out, width=60, color_system=color_system)  # type: ignore[arg-type]
        write_lines(lines, console)  # type: ignore[arg-type]
        return out.getvalue()

    with SessionManager.open(path, read_only=True) as manager:
        assert written(active_path_lines(manager)) == written(
            node_drawing.active_path_lines(manager)
        )
        assert written(tree_lines(manager)) == written(node_drawing.tree_lines(manager))


def test_drawing_a_session_of_unique_ids_builds_no_map_of_every_id(tmp_path: Path) -> None:
    """A million ids would cost ~100 MB as a map; the drawing finds the few it needs (branch
    summaries' sources, the leaf) by position or in one pass over the id list."""
    path = tmp_path / "varied.jsonl"
    write_varied_session(path, 5, count=3000)
    with SessionManager.open(path, read_only=True, preload=False) as manager:
        assert not manager._table.duplicated
        drawn = list(active_path_lines(manager)) + list(tree_lines(manager))
        assert any("·" in text for line in drawn for text, _ in line)
        assert manager._table._by_id is None
