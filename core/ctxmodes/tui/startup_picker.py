"""Pickers shown on their own, before any session starts (the resume picker of
``ctxmodes chat -r``, the project trust question), with the keys of the session's pickers,
every one of them as the keymap binds it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import FormattedTextControl, Layout, Window
from prompt_toolkit.styles import Style

from ctxmodes.session.paths import cwd_filter
from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.keymap import KeyMap, keybindings_path
from ctxmodes.tui.layout import PICKER_KEY_WAIT, escape_timeout
from ctxmodes.tui.picker import PICKER_STYLE, Picker, PickerItem
from ctxmodes.tui.picker_keys import PickerKeys, bind_picker_keys
from ctxmodes.tui.redraw import redraw_soon
from ctxmodes.tui.resume import ResumePicker, every_folder_root


def run_alone(
    picker: Picker,
    keymap: KeyMap,
    *,
    erase: bool = False,
    on_redraw: Callable[[Callable[[], None]], None] | None = None,
) -> None:
    """Draw ``picker`` under the terminal's cursor and take keys until a row is picked (its
    ``on_pick`` runs) or the picker is cancelled.

    :param erase: clear the picker's lines once it is done, as Pi clears its start-up
        questions; otherwise they stay on the screen, as Pi's start-up resume picker does.
    :param on_redraw: given, before the picker runs, what redraws it (for rows that arrive
        while it is open).
    """
    keys = KeyBindings()

    def drawn() -> StyleAndTextTuples:
        # Drawn to the terminal's width, to which the rows and hint lines are cut.
        return picker.fragments(app.output.get_size().columns)

    app: Application[None] = Application(
        layout=Layout(Window(FormattedTextControl(drawn), dont_extend_height=True)),
        key_bindings=keys,
        style=Style.from_dict(PICKER_STYLE),
        full_screen=False,
        erase_when_done=erase,
    )
    # An Alt key's Esc told from a lone Esc as the session's pickers tell it.
    app.ttimeoutlen = escape_timeout(os.environ)
    app.timeoutlen = PICKER_KEY_WAIT
    if on_redraw is not None:
        on_redraw(partial(redraw_soon, app))

    def confirm(chosen: Picker) -> None:
        chosen.pick()
        app.exit()

    def cancel(chosen: Picker) -> None:
        app.exit()

    bind_picker_keys(keys, keymap, lambda: picker, PickerKeys(confirm, cancel))
    app.run()


def choose(question: str, labels: Sequence[str]) -> int | None:
    """The index of the answer picked as in the session's fixed lists (↑↓ or j/k, Enter;
    the keys ``keybindings.json`` gives them); ``None`` for Esc or Ctrl+C. The question is
    cleared from the screen once answered, as Pi clears its start-up questions, so the
    session starts where it was."""
    # What the keymap could not read is said once the session starts, which reads it too.
    keymap = KeyMap.load(keybindings_path())
    picked: list[int] = []
    rows = [PickerItem(index, label, [("", label)]) for index, label in enumerate(labels)]
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


def confirm(question: str, action: str) -> bool:
    """Whether ``action`` is picked over ``Cancel`` (Esc or Ctrl+C: no), as :func:`choose`
    asks."""
    return choose(question, [action, "Cancel"]) == 0


def pick_session(directory: Path, cwd: Path) -> Path | None:
    """Pick one of ``cwd``'s sessions in ``directory``, or with Tab one of every folder's;
    ``None`` when cancelled. It opens with no session listed too, as Pi's does: the other
    scope may have some."""
    chosen: list[Path] = []
    # What the keymap could not read is said once the session starts, which reads it too.
    keymap = KeyMap.load(keybindings_path())
    resume = ResumePicker(
        directory,
        chosen.append,
        cwd=cwd_filter(cwd, directory),
        every_folder=every_folder_root(cwd, directory),
        keymap=keymap,
    )

    def wake_with(redraw: Callable[[], None]) -> None:
        resume.wake = redraw

    run_alone(resume.picker, keymap, on_redraw=wake_with)
    return chosen[0] if chosen else None
