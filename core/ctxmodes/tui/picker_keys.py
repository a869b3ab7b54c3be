"""The keys of an open picker, read from the keymap by Pi's action ids: moving, paging,
choosing and cancelling (``tui.select.*``), the scope key (``tui.input.tab``), the search
field's editing keys (``tui.editor.*``) and each picker's own actions (renaming and deleting
sessions, changing the model scope, the ``/tree`` navigator's folds and filters). They serve
the session's pickers and the picker ``-r`` shows before a session starts alike.

Each picker checks its actions in the order of the Pi selector it stands for: where a user
binds one key to two actions, the first of them in that order runs, as in Pi."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final, Literal

from prompt_toolkit.filters import Condition, to_filter

from ctxmodes.tui.picker import is_typed_text

if TYPE_CHECKING:
    from prompt_toolkit.filters import FilterOrBool
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from ctxmodes.tui.keymap import KeyMap, KeySequence
    from ctxmodes.tui.picker import Picker

#: Keys some of Pi's selectors check by name rather than through the keymap, as the keys
#: Pi names them with (``/scoped-models``' Ctrl+C and Esc): a ``keybindings.json`` does not
#: change them.
FIXED_KEYS: Final[Mapping[str, tuple[KeySequence, ...]]] = {
    "key.ctrl+c": (("c-c",),),
    "key.escape": (("escape",),),
}

#: The editing keys of Pi's search fields, in the order its ``Input`` checks them.
SEARCH_FIELD_KEYS: Final = (
    "tui.editor.deleteCharBackward",
    "tui.editor.cursorLeft",
    "tui.editor.cursorRight",
    "tui.editor.cursorLineStart",
    "tui.editor.cursorLineEnd",
)

#: A search field that chooses the selected row on its own submit key, as the session and
#: model selectors' do (Enter, unless ``tui.select.confirm`` took it away).
CHOOSING_SEARCH_FIELD_KEYS: Final = ("tui.input.submit", *SEARCH_FIELD_KEYS)

#: Pi's plain selectors (its select lists, the trust and settings choices …).
SELECT_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
    *SEARCH_FIELD_KEYS,
)

#: Pi's ``/fork`` selector (its user message selector): no paging, no search.
FORK_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "tui.select.confirm",
    "tui.select.cancel",
)

#: Pi's session selector (``/resume`` and ``-r``): the scope and its own actions first.
SESSION_KEYS: Final = (
    "tui.input.tab",
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.delete",
    "app.session.rename",
    "app.session.deleteNoninvasive",
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
    *CHOOSING_SEARCH_FIELD_KEYS,
)

#: Pi's model selector (``/model``): the scope key first, then no paging.
MODEL_KEYS: Final = (
    "tui.input.tab",
    "tui.select.up",
    "tui.select.down",
    "tui.select.confirm",
    "tui.select.cancel",
    *CHOOSING_SEARCH_FIELD_KEYS,
)

#: Pi's ``/scoped-models`` list, which closes on Ctrl+C (emptying its search first) and
#: on Esc, whatever ``tui.select.cancel`` is bound to.
SCOPED_MODEL_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "app.models.reorderUp",
    "app.models.reorderDown",
    "tui.select.confirm",
    "app.models.enableAll",
    "app.models.clearAll",
    "app.models.toggleProvider",
    "app.models.save",
    "key.ctrl+c",
    "key.escape",
    *SEARCH_FIELD_KEYS,
)

#: Pi's tree selector (``/tree``): its cursor keys page, its search takes Backspace only.
TREE_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "app.tree.foldOrUp",
    "app.tree.unfoldOrDown",
    "tui.editor.cursorLeft",
    "tui.select.pageUp",
    "tui.editor.cursorRight",
    "tui.select.pageDown",
    "tui.select.confirm",
    "app.message.copy",
    "tui.select.cancel",
    "app.tree.filter.default",
    "app.tree.filter.noTools",
    "app.tree.filter.userOnly",
    "app.tree.filter.labeledOnly",
    "app.tree.filter.all",
    "app.tree.filter.cycleBackward",
    "app.tree.filter.cycleForward",
    "tui.editor.deleteCharBackward",
    "app.tree.editLabel",
    "app.tree.toggleLabelTimestamp",
)

#: A line to type (the ``/tree`` label, a free-text answer), as Pi's label input takes it.
TEXT_KEYS: Final = ("tui.select.confirm", "tui.select.cancel", *SEARCH_FIELD_KEYS)

#: A yes-or-no question over the rows (delete this session?): other keys are ignored.
CONFIRM_QUESTION_KEYS: Final = ("tui.select.confirm", "tui.select.cancel")

#: A question to type the answer to (the session's new name), as Pi's rename field: its
#: Esc first, then the field's own keys, Enter among them.
TYPED_QUESTION_KEYS: Final = (
    "tui.select.cancel",
    "tui.input.submit",
    "tui.editor.deleteCharBackward",
)

_ORDERS: Final = (
    SESSION_KEYS,
    MODEL_KEYS,
    SCOPED_MODEL_KEYS,
    TREE_KEYS,
    TEXT_KEYS,
    TYPED_QUESTION_KEYS,
)

_CURSOR_PLACES: Final[Mapping[str, Literal["left", "right", "start", "end"]]] = {
    "tui.editor.cursorLeft": "left",
    "tui.editor.cursorRight": "right",
    "tui.editor.cursorLineStart": "start",
    "tui.editor.cursorLineEnd": "end",
}
_MOVES: Final = {"tui.select.up": -1, "tui.select.down": 1}


def key_order(picker: Picker) -> tuple[str, ...]:
    """The actions ``picker`` checks a key against now, in Pi's order: its question's, a
    line to type's, or its own (:data:`SELECT_KEYS` unless it names another; an action of
    its own missing from that order comes after it)."""
    question = picker.question
    if question is not None:
        return CONFIRM_QUESTION_KEYS if question.answer is None else TYPED_QUESTION_KEYS
    if picker.free_text:
        return TEXT_KEYS
    order = picker.key_order or SELECT_KEYS
    return order + tuple(action for action in picker.actions if action not in order)


def sequences_of(keymap: KeyMap, action: str) -> tuple[KeySequence, ...]:
    """The keys of ``action``: the keymap's, or a fixed key's own."""
    return FIXED_KEYS.get(action) or keymap.of(action)


class PickerKeys:
    """What an open picker's keys do.

    :param confirm: ``tui.select.confirm`` on a row (the picker chooses and closes).
    :param cancel: ``tui.select.cancel`` with nothing to empty first (the picker closes).
    """

    def __init__(self, confirm: Callable[[Picker], None], cancel: Callable[[Picker], None]) -> None:
        self._confirm = confirm
        self._cancel = cancel

    def run(self, picker: Picker, actions: frozenset[str], typed: str) -> None:
        """A key bound to ``actions`` reached ``picker``: the first of them in its order
        runs; with none, the key's text is typed (``typed``, empty for a control key)."""
        for action in key_order(picker):
            if action in actions and self._run(picker, action):
                return
        if is_typed_text(typed):
            picker.type(typed)

    def _run(self, picker: Picker, action: str) -> bool:
        """Run ``action`` on ``picker``; whether the picker has it (a search field's cursor
        key is the picker's only when its query has a cursor)."""
        question = picker.question
        if question is not None:
            if action == "tui.select.cancel":
                picker.dismiss()
            elif action == "tui.editor.deleteCharBackward":
                picker.backspace()
            else:
                picker.answer()
            return True
        own = picker.actions.get(action)
        if own is not None:
            own()
        elif action in _MOVES:
            picker.move(_MOVES[action])
        elif action in ("tui.select.confirm", "tui.input.submit"):
            self._confirm(picker)
        elif action == "tui.select.cancel":
            if not picker.clear_query():
                self._cancel(picker)
        elif action == "key.ctrl+c":
            if not picker.clear_query(always=True):
                self._cancel(picker)
        elif action == "key.escape":
            self._cancel(picker)
        elif action == "tui.editor.deleteCharBackward":
            picker.backspace()
        elif action in _CURSOR_PLACES:
            if picker.query_cursor is None:
                return False
            picker.move_cursor(_CURSOR_PLACES[action])
        else:
            return picker.act(action)
        return True


def bind_picker_keys(
    keys: KeyBindings,
    keymap: KeyMap,
    current: Callable[[], Picker],
    actions: PickerKeys,
    filter: FilterOrBool = True,
) -> None:
    """Bind every key of the pickers' actions (see :func:`key_order`) and every other key
    to the ``current`` picker, while ``filter`` holds."""
    picking = to_filter(filter)
    actions_of: dict[KeySequence, set[str]] = {}
    every_action = {action for order in _ORDERS for action in order} | set(SELECT_KEYS)
    for action in sorted(every_action):
        for sequence in sequences_of(keymap, action):
            actions_of.setdefault(sequence, set()).add(action)

    def takes_alt_keys() -> bool:
        """The open picker has an action on an Alt key (``/scoped-models``' Alt+↑), which
        arrives as Esc and the key: there a lone Esc waits for what follows it."""
        picker = current()
        return any(
            len(sequence) > 1 and sequence[0] == "escape"
            for action in key_order(picker)
            for sequence in sequences_of(keymap, action)
        )

    alt_keys = Condition(takes_alt_keys)
    for sequence, bound in actions_of.items():

        def run(event: KeyPressEvent, bound: frozenset[str] = frozenset(bound)) -> None:
            actions.run(current(), bound, event.key_sequence[-1].data)

        if sequence == ("escape",):
            keys.add(*sequence, filter=picking & ~alt_keys, eager=True)(run)
            keys.add(*sequence, filter=picking & alt_keys)(run)
        else:
            # Eager: the editor's Emacs keys start longer sequences with some of these
            # (Ctrl+X Ctrl+E), which would hold the key until the next one came.
            keys.add(*sequence, filter=picking, eager=True)(run)

    @keys.add("<any>", filter=picking)
    def _(event: KeyPressEvent) -> None:
        data = event.key_sequence[-1].data
        if is_typed_text(data):
            current().type(data)
