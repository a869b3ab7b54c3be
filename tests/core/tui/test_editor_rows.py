"""The editor's rows (``ctxmodes.tui.editor_rows``) on drafts no keyboard types. Pi's
editor judges the rows of typed drafts in ``test_editor_edits.py``."""

from __future__ import annotations

import asyncio

from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.output import DummyOutput

from ctxmodes.tui.editor_rows import WrappedBufferControl


def drawn_rows(text: str, width: int) -> list[str]:
    """The rows the editor draws ``text`` in at ``width`` columns, nothing before them."""

    async def draw() -> list[str]:
        buffer = Buffer(multiline=True)
        buffer.document = Document(text, len(text))
        control = WrappedBufferControl(buffer, reserved=0)
        with set_app(Application(layout=Layout(Window(control)), output=DummyOutput())):
            content = control.create_content(width, 10)
            for row in range(content.line_count):  # each styled, as the window asks
                content.get_line(row)
            lines = text.split("\n")
            return [lines[line][start:end] for line, start, end in control.rows]

    return asyncio.run(draw())


def test_a_draft_holding_lone_surrogates_is_drawn_in_rows_that_cover_it():
    # A session file may hold a message with a lone surrogate (JSON escapes it), and /fork
    # puts that message in the editor: it is drawn, each surrogate a character of its own.
    line = "fix \udfff\u0301 then \ud800 and \udfff\U0001f3fd more words to wrap"
    rows = drawn_rows(f"{line}\n{line}", 12)
    assert "".join(rows) == line * 2
    assert len(rows) > 2
