from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report, render_tree


def _render(manager: SessionManager) -> list[str]:
    console = Console(width=200, record=True, color_system=None)
    console.print(render_tree(manager))
    return console.export_text().splitlines()


def test_tree_is_flat_between_branch_points(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        u1 = manager.append_message({"role": "user", "content": "a", "timestamp": 1})
        u2 = manager.append_message({"role": "user", "content": "b", "timestamp": 2})
        u3 = manager.append_message({"role": "user", "content": "c", "timestamp": 3})
        manager.branch(u1)
        other = manager.append_custom_entry("ext")
        manager.append_label(other, "side")
        manager.branch(u3)
        lines = _render(manager)
    # The active path goes on at one indent; the side branch hangs under its branch point.
    assert lines[1:] == [
        f"├── ● {u1} user",
        f"│   └── {other} custom [side]",
        f"│       └── {manager.get_entries()[-1].id} label",
        f"├── ● {u2} user",
        f"└── ● {u3} user  ◀ leaf",
    ]


def test_long_linear_sessions_do_not_nest(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        for step in range(300):
            manager.append_message({"role": "user", "content": str(step), "timestamp": step})
        lines = _render(manager)
    assert len(lines) == 301
    assert max(len(line) - len(line.lstrip("│ ├└─")) for line in lines) <= 4


def test_context_report_positions(oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "branch_simple.jsonl", read_only=True) as manager:
        leaf = context_report(manager)
        first = manager.get_branch_ids()[0]
        at_first = context_report(manager, first)
        empty = context_report(manager, "null")
        assert leaf["leafId"] == manager.get_leaf_id()
        assert at_first["branchIds"] == [first]
        assert empty == {
            "leafId": None,
            "branchIds": [],
            "contextEntryIds": [],
            "context": {"messages": [], "thinkingLevel": "off", "model": None},
        }
        assert context_report(manager) == leaf  # positions do not move the leaf
