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
    ("grep", {"pattern": "def main", "path": f"{HOME}/app", "glob": "*.py", "limit": 5}),
    ("grep", {"pattern": "x"}),
    ("grep", {"pattern": 3, "path": ""}),
    ("find", {"pattern": "**/*.ts", "path": "src", "limit": 20}),
    ("find", {"pattern": ""}),
    ("ls", {"path": f"{HOME}/app", "limit": 2.5}),
    ("ls", {}),
    ("ls", {"path": 7}),
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


def _compact_reads(project: Path) -> list[dict[str, object]]:
    return [
        {"path": ".pi/skills/release/SKILL.md"},
        {"path": f"{project}/skills/lint/SKILL.md", "offset": 1, "limit": 40},
        {"path": "@skills/lint/SKILL.md"},
        {"path": "~/.pi/agent/skills/deploy/SKILL.md"},
        {"path": "SKILL.md"},
        {"path": "AGENTS.md"},
        {"file_path": "packages/api/CLAUDE.md", "offset": 5},
        {"path": "/etc/AGENTS.md"},
        {"path": "../AGENTS.override.md"},
        {"path": "./docs/../AGENTS.MD"},
        {"path": "README.md"},
        {"path": "src/skill.md"},
    ]


@pytest.mark.pi
def test_a_read_of_a_skill_or_of_instructions_shows_as_pi_shows_it_before_expanding(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    reads = _compact_reads(project)
    drawn = run_pi_script(
        SCRIPT, stdin=json.dumps([("read", arguments, str(project)) for arguments in reads])
    )
    for arguments, pi_lines in zip(reads, drawn, strict=True):
        shown = plain(render.tool_call("read", arguments, 200, "ctrl+o to expand", project))
        assert shown == f"→ {pi_lines[0]}", arguments


def test_a_replayed_read_of_a_skill_names_no_key_and_other_reads_keep_their_path(
    tmp_path: Path,
) -> None:
    skill = {"path": "skills/lint/SKILL.md"}
    assert plain(render.tool_call("read", skill, 80, None, tmp_path)) == "→ [skill] lint"
    plain_read = plain(render.tool_call("read", {"path": "src/x.py"}, 80, "ctrl+o", tmp_path))
    assert plain_read == "→ read src/x.py"
