"""Asking on the terminal whether to trust a project, before the interactive session opens."""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes.resources.trust import TrustChoice
from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.keymap import KeyMap, keybindings_path
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.startup_picker import run_alone


def ask_on_terminal(question: str, choices: Sequence[TrustChoice]) -> TrustChoice | None:
    """The answer picked as in the session's fixed lists (↑↓ or j/k, Enter; the keys
    ``keybindings.json`` gives them); Esc or Ctrl+C picks none (the project is then not
    trusted, and nothing is saved). The question is cleared from the screen once answered,
    as Pi clears it, so the session starts where it was."""
    # What the keymap could not read is said once the session starts, which reads it too.
    keymap = KeyMap.load(keybindings_path())
    picked: list[TrustChoice] = []
    rows = [PickerItem(choice, choice.label, [("", choice.label)]) for choice in choices]
    picker = Picker(
        question,
        lambda query: rows,
        lambda item: picked.append(item.key),
        hint=selector_hint(keymap, "select"),
        filterable=False,
        counted=False,
    )
    run_alone(picker, keymap, erase=True)
    return picked[0] if picked else None
