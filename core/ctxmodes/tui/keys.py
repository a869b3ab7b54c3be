"""The keys of the terminal session: what the editor's keys do (Enter sends, Esc stops, Esc
Esc opens the tree or the fork selector, Ctrl+C clears or quits…) and the keys of an open
picker."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from ctxmodes.pi_settings_save import save_choice
from ctxmodes.tui import render
from ctxmodes.tui.commands import run_command, run_typed
from ctxmodes.tui.cycling import cycle_model, cycle_thinking
from ctxmodes.tui.editor_edits import bind_editor_edits
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.picker import is_typed_text
from ctxmodes.tui.picker_keys import PickerKeys, bind_picker_keys

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession
    from ctxmodes.tui.picker import Picker

#: Two presses of Esc (or of Ctrl+C) this close together count as a double press.
DOUBLE_PRESS_SECONDS: Final = 0.5
EXIT_PRESS_SECONDS: Final = 1.0


class KeyActions:
    """What the editor's keys do that depends on more than the editor.

    :param clock: monotonic seconds, for double presses.
    """

    def __init__(self, session: TerminalSession, clock: Callable[[], float]) -> None:
        self._session = session
        self._clock = clock
        self.last_escape = -1.0
        self._last_interrupt = -1.0

    def interrupt(self) -> None:
        """Esc: abort what runs, putting queued text back in the editor (and the prompt
        too, if nothing of its answer has shown yet); twice on an empty editor while idle:
        what ``terminal.double_escape_action`` (Pi's ``doubleEscapeAction``) names, the tree
        navigator, the fork selector or nothing, as Pi's Esc Esc does."""
        session = self._session
        running_shell = session.shell_abort
        if running_shell is not None:
            running_shell.abort()
            return
        if session.busy():
            queued = session.agent.abort()
            prompt = session.transcript.take_unanswered_prompt()
            session.restore_to_editor([prompt, *queued] if prompt is not None else queued)
            self.last_escape = -1.0
            return
        action = session.settings.double_escape_action
        # Pi counts presses only on an empty editor, and none when Esc Esc does nothing.
        if session.buffer.text.strip() or action == "none":
            return
        now = self._clock()
        if now - self.last_escape >= DOUBLE_PRESS_SECONDS:
            self.last_escape = now
            return
        self.last_escape = -1.0
        if action == "fork":
            from ctxmodes.tui.fork_selector import open_fork_selector

            open_fork_selector(session)
        else:
            from ctxmodes.tui.navigator import open_tree

            open_tree(session, "")

    def take_back_queue(self) -> None:
        """Alt+Up: the queued messages back into the editor; nothing is sent."""
        steering, follow_up = self._session.agent.take_queued()
        self._session.restore_to_editor(steering + follow_up)

    def clear_or_exit(self) -> None:
        """Ctrl+C: clear the editor (kept in history); twice: leave."""
        session = self._session
        now = self._clock()
        if now - self._last_interrupt <= EXIT_PRESS_SECONDS:
            session.exit()
            return
        self._last_interrupt = now
        if session.buffer.text:
            session.expand_pastes()
            session.buffer.append_to_history()
            session.buffer.reset()
        else:
            session.notify(f"Press {session.keymap.text('app.clear')} again to exit")

    def toggle_thinking(self) -> None:
        """Ctrl+T: thinking in full, or collapsed to a line saying how long it was (what is
        in the scrollback already stays as it was printed); saved as Pi saves it."""
        session = self._session
        live = session.live
        live.show_thinking = not live.show_thinking
        session.notify("Thinking shown in full" if live.show_thinking else "Thinking collapsed")
        hidden = not live.show_thinking
        save_choice([(("hideThinkingBlock",), hidden)], session.notify, session.defaults.origins)

    def paste(self) -> None:
        """Ctrl+V: the clipboard's image (saved to a file, its path typed in) or text."""
        from ctxmodes.tui.clipboard import clipboard_paste

        pasted = clipboard_paste()
        if pasted is None:
            self._session.notify(
                "Nothing to paste: the clipboard is empty or unreachable "
                "(reading it needs wl-paste or xclip)"
            )
            return
        self._session.buffer.insert_text(pasted)

    def suspend(self) -> None:
        """Ctrl+Z: back to the shell, the session stopped with the process (job control);
        ``fg`` brings it back as it was, a reply that was streaming then going on."""
        self._session.app.suspend_to_background()

    def show_tool_outputs(self) -> None:
        """Ctrl+O (``app.tools.expand``): the full output of every tool call and ``!``
        command since the key was last pressed, as Pi's key expands every result (pressed
        again, the last one's once more); before any, the start-up header expanded, as
        the key expands Pi's (the scrollback keeps the header as it was printed, so it is
        printed again below)."""
        session = self._session
        if not session.transcript.tool_outputs:
            if session.settings.quiet_startup:
                session.notify("No tool output yet")
            else:
                session.print_blocks([session.startup_header(expanded=True)])
            return
        outputs = session.transcript.outputs_to_expand()
        session.print_blocks(
            [render.full_output(name, text, session.width) for name, text in outputs]
        )


def key_bindings(session: TerminalSession, picking: Condition, keymap: KeyMap) -> KeyBindings:
    """The editor's keys as ``keymap`` binds its actions, and the keys of an open picker."""
    keys = KeyBindings()
    actions = session.keys
    buffer = session.buffer
    # While Ctrl+R searches, Enter and Esc belong to the search (accept, cancel).
    editing = ~picking & ~is_searching

    def submit() -> None:
        state = buffer.complete_state
        if state is not None and state.completions:
            # Enter takes the highlighted (or first) completion; the next Enter submits.
            chosen = state.current_completion or state.completions[0]
            # A command typed in full needs no completion: its space is not worth an Enter.
            if chosen.text.rstrip() != buffer.document.text_before_cursor.rstrip():
                buffer.apply_completion(chosen)
                return
            buffer.cancel_completion()
        run_typed(session, "steer")

    def interrupt() -> None:
        if buffer.complete_state is not None:
            buffer.cancel_completion()
            return
        actions.interrupt()

    def exit_when_empty() -> None:
        if not buffer.text:
            session.exit()
        else:
            session.editor_edits.run("tui.editor.deleteCharForward")

    def open_in_editor() -> None:
        session.expand_pastes()
        buffer.open_in_editor()

    editor_actions: dict[str, Callable[[], None]] = {
        "tui.input.submit": submit,
        "tui.input.newLine": lambda: buffer.insert_text("\n"),
        "app.message.followUp": lambda: run_typed(session, "follow_up"),
        "app.message.dequeue": actions.take_back_queue,
        "app.interrupt": interrupt,
        "app.exit": exit_when_empty,
        "app.editor.external": open_in_editor,
        "app.tools.expand": actions.show_tool_outputs,
        "app.thinking.toggle": actions.toggle_thinking,
        "app.clipboard.pasteImage": actions.paste,
        "app.model.select": lambda: run_command(session, "model"),
        "app.model.cycleForward": lambda: cycle_model(session, "forward"),
        "app.model.cycleBackward": lambda: cycle_model(session, "backward"),
        "app.thinking.cycle": lambda: cycle_thinking(session),
        "app.session.tree": lambda: run_command(session, "tree"),
        "app.session.new": lambda: run_command(session, "new"),
        "app.session.resume": lambda: run_command(session, "resume"),
        "app.session.fork": lambda: run_command(session, "fork"),
        "app.suspend": actions.suspend,
        "app.message.copy": lambda: run_command(session, "copy"),
    }
    for action, run in editor_actions.items():
        for sequence in keymap.of(action):
            # Eager: Ctrl+X, Pi's copy, starts the editor's Emacs sequences (Ctrl+X Ctrl+E),
            # which would hold it until the next key came.
            eager = action == "app.message.copy"
            keys.add(*sequence, filter=editing, eager=eager)(_handler(run))

    # An open picker takes Ctrl+C as its keys bind it (Pi's tui.select.cancel); anywhere else,
    # the editor's history search too, it clears or leaves.
    for sequence in keymap.of("app.clear"):
        keys.add(*sequence, filter=~picking)(_handler(actions.clear_or_exit))

    # Pi's moves and deletes, on the keys no action of the terminal's own has.
    taken = {
        sequence for action in (*editor_actions, "app.clear") for sequence in keymap.of(action)
    }
    bind_editor_edits(keys, keymap, session.editor_edits, editing, taken)

    @keys.add(Keys.Any, filter=editing, save_before=lambda event: False)
    def _(event: KeyPressEvent) -> None:
        # Typing, grouped for undo as Pi groups it; a control key no binding has is
        # ignored, as in Pi, rather than typed in.
        if is_typed_text(event.data):
            session.editor_edits.type(event.data)

    @keys.add(Keys.BracketedPaste, filter=editing, save_before=lambda event: False)
    def _(event: KeyPressEvent) -> None:
        # A large paste goes in as Pi's marker; any paste cleaned as Pi cleans it.
        session.editor_edits.paste(event.data)

    @keys.add("tab", filter=editing)
    def _(event: KeyPressEvent) -> None:
        if buffer.complete_state is not None:
            buffer.complete_next()
        else:
            buffer.start_completion(select_first=True)

    _picker_bindings(session, keys, picking, keymap)
    return keys


def _handler(run: Callable[[], None]) -> Callable[[KeyPressEvent], None]:
    def handle(event: KeyPressEvent) -> None:
        run()

    return handle


def _picker_bindings(
    session: TerminalSession, keys: KeyBindings, picking: Condition, keymap: KeyMap
) -> None:
    def current() -> Picker:
        assert session.picker is not None
        return session.picker

    def confirm(picker: Picker) -> None:
        if not picker.closes_on_enter():
            return
        session.close_picker()
        picker.pick()

    @keys.add(Keys.BracketedPaste, filter=picking)
    def _(event: KeyPressEvent) -> None:
        # Never for the editor behind the picker.
        picker = current()
        if not picker.drops_paste:
            picker.paste(event.data)

    actions = PickerKeys(confirm, lambda picker: session.cancel_picker())
    bind_picker_keys(keys, keymap, current, actions, picking)
