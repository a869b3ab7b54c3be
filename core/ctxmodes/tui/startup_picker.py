"""``ctxmodes chat -r``: the resume picker on its own, before any session starts, with the
keys of the session's picker (renaming and deleting as the keymap binds them)."""

from __future__ import annotations

from pathlib import Path


def pick_session(directory: Path, cwd: Path) -> Path | None:
    """Pick one of ``cwd``'s sessions in ``directory``, or with Tab one of every folder's;
    ``None`` when cancelled. It opens with no session listed too, as Pi's does: the other
    scope may have some."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window
    from prompt_toolkit.styles import Style

    from ctxmodes.session.paths import cwd_filter
    from ctxmodes.tui.keymap import KeyMap, keybindings_path
    from ctxmodes.tui.picker import PICKER_STYLE, is_typed_text
    from ctxmodes.tui.picker_keys import bind_picker_actions
    from ctxmodes.tui.resume import ResumePicker, every_folder_root

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
    picker = resume.picker
    keys = KeyBindings()

    def drawn() -> StyleAndTextTuples:
        # Drawn to the terminal's width, to which the rows and hint lines are cut.
        return picker.fragments(app.output.get_size().columns)

    app: Application[None] = Application(
        layout=Layout(Window(FormattedTextControl(drawn), dont_extend_height=True)),
        key_bindings=keys,
        style=Style.from_dict(PICKER_STYLE),
        full_screen=False,
    )
    resume.wake = app.invalidate

    @keys.add("up")
    def _(event: KeyPressEvent) -> None:
        picker.move(-1)

    @keys.add("down")
    def _(event: KeyPressEvent) -> None:
        picker.move(1)

    @keys.add("enter")
    def _(event: KeyPressEvent) -> None:
        if picker.question is not None:
            picker.answer()
            return
        picker.pick()
        app.exit()

    @keys.add("escape", eager=True)
    def _(event: KeyPressEvent) -> None:
        if picker.question is not None:
            picker.dismiss()
        else:
            app.exit()

    @keys.add("c-c")
    def _(event: KeyPressEvent) -> None:
        app.exit()

    @keys.add("tab")
    def _(event: KeyPressEvent) -> None:
        picker.act("tui.input.tab")

    @keys.add("backspace")
    def _(event: KeyPressEvent) -> None:
        picker.backspace()

    bind_picker_actions(keys, keymap, lambda: picker)

    @keys.add("<any>")
    def _(event: KeyPressEvent) -> None:
        data = event.key_sequence[-1].data
        if is_typed_text(data):
            picker.type(data)

    app.run()
    return chosen[0] if chosen else None
