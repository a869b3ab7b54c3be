"""Internal to ctxmodes' terminal: the help of the start-up header, built as Pi's interactive
mode builds it from its key hint helpers, with the keys ``keybindings.json`` binds now.

Collapsed, it is Pi's line of the main keys (``escape interrupt · ctrl+c/ctrl+d clear/exit ·
/ commands · ! bash · ctrl+o more``) and the line naming the key that shows the rest;
expanded (``--verbose``, or that key, ``app.tools.expand``), Pi's list of one key a line.
The list holds only what this terminal does: Pi's ``drop files to attach`` is left out, since
a file dropped on the terminal is only typed in as its path.
"""

from __future__ import annotations

from ctxmodes.tui.key_hints import key_hint, raw_key_hint
from ctxmodes.tui.keymap import KeyMap

#: The action whose key expands the header, as it expands tool output in Pi.
EXPAND = "app.tools.expand"


#: Under the help, when the model has been told where ctxmodes' documentation is.
ASK_ABOUT_CTXMODES = (
    "ctxmodes can explain its modes, commands and settings from its own documentation: ask it."
)


def compact_help(keymap: KeyMap) -> list[str]:
    """Pi's collapsed header: the main keys, then which key shows the rest."""
    keys = " · ".join(
        [
            key_hint(keymap, "app.interrupt", "interrupt"),
            raw_key_hint(f"{keymap.text('app.clear')}/{keymap.text('app.exit')}", "clear/exit"),
            raw_key_hint("/", "commands"),
            raw_key_hint("!", "bash"),
            key_hint(keymap, EXPAND, "more"),
        ]
    )
    return [keys, expand_prompt(keymap)]


def expand_prompt(keymap: KeyMap) -> str:
    """Pi's line under the collapsed header naming the key that expands it."""
    return f"Press {keymap.text(EXPAND)} to show full startup help and loaded resources."


def expanded_help(keymap: KeyMap) -> list[str]:
    """Pi's expanded header, one key a line, in Pi's order and words."""
    cycle = f"{keymap.text('app.model.cycleForward')}/{keymap.text('app.model.cycleBackward')}"
    return [
        key_hint(keymap, "app.interrupt", "to interrupt"),
        key_hint(keymap, "app.clear", "to clear"),
        raw_key_hint(f"{keymap.text('app.clear')} twice", "to exit"),
        key_hint(keymap, "app.exit", "to exit (empty)"),
        key_hint(keymap, "app.suspend", "to suspend"),
        key_hint(keymap, "tui.editor.deleteToLineEnd", "to delete to end"),
        key_hint(keymap, "app.thinking.cycle", "to cycle thinking level"),
        raw_key_hint(cycle, "to cycle models"),
        key_hint(keymap, "app.model.select", "to select model"),
        key_hint(keymap, EXPAND, "to expand tools"),
        key_hint(keymap, "app.thinking.toggle", "to expand thinking"),
        key_hint(keymap, "app.editor.external", "for external editor"),
        raw_key_hint("/", "for commands"),
        raw_key_hint("!", "to run bash"),
        raw_key_hint("!!", "to run bash (no context)"),
        key_hint(keymap, "app.message.followUp", "to queue follow-up"),
        key_hint(keymap, "app.message.dequeue", "to edit all queued messages"),
        key_hint(keymap, "app.clipboard.pasteImage", "to paste image (with text fallback)"),
    ]
