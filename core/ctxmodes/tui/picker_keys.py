"""The keys of a picker's own actions that the keymap binds by Pi's action ids (renaming and
deleting sessions, changing the model scope), shared by the session's open pickers and the
picker ``-r`` shows before a session starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from prompt_toolkit.filters import FilterOrBool
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from ctxmodes.tui.keymap import KeyMap
    from ctxmodes.tui.picker import Picker

#: Pi's ids of the actions a picker may have of its own.
PICKER_ACTIONS: Final = (
    "app.session.rename",
    "app.session.delete",
    "app.session.deleteNoninvasive",
    "app.models.save",
    "app.models.enableAll",
    "app.models.clearAll",
    "app.models.toggleProvider",
    "app.models.reorderUp",
    "app.models.reorderDown",
)


def bind_picker_actions(
    keys: KeyBindings,
    keymap: KeyMap,
    current: Callable[[], Picker],
    filter: FilterOrBool = True,
) -> None:
    """Each of :data:`PICKER_ACTIONS`'s keys runs that action of the ``current`` picker; a
    picker without it, or asking a question, takes a printable key as typed (a user may
    bind a letter)."""
    for action in PICKER_ACTIONS:

        def run(event: KeyPressEvent, action: str = action) -> None:
            picker = current()
            if not picker.act(action):
                data = event.key_sequence[-1].data
                if data.isprintable():
                    picker.type(data)

        # Eager: the editor's Emacs keys start longer sequences with some of these (Ctrl+X
        # Ctrl+E), which would hold the key until the next one came.
        for sequence in keymap.of(action):
            keys.add(*sequence, filter=filter, eager=True)(run)
