"""A large paste into the editor is held as Pi's editor holds it, a marker such as
``[paste #1 +60 lines]``, and the prompt sent carries the paste itself; a marker is one
character to the cursor, Backspace takes it whole and numbers the later ones down, and undo
brings its paste back; a paste of any size is cleaned as Pi cleans one."""

from __future__ import annotations

import orjson
from support.agents import make_agent
from support.terminal import ENTER, UP, run_terminal

from ctxmodes.tui.paste_markers import PasteMarkers

BACKSPACE = "\x7f"
LEFT = "\x1b[D"
UNDO = "\x1f"  # Ctrl+-
LOG = "\n".join(f"line {n}" for n in range(1, 61))
WIDE = "x" * 1500


def paste(text: str) -> str:
    return f"\x1b[200~{text}\x1b[201~"


def user_texts(agent) -> list[str]:
    lines = agent.session_file.read_bytes().splitlines()[1:]
    messages = [orjson.loads(line).get("message", {}) for line in lines]
    return [
        part["text"]
        for message in messages
        if message.get("role") == "user"
        for part in message["content"]
        if part["type"] == "text"
    ]


def test_a_large_paste_shows_as_a_marker_and_is_sent_whole(tmp_path):
    agent = make_agent(tmp_path, [{"text": "read it"}])
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("look at " + paste(LOG) + " and " + paste(WIDE))
        await t.until(lambda: "chars]" in t.session.buffer.text, "both markers")
        seen["draft"] = t.session.buffer.text
        await t.type(ENTER)
        await t.printed("read it")
        await t.idle()
        await t.type(UP)
        await t.until(lambda: bool(t.session.buffer.text), "the prompt recalled")
        seen["recalled"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen["draft"] == "look at [paste #1 +60 lines] and [paste #2 1500 chars]"
    assert user_texts(agent) == [f"look at {LOG} and {WIDE}"]
    # The history holds what was sent, as Pi's does.
    assert seen["recalled"] == f"look at {LOG} and {WIDE}"


def test_a_marker_is_one_character_backspace_renumbers_and_undo_brings_its_paste_back(tmp_path):
    agent = make_agent(tmp_path, [{"text": "fine"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type(paste(LOG) + " " + paste(WIDE))
        await t.until(lambda: "chars]" in t.session.buffer.text, "both markers")
        await t.type(LEFT + LEFT)  # over the second marker, then the space
        await t.until(lambda: t.session.buffer.cursor_position == 20, "the first's end")
        await t.type(BACKSPACE)
        await t.until(lambda: "#1 +60" not in t.session.buffer.text, "the first gone")
        seen["draft"] = t.session.buffer.text
        await t.type(UNDO)
        await t.until(lambda: "+60 lines" in t.session.buffer.text, "the first back")
        seen["undone"] = t.session.buffer.text
        await t.type(ENTER)
        await t.printed("fine")

    run_terminal(agent, scenario)
    assert seen["draft"] == " [paste #1 1500 chars]"
    assert seen["undone"] == "[paste #1 +60 lines] [paste #2 1500 chars]"
    # Undo brought the first paste back with its marker, as Pi's editor does.
    assert user_texts(agent) == [f"{LOG} {WIDE}"]


def test_a_small_paste_goes_in_cleaned_and_a_path_after_a_word_apart():
    pastes = PasteMarkers()
    assert pastes.take("a\tb\r\nc\rd\x07e", "") == "a    b\nc\nde"
    assert pastes.take("/etc/hosts", "cat") == " /etc/hosts"
    assert pastes.take("./run.sh", "cat ") == "./run.sh"
    assert pastes.take("\n".join("x" * 10), "") == "\n".join("x" * 10)  # ten lines: as is
    assert pastes.take("y" * 1000, "") == "y" * 1000
    assert pastes.expanded("[paste #1 +3 lines] typed by hand") == (
        "[paste #1 +3 lines] typed by hand"
    )
