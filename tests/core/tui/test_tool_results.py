"""What shows under a tool's call once it finished, and under a ``!`` command, judged by the
real Pi's components drawing the same results: a command's last rows under a count of those
left out, nothing under a read or a write that succeeded, an error in full, another tool's
first lines, what a write writes, and how a ``!`` command ended."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_oracle import run_pi_script
from support.terminal import ENTER, run_terminal

from ctxmodes.session.models import BashExecutionMessage
from ctxmodes.tui import render, tool_results
from ctxmodes.tui.app import plain

PI_SCRIPT = Path(__file__).parents[2] / "support" / "pi_tool_results.mjs"
EXPAND = "ctrl+o to expand"
CTRL_O = "\x0f"

SHELL_DETAILS = {
    "truncation": {
        "truncated": True,
        "truncatedBy": "lines",
        "outputLines": 4,
        "totalLines": 3000,
    },
    "fullOutputPath": "/tmp/pi-bash-1.log",
}
BYTES_DETAILS = {
    "truncation": {"truncated": True, "truncatedBy": "bytes", "outputLines": 2, "maxBytes": 51200}
}

#: A grep that reached every limit.
GREP_LIMITS = {
    "matchLimitReached": 100,
    "truncation": {"truncated": True, "maxBytes": 51200},
    "linesTruncated": True,
}


def numbered(count: int, words: int = 0) -> str:
    return "\n".join(f"line {n}" + " word" * (n % (words + 1)) for n in range(1, count + 1))


#: [tool, arguments, result text, details, is error, terminal width]
WRITTEN: list[list[Any]] = [
    ["bash", {"command": "ls"}, "a\nb", {}, False, 80],
    ["bash", {"command": "ls"}, numbered(5), {}, False, 80],
    ["bash", {"command": "ls"}, numbered(6), {}, False, 80],
    ["bash", {"command": "make test"}, numbered(40, 9), {}, False, 30],
    ["bash", {"command": "make"}, "\n\n  indented\n\n", {}, False, 40],
    ["bash", {"command": "make"}, numbered(3) + "\n\nCommand exited with code 2", {}, True, 40],
    [
        "bash",
        {"command": "seq 3000"},
        numbered(4) + "\n\n[Showing lines 2997-3000 of 3000. Full output: /tmp/pi-bash-1.log]",
        SHELL_DETAILS,
        False,
        50,
    ],
    ["bash", {"command": "cat big"}, "x" * 90 + "\ny", BYTES_DETAILS, False, 40],
    ["bash", {"command": "echo"}, "", {}, False, 40],
    ["bash", {"command": "echo"}, "日本語のテキストです " * 8, {}, False, 24],
    ["bash", {"command": "printf"}, "a\tb\tc", {}, False, 40],
    ["read", {"path": "app.py"}, numbered(50), {}, False, 60],
    ["read", {"path": "app.py"}, "ENOENT: no such file or directory", {}, True, 60],
    ["read", {"path": "app.py"}, numbered(14, 5) + "\n\n", {}, True, 30],
    [
        "write",
        {"path": "notes.md", "content": "# Notes\n\n- one\n"},
        "Wrote 16 bytes",
        {},
        False,
        60,
    ],
    ["write", {"path": "app.py", "content": numbered(25, 4)}, "ok", {}, False, 30],
    ["write", {"path": "app.py", "content": ""}, "ok", {}, False, 60],
    ["write", {"path": "app.py", "content": 7}, "ok", {}, False, 60],
    ["write", {"path": "/etc/x", "content": "x"}, "EACCES: permission denied", {}, True, 60],
    ["edit", {"path": "app.py"}, "Successfully replaced 1 block(s)", {}, False, 60],
    ["edit", {"path": "app.py"}, "Could not find the text to replace", {}, True, 30],
    ["grep", {"pattern": "x"}, numbered(15), {}, False, 60],
    [
        "grep",
        {"pattern": "x"},
        numbered(40, 9) + "\n\n[100 matches limit reached]",
        GREP_LIMITS,
        False,
        30,
    ],
    ["grep", {"pattern": "x"}, "No matches found", {}, False, 60],
    ["grep", {"pattern": "("}, "regex parse error:\n    (\n    ^", {}, True, 60],
    ["find", {"pattern": "*.py"}, numbered(21) + "\n", {"resultLimitReached": 21}, False, 60],
    ["ls", {}, numbered(20), {"truncation": {"truncated": True}}, False, 60],
    ["ls", {}, "(empty directory)", {}, False, 60],
    ["notes", {"action": "list"}, numbered(10), {}, False, 60],
    ["notes", {"action": "list"}, numbered(11), {}, False, 60],
    ["notes", {"action": "read"}, numbered(3) + "\n\n\n", {}, False, 60],
    ["history", {"query": "x"}, '{"items": [' + '"found", ' * 30 + "]}", {}, False, 40],
    ["notes", {"action": "read"}, "no such note", {}, True, 60],
    ["notes", {"action": "read"}, "", {}, False, 60],
]

#: ["!", command, output, exit code, cancelled, truncated, full output path, terminal width]
COMMANDS: list[list[Any]] = [
    ["!", "echo hi", "hi\n", 0, False, False, None, 60],
    ["!", "true", "", 0, False, False, None, 60],
    ["!", "make", numbered(30, 6), 2, False, False, None, 40],
    ["!", "make", numbered(20), 0, False, False, None, 40],
    ["!", "make", numbered(19, 12), 0, False, False, None, 30],
    ["!", "sleep 9", numbered(3), None, True, False, None, 40],
    ["!", "seq 9999", numbered(25), 0, False, True, "/tmp/pi-bash-2.log", 30],
    # A lone carriage return is left out: the scrollback shows a line as a terminal leaves
    # it (a progress bar's last state), where Pi starts a new line.
    ["!", "printf", "a\r\nb\tc\n", 0, False, False, None, 40],
]


def ours(case: list[Any]) -> list[str]:
    """ctxmodes' rows for ``case``, as the judge gives Pi's: a tool's without the call's own
    line, a command's whole."""
    if case[0] == "!":
        _, command, output, code, cancelled, truncated, path, width = case
        message = BashExecutionMessage(
            command=command,
            output=output,
            exit_code=code,
            cancelled=cancelled,
            truncated=truncated,
            full_output_path=path,
            timestamp=1,
        )
        return [
            line.rstrip()
            for line in plain(render.shell_command(message, width, EXPAND)).split("\n")
        ]
    name, arguments, text, details, is_error, width = case
    # The call's own rows: one for the core's tools, more for JSON at a narrow width.
    call = {key: value for key, value in arguments.items() if key != "content"}
    call_rows = len(plain(render.tool_call(name, call, width, EXPAND)).split("\n"))
    drawn = [render.tool_call(name, arguments, width, EXPAND)]
    drawn.append(render.tool_result(name, text, details, is_error, width, EXPAND) or "")
    lines = plain("\n".join(drawn)).split("\n")[call_rows:]
    # Pi's box leaves its content one cell in; the scrollback two, under the call's arrow.
    return [line.rstrip()[2:] for line in lines if line.strip()]


def pi(cases: list[list[Any]]) -> list[list[str]]:
    drawn = run_pi_script(PI_SCRIPT, stdin=json.dumps(cases))
    # The call's own line (a tool's), the blank line Pi leaves before a command's rule.
    return [lines[1:] for lines in drawn]


def judged(cases: list[list[Any]]) -> None:
    for case, expected in zip(cases, pi(cases), strict=True):
        expected = [line.rstrip() for line in expected]
        assert ours(case) == expected, case


@pytest.mark.pi
@pytest.mark.slow  # runs Pi's components in node
def test_results_written_to_cover_each_rule_are_drawn_as_pi_draws_them():
    judged(WRITTEN + COMMANDS)


def _random_text(rng: random.Random) -> str:
    words = ["a", "make", "test_ok", "x" * 45, "日本語", "naïve", "", "  ", "[done]", "→"]
    lines = [
        " ".join(rng.choice(words) for _ in range(rng.randrange(0, 14)))
        for _ in range(rng.randrange(0, 40))
    ]
    return "\n".join(lines) + rng.choice(["", "\n", "\n\n"])


@pytest.mark.pi
@pytest.mark.slow  # runs Pi's components in node
def test_random_results_are_drawn_as_pi_draws_them():
    rng = random.Random(23)
    cases: list[list[Any]] = []
    for _ in range(300):
        width = rng.randrange(16, 120)
        text = _random_text(rng)
        if rng.random() < 0.25:
            path = f"/tmp/pi-bash-{rng.randrange(99)}.log" if rng.random() < 0.5 else None
            code = rng.choice([0, 0, 1, 127, None])
            cases.append(["!", "run", text, code, code is None, path is not None, path, width])
            continue
        name = rng.choice(["bash", "bash", "read", "write", "edit", "notes"])
        arguments: dict[str, Any] = {"command": "run"} if name == "bash" else {"path": "f.py"}
        if name == "write":
            arguments["content"] = _random_text(rng)
        cases.append([name, arguments, text, {}, rng.random() < 0.3, width])
    judged(cases)


def test_a_command_watched_as_it_ran_says_how_long_it_took_and_its_last_rows(tmp_path: Path):
    command = "seq 1 12"
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    agent = make_agent(tmp_path, [call, {"text": "done"}])

    async def scenario(t):
        await t.type("count" + ENTER)
        await t.printed("done")
        await t.idle()

    text = run_terminal(agent, scenario).text()
    shown = text[text.index("→ $ seq 1 12") :].split("\n")[1:9]
    assert shown[0] == "  ... (7 earlier lines, ctrl+o to expand)"
    assert shown[1:6] == [f"  {n}" for n in range(8, 13)]
    assert re.fullmatch(r"  Took \d+\.\ds", shown[6])
    # Replayed from the session file, it has no time and no key to name.
    replayed = plain(
        render.tool_result("bash", "\n".join(map(str, range(1, 13))), {}, False, 80, None) or ""
    )
    assert replayed.split("\n")[0] == "  ... (7 earlier lines)"
    assert "Took" not in replayed


def _expanded_after(tmp_path: Path, call: dict[str, Any], reply: str) -> str:
    """The transcript of a run of the tool ``call`` that the model answers with ``reply``,
    Ctrl+O pressed after it."""
    agent = make_agent(tmp_path, [{"tool_calls": [call]}, {"text": reply}])

    async def scenario(t):
        await t.type("go" + ENTER)
        await t.printed(reply)
        await t.idle()
        await t.type(CTRL_O)
        await t.printed(f"── {call['name']} output ──")

    return run_terminal(agent, scenario).text()


def test_a_read_that_succeeds_shows_nothing_under_its_call_and_ctrl_o_shows_it(tmp_path: Path):
    (tmp_path / "app.py").write_text("print('hello')\n")
    read = {"name": "read", "arguments": {"path": "app.py"}}
    text = _expanded_after(tmp_path, read, "read it")
    after_call = text[text.index("→ read app.py") :].split("\n")
    assert after_call[1] == "read it"
    assert text.index("print('hello')") > text.index("── read output ──")


def test_a_write_shows_what_it_writes_and_ctrl_o_shows_all_of_it(tmp_path: Path):
    content = "".join(f"row {n}\n" for n in range(1, 16))
    write = {"name": "write", "arguments": {"path": "rows.txt", "content": content}}
    text = _expanded_after(tmp_path, write, "written")
    call = text.index("→ write rows.txt")
    preview = text[call:].split("\n")[1:12]
    assert preview[:10] == [f"  row {n}" for n in range(1, 11)]
    assert preview[10] == "  ... (5 more lines, 15 total, ctrl+o to expand)"
    expanded = text[text.index("── write output ──") :]
    assert "row 15" in expanded
    assert (tmp_path / "rows.txt").read_text() == content


def test_a_read_of_a_skill_shows_in_pi_s_short_words_and_ctrl_o_shows_what_it_read(
    tmp_path: Path,
):
    skill = tmp_path / "skills" / "lint" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("Run the linter.\n")
    read = {"name": "read", "arguments": {"path": "skills/lint/SKILL.md"}}
    text = _expanded_after(tmp_path, read, "read the skill")
    assert "→ [skill] lint (ctrl+o to expand)\n" in text
    assert text.index("Run the linter.") > text.index("── read output ──")


def test_a_result_of_a_megabyte_on_one_line_is_cut_at_a_bound_of_rows_and_says_so():
    for name, is_error in (("notes", False), ("write", True), ("edit", True)):
        shown = plain(render.tool_result(name, "x" * 1_000_000, {}, is_error, 80, EXPAND) or "")
        rows = shown.split("\n")
        assert len(rows) == tool_results.MAX_ROWS + 1, name
        assert rows[-1] == f"  ... (cut here, {EXPAND})"
        assert all(row.strip("x ") == "" for row in rows[:-1])
    # A session file may hold a command's output longer than the shell tool keeps: its last
    # rows show, under a count of the lines before them.
    lines = 200_000
    output = "\n".join(f"line {n}" for n in range(1, lines + 1))
    rows = plain(render.tool_result("bash", output, {}, False, 80, None) or "").split("\n")
    assert rows[1:] == [f"  line {n}" for n in range(lines - 4, lines + 1)]
    earlier = int(rows[0].removeprefix("  ... (").split(" ")[0])
    assert lines - 5 <= earlier <= lines - 4


def test_a_long_running_command_counts_every_earlier_line_as_its_result_will():
    from ctxmodes.tui.live import LiveRegion

    output = "".join(f"line {n} of the build log\n" for n in range(1, 5001))
    live = LiveRegion()
    live.tool_started("bash", EXPAND)
    live.tool_output = output
    drawn = "".join(text for _, text in live.fragments(100)).split("\n")
    finished = plain(render.tool_result("bash", output, {}, False, 100, EXPAND) or "")
    # Only the end of the output is wrapped live; the rows drawn are the result's all the same.
    assert drawn[1:7] == finished.split("\n")
    assert drawn[1] == f"  ... (4995 earlier lines, {EXPAND})"
