"""The keys of a picker's own actions that the keymap binds by Pi's action ids (renaming and
deleting sessions, changing the model scope), shared by the session's open pickers and the
picker ``-r`` shows before a session starts, and the ``/tree`` navigator's keys (its
paging with the cursor keys among them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from ctxmodes.tui.picker import is_typed_text

if TYPE_CHECKING:
    from prompt_toolkit.filters import FilterOrBool
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from ctxmodes.tui.keymap import KeyMap, KeySequence
    from ctxmodes.tui.picker import Picker

#: Pi's ids of the actions a picker may have of its own, each picker's in the order Pi's
#: component tries them: where a user binds one key to two actions of a picker, the first it
#: has runs, as in Pi.
PICKER_ACTIONS: Final = (
    # Pi's session selector.
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.delete",
    "app.session.rename",
    "app.session.deleteNoninvasive",
    # Pi's /scoped-models list.
    "app.models.reorderUp",
    "app.models.reorderDown",
    "app.models.enableAll",
    "app.models.clearAll",
    "app.models.toggleProvider",
    "app.models.save",
    # Pi's tree selector.
    "app.tree.foldOrUp",
    "app.tree.unfoldOrDown",
    "tui.editor.cursorLeft",
    # Pi's pickers page (the session selector after its own actions, the tree selector with
    # its cursor keys).
    "tui.select.pageUp",
    "tui.editor.cursorRight",
    "tui.select.pageDown",
    "app.message.copy",
    "app.tree.filter.default",
    "app.tree.filter.noTools",
    "app.tree.filter.userOnly",
    "app.tree.filter.labeledOnly",
    "app.tree.filter.all",
    "app.tree.filter.cycleBackward",
    "app.tree.filter.cycleForward",
    "app.tree.editLabel",
    "app.tree.toggleLabelTimestamp",
)


def bind_picker_actions(
    keys: KeyBindings,
    keymap: KeyMap,
    current: Callable[[], Picker],
    filter: FilterOrBool = True,
) -> None:
    """Each of :data:`PICKER_ACTIONS`'s keys runs the first of its actions the ``current``
    picker has; a picker without any, or asking a question, takes a printable key as typed
    (Shift+L is a capital L to a picker without labels, and a user may bind a letter)."""
    actions_of: dict[KeySequence, list[str]] = {}
    for action in PICKER_ACTIONS:
        for sequence in keymap.of(action):
            actions_of.setdefault(sequence, []).append(action)
    for sequence, actions in actions_of.items():

        def run(event: KeyPressEvent, actions: tuple[str, ...] = tuple(actions)) -> None:
            picker = current()
            if not any(picker.act(action) for action in actions):
                data = event.key_sequence[-1].data
                if is_typed_text(data):
                    picker.type(data)

        # Eager: the editor's Emacs keys start longer sequences with some of these (Ctrl+X
        # Ctrl+E), which would hold the key until the next one came.
        keys.add(*sequence, filter=filter, eager=True)(run)
