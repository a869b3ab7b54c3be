"""What the transcript prints of a model's, a tool's or a session's text reaches the terminal
as text: written through prompt_toolkit as the interactive session writes its scrollback, no
escape sequence of it arrives, and it changes no colour."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.renderer import print_formatted_text
from support.replies import ended_reply

from ctxmodes.session.models import AssistantMessage, BashExecutionMessage
from ctxmodes.tui import render
from ctxmodes.tui.layout import STYLE

#: Sets the title, writes the clipboard, clears the screen, turns text red (in the 7-bit and
#: the one-byte form), rings, draws over characters; then a line drawn over, as a progress
#: bar is (the transcript shows it as the terminal would leave it: its last state).
HOSTILE = (
    "t\x1b]0;owned\x07 c\x1b]52;c;ZXZpbA==\x07 s\x1b[2J \x1b[31mred\x1b[0m \x9b31mred b\x07 "
    "o\x08\x08x\nloading 10%\rloading 100%"
)
_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def written(ansi: str) -> str:
    """What the interactive session writes to the terminal for a transcript block."""
    buffer = io.StringIO()
    output = Vt100_Output(buffer, lambda: Size(rows=24, columns=80), term="xterm")
    print_formatted_text(output, ANSI(ansi + "\n"), STYLE)
    output.flush()
    return buffer.getvalue()


def _bash(text: str) -> str:
    message = BashExecutionMessage(
        command=text, output=text, exit_code=0, cancelled=False, truncated=False, timestamp=1
    )
    return render.shell_command(message, 80, "ctrl+o to expand")


DRAWINGS: dict[str, Callable[[str], str]] = {
    "user prompt": lambda text: render.user_prompt(text, 80),
    "reply": lambda text: render.markdown(text, 80),
    "thinking": lambda text: render.thinking_text(text, 80),
    "tool call": lambda text: render.tool_call(text, {"command": text}, 80, None),
    "write call": lambda text: render.tool_call("write", {"path": text, "content": text}, 80, None),
    "tool result": lambda text: render.tool_result("bash", text, {}, False, 80, "ctrl+o") or "",
    "other tool's result": lambda text: render.tool_result("notes", text, {}, True, 80, None) or "",
    "full output": lambda text: render.full_output(text, text, 80),
    "shell command": _bash,
    "notice": lambda text: render.notice(text, "info", 80),
    "model error": lambda text: (
        render.reply_ending(AssistantMessage.model_validate(ended_reply("error", text)), 80) or ""
    ),
}


@pytest.mark.parametrize("draw", DRAWINGS.values(), ids=DRAWINGS.keys())
def test_hostile_text_is_printed_and_never_obeyed(draw: Callable[[str], str]) -> None:
    hostile = written(draw(HOSTILE))
    ordinary = written(draw("plain words\nloading 100%"))
    # The same styles as for ordinary text, and nothing else that steers the terminal.
    assert set(_SEQUENCE.findall(hostile)) == set(_SEQUENCE.findall(ordinary))
    rest = _SEQUENCE.sub("", hostile).replace("\r\n", "\n")
    assert not any(character in rest for character in "\x1b\x07\x08\x9b\r"), repr(rest)
    # Shown as the terminal would leave it: the text, without what it would have obeyed.
    assert "t c s red" in rest
    if "\n" in rest.strip():  # the drawings that show more than one line
        assert "loading 100%" in rest
        assert "10%" not in rest.replace("100%", "")
