"""Keys pressed into an open picker as a terminal sends them, through the key bindings the
terminal session makes (prompt_toolkit's parser, then the binding its key processor would
choose), for the tests that judge the pickers' fields against Pi's own."""

from __future__ import annotations

from dataclasses import dataclass

from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys

from ctxmodes.tui.picker import Picker

BACKSPACE, DELETE, CTRL_D = "\x7f", "\x1b[3~", "\x04"
LEFT, RIGHT, HOME, END = "\x1b[D", "\x1b[C", "\x1b[H", "\x1b[F"
UP, DOWN = "\x1b[A", "\x1b[B"
CTRL_A, CTRL_B, CTRL_E, CTRL_F = "\x01", "\x02", "\x05", "\x06"
CTRL_HOME, CTRL_END = "\x1b[1;5H", "\x1b[1;5F"
ALT_LEFT, ALT_RIGHT, CTRL_LEFT, CTRL_RIGHT = "\x1b[1;3D", "\x1b[1;3C", "\x1b[1;5D", "\x1b[1;5C"
ALT_B, ALT_F, ALT_D, ALT_Y = "\x1bb", "\x1bf", "\x1bd", "\x1by"
CTRL_W, ALT_BACKSPACE, ALT_DELETE = "\x17", "\x1b\x7f", "\x1b[3;3~"
CTRL_U, CTRL_K, CTRL_Y, UNDO = "\x15", "\x0b", "\x19", "\x1f"
ENTER, CTRL_J, ESC, CTRL_C, CTRL_G = "\r", "\n", "\x1b", "\x03", "\x07"


def paste(text: str) -> str:
    return f"\x1b[200~{text}\x1b[201~"


def typed(text: str) -> list[str]:
    """``text`` typed, one key a character, as a terminal sends typing."""
    return list(text)


@dataclass
class _Event:
    key_sequence: list[KeyPress]


def press(bindings: KeyBindings, picker: Picker, data: str) -> None:
    """``data`` (one key, or one bracketed paste) pressed while ``picker`` is open."""
    pressed: list[KeyPress] = []
    parser = Vt100Parser(pressed.append)
    parser.feed(data)
    parser.flush()
    if pressed[0].key == Keys.BracketedPaste:
        picker.paste(pressed[0].data)
        return
    # As prompt_toolkit's key processor chooses: the most specific binding whose filter
    # holds.
    found = bindings.get_bindings_for_keys(tuple(key.key for key in pressed))
    binding = [each for each in found if each.filter()][-1]
    binding.handler(_Event(pressed))  # type: ignore[arg-type]
