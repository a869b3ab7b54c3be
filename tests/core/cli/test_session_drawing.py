"""Drawing a session line by line: the whole tree (``--full``) and the width of a line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from ctxmodes.cli import main
from ctxmodes.cli.session_drawing import draw_tree, write_lines
from ctxmodes.session.manager import SessionManager


def _render(manager: SessionManager, width: int = 200) -> list[str]:
    out = io.StringIO()
    draw_tree(manager, Console(file=out, width=width, color_system=None))
    return out.getvalue().splitlines()


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


def test_thousands_of_nested_side_branches_draw_without_recursion(tmp_path: Path) -> None:
    def say(text: str) -> str:
        return manager.append_message({"role": "user", "content": text, "timestamp": 1})

    with SessionManager.in_memory(tmp_path) as manager:
        root = say("root")
        side = say("side 0")  # off the active path: each side entry branches again
        for step in range(1, 1500):
            say("leaf")
            manager.branch(side)
            side = say(f"side {step}")
        manager.branch(root)
        leaf = say("on the path")
        lines = _render(manager, width=10_000)
    assert len(lines) == 1 + 2 + 1500 + 1499
    assert lines[1] == f"├── ● {root} user"
    assert lines[-1] == f"└── ● {leaf} user  ◀ leaf"
    # One level deeper per side branch point, drawn by a loop, not by recursion.
    assert f"{'    ' * 1500}└── {side} user" in [line.replace("│", " ") for line in lines]


def test_a_line_wider_than_the_console_ends_in_an_ellipsis() -> None:
    out = io.StringIO()
    console = Console(file=out, width=10, color_system=None)
    write_lines([[("abc", "bold"), ("日本語です", "")], [("exactly 10", "")]], console)
    assert out.getvalue().splitlines() == ["abc日本語…", "exactly 10"]


def test_characters_that_steer_a_terminal_are_written_as_escapes() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None)
    hostile = "a\x1b]0;title\x07b\u202ec\nd\x9b1m"
    write_lines([[(hostile, "bold"), (" tail", "")]], console)
    assert out.getvalue() == "a\\u001b]0;title\\u0007b\\u202ec\\u000ad\\u009b1m tail\n"
    # The width counted is the escaped text's: the line is cut as it is shown.
    out.seek(0)
    out.truncate()
    write_lines([[("\x1b" * 10, "")]], Console(file=out, width=20, color_system=None))
    assert out.getvalue() == ("\\u001b" * 10)[:19] + "…\n"


def test_show_prints_what_a_session_holds_and_never_obeys_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A path that reads as rich markup ("[/bold]" closes no tag), control characters in
    # every field shown.
    directory = tmp_path / "[" / "bold][red]"
    directory.mkdir(parents=True)
    path = directory / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s\x1b[31m", "timestamp": "t", "cwd": "/p\x07"}
    entries = [
        {
            "type": "message",
            "id": "u\x1b]0;x\x07",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "us\x1b[2Jer\ud800", "content": "q"},
        },
        {
            "type": "label",
            "id": "l1",
            "parentId": "u\x1b]0;x\x07",
            "timestamp": "t",
            "targetId": "u\x1b]0;x\x07",
            "label": "\u202eevil",
        },
        {
            "type": "session_info",
            "id": "n1",
            "parentId": "l1",
            "timestamp": "t",
            "name": "n\x1b[1m",
        },
    ]
    path.write_text("\n".join(json.dumps(line) for line in [header, *entries]) + "\n")
    for full in ([], ["--full"]):
        assert main(["session", "show", str(path), *full]) == 0
        out = capsys.readouterr().out
        assert not any(character in out for character in "\x1b\x07\u202e")
        lines = out.splitlines()
        assert lines[0].startswith(f"{path}  id s\\u001b[31m  cwd /p\\u0007  mode ")
        assert lines[1] == "session n\\u001b[1m"
        assert "u\\u001b]0;x\\u0007" in lines[2]
        assert "us\\u001b[2Jer\ufffd [\\u202eevil]" in lines[2]


@pytest.mark.parametrize("color_system", [None, "truecolor"])
def test_an_ordinary_header_line_is_written_as_rich_prints_it(color_system: str | None) -> None:
    """The header is no longer rich markup (a path or id could be read as markup); for
    ordinary values it is the same bytes, unwrapped however narrow the console."""
    path, about = "/tmp/s.jsonl", "  id abc  cwd /p  mode off (default)  3 entries  leaf u1"
    printed, written = io.StringIO(), io.StringIO()
    Console(file=printed, width=30, color_system=color_system).print(  # type: ignore[arg-type]
        f"[bold]{path}[/bold]{about}", highlight=False, soft_wrap=True
    )
    console = Console(file=written, width=30, color_system=color_system)  # type: ignore[arg-type]
    write_lines([[(path, "bold"), (about, "")]], console, fit=False)
    assert written.getvalue() == printed.getvalue()
