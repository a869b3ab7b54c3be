"""A streaming reply cut into finished Markdown blocks, and the live region's tail."""

from __future__ import annotations

import re

from ctxmodes.tui.live import LiveRegion
from ctxmodes.tui.render import live_tail, markdown
from ctxmodes.tui.streaming import BlockSplitter


def split(pieces: list[str]) -> tuple[list[str], str]:
    splitter = BlockSplitter()
    text, blocks = "", []
    for piece in pieces:
        text += piece
        blocks += splitter.finished(text)
    return blocks, text[splitter.block_start :]


def test_a_blank_line_finishes_a_block_whatever_the_delta_boundaries():
    text = "# Plan\n\nFirst step.\nStill first.\n\n\nSecond"
    whole = split([text])
    by_char = split(list(text))
    assert whole == by_char == (["# Plan\n", "First step.\nStill first.\n"], "Second")


def test_blank_lines_inside_a_code_fence_do_not_finish_it():
    text = "```py\nx = 1\n\ny = 2\n  ```\n\n~~~\n```\n\n~~~~\n\nafter"
    blocks, rest = split([text[i : i + 3] for i in range(0, len(text), 3)])
    assert blocks == ["```py\nx = 1\n\ny = 2\n  ```\n", "~~~\n```\n\n~~~~\n"]
    assert rest == "after"


def test_an_unclosed_fence_keeps_the_rest_of_the_reply_live():
    blocks, rest = split(["intro\n\n```\ncode\n\nmore code\n"])
    assert blocks == ["intro\n"]
    assert rest == "```\ncode\n\nmore code\n"


def test_the_tail_is_the_last_screen_rows_however_long_the_lines():
    assert live_tail("short\n" + "x" * 25, 10, 2) == "x" * 10 + "\n" + "x" * 5
    # Rows of one long line start every `width` columns from the line's start.
    assert live_tail("y" * 1_000_003, 10, 2) == "y" * 10 + "\n" + "yyy"
    assert live_tail("a\n\nb\n", 10, 5) == "a\n\nb"
    # Wide characters take two columns.
    assert live_tail("界" * 7, 10, 2) == "界" * 5 + "\n" + "界" * 2


def _rows(ansi: str) -> list[str]:
    return [row.rstrip() for row in re.sub(r"\x1b\[[0-9;]*m", "", ansi).split("\n")]


def test_blocks_printed_as_they_finish_read_as_the_reply_printed_whole():
    finished = "Intro.\n\n- one\n- two\n\n> quoted\n\n1. first\n\n```py\nx = 1\n\ny = 2\n```"
    live = LiveRegion()
    printed = live.add_text(finished + "\n\nend", 40)
    rows = _rows("\n".join(printed))
    assert rows == [*_rows(markdown(finished, 40)), ""]
    assert rows[:6] == ["Intro.", "", "- one", "- two", "", "│ quoted"]


def test_a_reply_that_opens_with_a_list_starts_on_its_first_row():
    assert _rows(markdown("- one\n- two", 40)) == ["- one", "- two"]
