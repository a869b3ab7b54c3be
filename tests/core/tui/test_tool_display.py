"""What the user sees of the tools' work: a running command's output streams into the live
region (bounded in rows), an edit's diff is printed under its result, a result cut short
ends with Pi's line naming the key that shows it all (the real Pi's renderer writes the
same), thinking can be shown in full with Ctrl+T, and the footer says when the model is
thinking."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_oracle import run_pi_script
from support.replies import ended_reply
from support.terminal import ENTER, GatedStream, run_terminal

from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.models import AssistantMessage
from ctxmodes.tui import render
from ctxmodes.tui.app import plain
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.replay import branch_blocks

PI_SCRIPT = Path(__file__).parents[2] / "support" / "pi_status_lines.mjs"

CTRL_T = "\x14"
CTRL_O = "\x0f"


def live_text(t) -> str:
    return "".join(fragment[1] for fragment in t.session.live.fragments(t.session.width))


def footer(t) -> str:
    return "".join(fragment[1] for fragment in t.session.status.fragments())


@pytest.mark.slow  # waits out a second for the elapsed time to tick
def test_a_running_command_streams_its_output_into_the_live_region(tmp_path: Path):
    """Its rows as its result will show them, and how long it has run, ticking."""
    release = tmp_path / "release"
    lines = " ".join(f"line-{n}" for n in range(1, 21))
    command = (
        f"for l in {lines}; do echo $l; done; printf 'progress 10%%\\rprogress 90%%\\n'; "
        f"while [ ! -e {release} ]; do sleep 0.05; done; echo finished"
    )
    agent = make_agent(
        tmp_path,
        [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "ok"}],
    )
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("run it" + ENTER)
        await t.until(lambda: "progress 90%" in live_text(t), "the command's output so far")
        seen["live"] = live_text(t)
        seen["footer"] = footer(t)
        seen["scrollback"] = t.text()
        # The command prints nothing more until released: what redraws now is the time.
        frames = t.session.app.render_counter
        await asyncio.sleep(1.3)
        seen["frames"] = str(t.session.app.render_counter - frames)
        release.touch()
        await t.printed("ok")
        await t.idle()
        seen["after"] = live_text(t)
        await t.type(CTRL_O)
        await t.printed("── bash output ──")

    terminal = run_terminal(agent, scenario)
    shown = seen["live"]
    assert "⋯ running bash" in shown
    rows = shown.split("⋯ running bash\n", 1)[1].rstrip("\n").split("\n")
    # As its result will show it: the last rows under a count of those above them, then
    # how long it has run so far.
    assert rows[0] == "  ... (16 earlier lines, ctrl+o to expand)"
    assert rows[1:5] == [f"  line-{n}" for n in range(17, 21)]
    assert rows[5] == "  progress 90%"  # the carriage return started the line over
    assert re.fullmatch(r"  Elapsed \d+\.\ds", rows[6])
    assert len(rows) == 7
    assert int(seen["frames"]) >= 1
    assert "line-20" not in seen["scrollback"]  # nothing reached the scrollback yet
    assert seen["after"] == ""
    assert seen["footer"].endswith(" • working")
    assert seen["footer"].count("working") == 1
    full = terminal.text().split("── bash output ──", 1)[1]
    assert "line-1\n" in full
    assert "finished" in full


def test_an_edit_prints_its_diff_under_the_result(tmp_path: Path):
    target = tmp_path / "app.py"
    target.write_text("keep = 0\nold_name = 1\nalso = 2\n")
    edit = {
        "name": "edit",
        "arguments": {
            "path": "app.py",
            "edits": [{"oldText": "old_name = 1", "newText": "new_name = 1"}],
        },
    }
    agent = make_agent(tmp_path, [{"tool_calls": [edit]}, {"text": "renamed"}])

    async def scenario(t):
        await t.type("rename" + ENTER)
        await t.printed("renamed")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    text = terminal.text()
    # As in Pi, a successful edit shows its diff under its call, not its result's words.
    assert "Successfully replaced" not in text
    call = text.index("→ edit app.py")
    assert text.index("-2 old_name = 1") > call
    assert text.index("+2 new_name = 1") > text.index("-2 old_name = 1")
    assert target.read_text() == "keep = 0\nnew_name = 1\nalso = 2\n"


def test_a_long_diff_is_cut_with_a_count_of_what_ctrl_o_shows():
    diff = "\n".join(f"+{n} line {n}" for n in range(1, 41))
    shown = render.tool_diff(diff, 80, 24, "ctrl+o to expand")
    assert "+24 line 24" in shown
    assert "+25 line 25" not in shown
    assert "    ... (16 more lines, ctrl+o to expand)" in shown


def test_ctrl_o_shows_every_output_since_it_was_last_pressed(tmp_path: Path):
    def run(command: str) -> dict[str, object]:
        return {"name": "bash", "arguments": {"command": command}}

    calls = [run("printf 'a1\\na2\\n'"), run("printf 'b1\\nb2\\n'")]
    agent = make_agent(
        tmp_path,
        [{"tool_calls": calls}, {"text": "done"}, {"tool_calls": [run("echo c1")]}, {"text": "ok"}],
    )
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("run both" + ENTER)
        await t.printed("done")
        await t.idle()
        before = len(t.text())
        await t.type(CTRL_O)
        await t.until(lambda: t.text().count("output ──") == 2, "both outputs")
        seen["first"] = t.text()[before:]
        await t.type("and one more" + ENTER)
        await t.printed("ok")
        await t.idle()
        before = len(t.text())
        await t.type(CTRL_O)
        await t.until(lambda: t.text().count("output ──") == 3, "the new output")
        await t.type(CTRL_O)
        await t.until(lambda: t.text().count("output ──") == 4, "the last output again")
        seen["then"] = t.text()[before:]

    run_terminal(agent, scenario)
    first = seen["first"]
    assert first.index("a1\na2") < first.index("b1\nb2")
    assert seen["then"].count("c1") == 2
    assert "a1" not in seen["then"]


def _result_hints(tmp_path: Path, bindings: dict[str, Any]) -> tuple[str, str]:
    """The line over the last rows of a six-line result as the run printed it with
    ``bindings``, then as the session's replay prints it."""
    command = "printf 'line 1\\nline 2\\nline 3\\nline 4\\nline 5\\nline 6\\n'"
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    agent = make_agent(tmp_path, [call, {"text": "done"}])
    keybindings = tmp_path / "keybindings.json"
    keybindings.write_text(json.dumps(bindings))
    seen: dict[str, str] = {}

    def hint(text: str) -> str:
        return next(line.strip() for line in text.splitlines() if "earlier lines" in line)

    async def scenario(t):
        await t.type("run it" + ENTER)
        await t.printed("done")
        await t.idle()
        seen["replayed"] = hint(plain("\n".join(branch_blocks(agent.session_manager, 100))))

    text = run_terminal(agent, scenario, keymap=KeyMap.load(keybindings)).text()
    return hint(text), seen["replayed"]


def test_a_result_cut_short_names_the_key_bound_to_expand_it(tmp_path: Path):
    printed, replayed = _result_hints(tmp_path, {"app.tools.expand": "alt+o"})
    assert printed == "... (1 earlier lines, alt+o to expand)"
    # The key shows what ran since the session opened, not what is replayed from its file.
    assert replayed == "... (1 earlier lines)"


@pytest.mark.pi
@pytest.mark.parametrize(
    "bindings", [{}, {"app.tools.expand": "alt+o"}], ids=["default", "rebound"]
)
def test_pi_s_renderer_starts_a_result_cut_short_with_the_same_line(
    tmp_path: Path, bindings: dict[str, Any]
):
    request = {
        "bindings": bindings,
        "retry": [1, 3, 1000],
        "queued": {"steering": [], "followUp": []},
        "resultLines": 6,
    }
    pi = run_pi_script(PI_SCRIPT, json.dumps(request))
    printed, _ = _result_hints(tmp_path, bindings)
    assert printed == pi["resultHint"]


def test_ctrl_t_shows_thinking_in_full_and_saves_it_as_pi_does(tmp_path, agent_dir):
    thought = "Weighing the two designs before answering."
    responses = [
        {"thinking": thought, "text": "First answer."},
        {"thinking": thought, "text": "Second answer."},
    ]
    agent = make_agent(tmp_path, responses)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("one" + ENTER)
        await t.printed("First answer.")
        await t.idle()
        await t.type(CTRL_T)
        await t.printed("Thinking shown in full")
        seen["toggled"] = t.session.live.show_thinking
        await t.type("two" + ENTER)
        await t.printed("Second answer.")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    first, second = terminal.text().split("Thinking shown in full", 1)
    assert f"▸ thinking ({len(thought)} characters)" in first
    assert thought not in first
    assert thought in second
    assert seen["toggled"] is True
    # Pi's toggle saves the choice for the next start: hideThinkingBlock.
    assert (agent_dir / "settings.json").read_text() == '{\n  "hideThinkingBlock": false\n}'


def test_thinking_shown_in_full_is_markdown_dim_and_italic_as_pi_shows_it():
    shown = render.thinking_text("Plan:\n\n- **one**\n- `two`", 40)
    assert plain(shown).split("\n") == ["▾ thinking", "Plan:", "", "- one", "- two"]
    # Every character of the thought is dim and italic, under its own Markdown's styles.
    for row in shown.split("\n")[1:]:
        assert row.startswith("\x1b[") or not row, repr(row)
        for codes, _text in re.findall(r"\x1b\[([0-9;]*)m([^\x1b]+)", row):
            assert {"2", "3"} <= set(codes.split(";")), repr(row)


def test_pi_s_hide_thinking_block_off_shows_thinking_in_full_from_the_start(tmp_path, agent_dir):
    from ctxmodes.config import TerminalSettings

    thought = "Weighing the two designs before answering."
    agent = make_agent(tmp_path, [{"thinking": thought, "text": "The answer."}])

    async def scenario(t):
        await t.type("one" + ENTER)
        await t.printed("The answer.")
        await t.idle()
        await t.type(CTRL_T)
        await t.printed("Thinking collapsed")

    settings = TerminalSettings(hide_thinking=False)
    terminal = run_terminal(agent, scenario, settings=settings)
    assert thought in terminal.text()
    assert "▸ thinking (" not in terminal.text()
    assert json.loads((agent_dir / "settings.json").read_text()) == {"hideThinkingBlock": True}


def test_the_footer_says_when_the_model_is_thinking_and_names_each_activity_once(tmp_path):
    script = Script.model_validate(
        {"responses": [{"thinking": "Considering the options at length.", "text": "Done."}]}
    )
    provider = GatedStream(ScriptedProvider(script, chunk_chars=4), hold_after=2)
    agent = make_agent(tmp_path, [], provider=provider)
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("think" + ENTER)
        await t.until(provider.held.is_set, "the stream to be held while thinking")
        await t.until(lambda: "thinking" in footer(t))
        seen["thinking"] = footer(t)
        provider.release.set()
        await t.printed("Done.")
        await t.idle()
        seen["idle"] = footer(t)

    run_terminal(agent, scenario)
    assert seen["thinking"].endswith(" • thinking")
    assert seen["thinking"].count("thinking") == 1
    assert "working" not in seen["thinking"]
    assert "thinking" not in seen["idle"]
    assert "working" not in seen["idle"]


def test_the_session_never_asks_the_terminal_for_the_cursor_position(tmp_path):
    """Drawn on a real pseudo-terminal: the answer to such a request arrives while blocks are
    printed between frames and the terminal echoes it onto the prompt line."""
    import asyncio
    import os
    import select

    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from ctxmodes.tui.app import TerminalSession

    agent = make_agent(tmp_path, [{"text": "first"}])
    controller, terminal = os.openpty()
    written = bytearray()

    def drain() -> None:
        while select.select([controller], [], [], 0)[0]:
            written.extend(os.read(controller, 65536))

    async def main() -> None:
        with create_pipe_input() as keys, os.fdopen(terminal, "w") as tty:
            output = Vt100_Output.from_pty(tty, term="xterm")
            session = TerminalSession(agent, input=keys, output=output, sink=lambda _: None)
            task = asyncio.create_task(session.run_async())
            for _ in range(200):
                await asyncio.sleep(0.01)
                drain()
                if b"scripted/scripted" in written:
                    break
            keys.send_text("one\r")
            for _ in range(100):
                await asyncio.sleep(0.01)
                drain()
            session.exit()
            await asyncio.wait_for(task, 10)
            drain()

    try:
        asyncio.run(main())
    finally:
        agent.close()
        os.close(controller)
    assert b"scripted/scripted" in written  # the footer was drawn on the terminal
    assert b"\x1b[6n" not in written


def test_a_plugin_s_message_shows_whole_as_markdown_under_its_type(tmp_path: Path):
    agent = make_agent(tmp_path, [{"text": "ok"}])
    manager = agent.session_manager
    manager.append_custom_message_entry(
        "review", "Two findings:\n\n- **parser** drops tabs\n- the lexer\n\n```py\nx = 1\n```", True
    )
    manager.append_custom_message_entry("hidden", "not for the eye", False)
    replayed = plain("\n".join(branch_blocks(manager, 60))).split("\n")
    assert replayed == [
        "[review]", "Two findings:", "", "- parser drops tabs", "- the lexer", "", "```py",
        "  x = 1", "```",
    ]  # fmt: skip


ENDINGS_SCRIPT = Path(__file__).parents[2] / "support" / "pi_reply_endings.mjs"


@pytest.mark.pi
def test_a_reply_that_did_not_finish_ends_with_pi_s_line_for_how_it_ended():
    replies = [
        ended_reply("stop", None),
        ended_reply("length", None),
        ended_reply("length", None, calls=True),
        ended_reply("aborted", None),
        ended_reply("aborted", "Request was aborted"),
        ended_reply("aborted", "Stopped by the user"),
        ended_reply("aborted", "x", calls=True),
        ended_reply("error", "429 rate limited"),
        ended_reply("error", None),
        ended_reply("error", "boom", calls=True),
        ended_reply("toolUse", None, calls=True),
    ]
    expected = run_pi_script(ENDINGS_SCRIPT, stdin=json.dumps(replies))
    for reply, pi in zip(replies, expected, strict=True):
        ending = render.reply_ending(AssistantMessage.model_validate(reply), 100)
        assert (plain(ending) if ending is not None else None) == pi, reply
