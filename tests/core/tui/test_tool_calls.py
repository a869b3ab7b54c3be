"""A call of the core's tools is shown in Pi's words for it: Pi's own renderers
(``pi_tool_calls.mjs``) judge the line for commands, reads with and without a line range,
edits and writes, paths under the home folder, empty and invalid arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.tui import render
from ctxmodes.tui.app import plain
from ctxmodes.tui.tool_calls import call_text

SCRIPT = Path(__file__).parents[2] / "support" / "pi_tool_calls.mjs"
HOME = str(Path.home())

CALLS: list[tuple[str, dict[str, object]]] = [
    ("bash", {"command": "ls -la; echo done"}),
    ("bash", {"command": "make test", "timeout": 60}),
    ("bash", {"command": "sleep 1", "timeout": 2.5}),
    ("bash", {"command": "printf 'a\\n'\nsecond line"}),
    ("bash", {"command": ""}),
    ("bash", {"command": 5}),
    ("bash", {}),
    ("read", {"path": f"{HOME}/app/main.py"}),
    ("read", {"path": "src/x.py", "offset": 10, "limit": 20}),
    ("read", {"path": "src/x.py", "offset": 10}),
    ("read", {"path": "src/x.py", "limit": 5}),
    ("read", {"file_path": "a.py"}),
    ("read", {"path": 3}),
    ("read", {"path": ""}),
    ("edit", {"path": f"{HOME}/x.py", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("edit", {"file_path": "/etc/hosts", "oldText": "a", "newText": "b"}),
    ("write", {"path": "notes.md", "content": "hello\nworld"}),
    ("write", {"path": None, "content": ""}),
]


@pytest.mark.pi
def test_each_call_reads_as_pi_s_renderer_writes_it() -> None:
    drawn = run_pi_script(SCRIPT, stdin=json.dumps(CALLS))
    for (name, arguments), pi_lines in zip(CALLS, drawn, strict=True):
        ours = call_text(name, arguments)
        assert ours is not None
        # Pi shows a write's content under its call; the call is its first line.
        expected = pi_lines[:1] if name == "write" else pi_lines
        assert ours.split("\n") == expected, (name, arguments)


def test_the_transcript_shows_one_line_of_it_and_json_for_other_tools() -> None:
    assert plain(render.tool_call("bash", {"command": "make\ntest"}, 80, None)) == "→ $ make …"
    long = plain(render.tool_call("bash", {"command": "x" * 300}, 400, None))
    assert len(long) == len("→ ") + 100
    assert long.endswith("…")
    assert plain(render.tool_call("notes", {"action": "read_file"}, 80, None)) == (
        '→ notes {"action": "read_file"}'
    )
