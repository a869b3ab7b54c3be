"""``/hotkeys``: every key of the terminal, in the sections and order of Pi's list.

The keys of the terminal's own actions come from its :class:`~ctxmodes.tui.keymap.KeyMap`,
so a key changed in ``keybindings.json`` shows as changed, the editor's moves and deletes
among them. Undo, the character jumps and Tab are prompt_toolkit's, which
``keybindings.json`` does not change here: they are listed as the editor binds them
(:data:`EDITOR_KEYS`, in Pi's key names).
A row whose keys were all unbound is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from ctxmodes.tui.keymap import KeyMap, display_keys

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

#: The editor keys prompt_toolkit binds for Pi's editor actions the terminal does not take
#: from ``keybindings.json``, named as Pi names keys.
EDITOR_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "tui.editor.jumpForward": ("ctrl+]",),
    "tui.editor.jumpBackward": ("ctrl+alt+]",),
    "tui.editor.undo": ("ctrl+-",),
    "tui.input.tab": ("tab",),
}

#: Pi's sections: each row's actions (their keys joined by `` / ``) and what they do.
#: A row of plain text instead of actions is a key no binding changes.
SECTIONS: Final[tuple[tuple[str, tuple[tuple[tuple[str, ...], str], ...]], ...]] = (
    (
        "Navigation",
        (
            (
                (
                    "tui.editor.cursorUp",
                    "tui.editor.cursorDown",
                    "tui.editor.cursorLeft",
                    "tui.editor.cursorRight",
                ),
                "Move cursor / browse history",
            ),
            (("tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"), "Move by word"),
            (("tui.editor.cursorLineStart",), "Start of line"),
            (("tui.editor.cursorLineEnd",), "End of line"),
            (("tui.editor.jumpForward",), "Jump forward to character"),
            (("tui.editor.jumpBackward",), "Jump backward to character"),
            (("tui.editor.pageUp", "tui.editor.pageDown"), "Scroll by page"),
        ),
    ),
    (
        "Editing",
        (
            (("tui.input.submit",), "Send message"),
            (("tui.input.newLine",), "New line"),
            (("tui.editor.deleteWordBackward",), "Delete word backwards"),
            (("tui.editor.deleteWordForward",), "Delete word forwards"),
            (("tui.editor.deleteToLineStart",), "Delete to start of line"),
            (("tui.editor.deleteToLineEnd",), "Delete to end of line"),
            (("tui.editor.yank",), "Paste the most-recently-deleted text"),
            (("tui.editor.yankPop",), "Cycle through the deleted text after pasting"),
            (("tui.editor.undo",), "Undo"),
        ),
    ),
    (
        "Other",
        (
            (("tui.input.tab",), "Path completion / accept autocomplete"),
            (("app.interrupt",), "Cancel autocomplete / abort streaming"),
            (("app.clear",), "Clear editor (first) / exit (second)"),
            (("app.exit",), "Exit (when editor is empty)"),
            (("app.suspend",), "Suspend to background"),
            (("app.thinking.cycle",), "Cycle thinking level"),
            (("app.model.cycleForward", "app.model.cycleBackward"), "Cycle models"),
            (("app.model.select",), "Open model selector"),
            (("app.tools.expand",), "Toggle tool output expansion"),
            (("app.thinking.toggle",), "Toggle thinking block visibility"),
            (("app.editor.external",), "Edit message in external editor"),
            (("app.message.copy",), "Copy last assistant message"),
            (("app.message.followUp",), "Queue follow-up message"),
            (("app.message.dequeue",), "Restore queued messages"),
            (("app.clipboard.pasteImage",), "Paste image or text from clipboard"),
            (("/",), "Slash commands"),
            (("!",), "Run bash command"),
            (("!!",), "Run bash command (excluded from context)"),
        ),
    ),
)

TITLE: Final = "Keyboard Shortcuts"


def _keys(keymap: KeyMap, action: str) -> str:
    if action in EDITOR_KEYS:
        return display_keys(EDITOR_KEYS[action])
    if "." not in action:
        return action  # a typed prefix, not an action
    return keymap.display(action)


def hotkey_rows(keymap: KeyMap) -> list[tuple[str, Sequence[tuple[str, str]]]]:
    """Each section's title and its rows (keys, what they do), as ``keymap`` binds them."""
    sections: list[tuple[str, Sequence[tuple[str, str]]]] = []
    for title, rows in SECTIONS:
        shown: list[tuple[str, str]] = []
        for actions, what in rows:
            keys = [_keys(keymap, action) for action in actions]
            if any(keys):
                shown.append((" / ".join(key for key in keys if key), what))
        sections.append((title, shown))
    return sections


def hotkeys_text(keymap: KeyMap) -> str:
    """The list as the terminal prints it: a title, then each section with its rows
    aligned."""
    lines = [TITLE]
    for title, rows in hotkey_rows(keymap):
        width = max((len(keys) for keys, _ in rows), default=0)
        lines += ["", title, *(f"  {keys.ljust(width)}  {what}" for keys, what in rows)]
    return "\n".join(lines)


def hotkeys(session: TerminalSession, args: str) -> None:
    session.notify(hotkeys_text(session.keymap))
