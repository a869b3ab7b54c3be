"""The keys of an open picker, read from the keymap by Pi's action ids: moving, paging,
choosing and cancelling (``tui.select.*``), the scope key (``tui.input.tab``), the editing
keys of its search field or typed answer (``tui.editor.*``, as Pi's single-line ``Input``
takes them) and each picker's own actions (renaming and deleting sessions, changing the
model scope, the ``/tree`` navigator's folds and filters). They serve the session's pickers
and the picker ``-r`` shows before a session starts alike.

Each picker checks its actions in the order of the Pi selector it stands for, then passes
the key to its field, which checks them in the order of Pi's ``Input``: where a user binds
one key to two actions, the first of them in that order runs, as in Pi."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from prompt_toolkit.filters import to_filter

from ctxmodes.tui.line_field import EDITS
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
    # The model and thinking level selectors' set-as-default key.
    "key.ctrl+s": (("c-s",),),
    # Alt+Enter, which Pi's editor always takes as a new line.
    "key.alt+enter": (("escape", "c-m"),),
}

#: The checks of Pi's ``Input`` that are not edits, by the keys of the action each reads:
#: its Esc (``tui.select.cancel``: nothing, for the fields here, that their selector did
#: not do first), and its submit (``tui.input.submit``, and Ctrl+J's line feed, which
#: ``Input`` submits on too), which chooses the selected row (``field.choose``: the
#: session, model and provider selectors' search, a typed answer) or does nothing
#: (``field.submit``: ``/scoped-models``' search, the ``/tree`` label).
FIELD_CHECKS: Final[Mapping[str, str]] = {
    "field.escape": "tui.select.cancel",
    "field.submit": "tui.input.submit",
    "field.choose": "tui.input.submit",
}
_LINE_FEED: Final = ("c-j",)
#: The moves between the lines of a text of several lines (Pi's editor checks them after
#: its submit).
LINE_MOVES: Final = ("tui.editor.cursorUp", "tui.editor.cursorDown")


def _field_keys(submit: str) -> tuple[str, ...]:
    """The keys of Pi's ``Input`` in the order it checks them: its Esc, undo, its submit,
    then the edits (:data:`~ctxmodes.tui.line_field.EDITS`)."""
    edits = [action for action in EDITS if action != "tui.editor.undo"]
    return ("field.escape", "tui.editor.undo", submit, *edits)


#: A search field whose submit does nothing (``/scoped-models``' search).
SEARCH_FIELD_KEYS: Final = _field_keys("field.submit")

#: A search field that chooses the selected row on its own submit key, as the session,
#: model and provider selectors' do (Enter, unless ``tui.select.confirm`` took it away).
CHOOSING_SEARCH_FIELD_KEYS: Final = _field_keys("field.choose")

#: Pi's plain selectors (its select lists, the trust and settings choices …).
SELECT_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "tui.select.pageUp",
    "tui.select.pageDown",
    "tui.select.confirm",
    "tui.select.cancel",
    *CHOOSING_SEARCH_FIELD_KEYS,
)

#: Pi's ``/fork`` selector (its user message selector): no paging, no search.
FORK_KEYS: Final = (
    "tui.select.up",
    "tui.select.down",
    "tui.select.confirm",
    "tui.select.cancel",
)

#: Pi's session selector (``/resume`` and ``-r``): the scope and its own actions first, then
#: a plain selector's.
SESSION_KEYS: Final = (
    "tui.input.tab",
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.delete",
    "app.session.rename",
    "app.session.deleteNoninvasive",
    *SELECT_KEYS,
)

#: Pi's model selector (``/model``): the scope key first, then no paging.
MODEL_KEYS: Final = (
    "tui.input.tab",
    "tui.select.up",
    "tui.select.down",
    "tui.select.confirm",
    "tui.select.cancel",
    "key.ctrl+s",
    *CHOOSING_SEARCH_FIELD_KEYS,
)
#: Pi's thinking level selector: its set-as-default key before all others.
THINKING_KEYS: Final = (
    "key.ctrl+s",
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

#: A line to type (a free-text answer), as Pi's login dialog takes it: its Esc, then the
#: field, whose submit answers; Enter answers too while ``tui.select.confirm`` has it.
TEXT_KEYS: Final = ("tui.select.confirm", "tui.select.cancel", *CHOOSING_SEARCH_FIELD_KEYS)

#: The ``/tree`` label, as Pi's label input takes it: its confirm and cancel keys first,
#: then the field, whose own submit does nothing.
LABEL_KEYS: Final = ("tui.select.confirm", "tui.select.cancel", *SEARCH_FIELD_KEYS)

#: A yes-or-no question over the rows (delete this session?): other keys are ignored.
CONFIRM_QUESTION_KEYS: Final = ("tui.select.confirm", "tui.select.cancel")

#: A question to type the answer to (the session's new name), as Pi's rename field: its
#: Esc first, then the field's own keys, its submit answering.
TYPED_QUESTION_KEYS: Final = ("tui.select.cancel", *CHOOSING_SEARCH_FIELD_KEYS)

#: A text of several lines, as Pi's multi-line editor (``ExtensionEditorComponent``) takes
#: it: its cancel and external editor keys, then the editor's, a new line before submit
#: (Enter, ``tui.input.submit``; ``tui.select.confirm``, which its hint names, is not read).
EDITOR_KEYS: Final = (
    "tui.select.cancel",
    "app.editor.external",
    *(action for action in EDITS),
    "tui.input.newLine",
    "key.alt+enter",
    "tui.input.submit",
    *LINE_MOVES,
)

_ORDERS: Final = (
    EDITOR_KEYS,
    SESSION_KEYS,
    MODEL_KEYS,
    SCOPED_MODEL_KEYS,
    THINKING_KEYS,
    TREE_KEYS,
    TEXT_KEYS,
    LABEL_KEYS,
    TYPED_QUESTION_KEYS,
)

_MOVES: Final = {"tui.select.up": -1, "tui.select.down": 1}
_FIELD_ACTIONS: Final = frozenset(FIELD_CHECKS) | frozenset(EDITS)


def key_order(picker: Picker) -> tuple[str, ...]:
    """The actions ``picker`` checks a key against now, in Pi's order: its question's, a
    line to type's, or its own (:data:`SELECT_KEYS` unless it names another; an action of
    its own missing from that order comes after it)."""
    question = picker.question
    if question is not None:
        return CONFIRM_QUESTION_KEYS if question.answer is None else TYPED_QUESTION_KEYS
    if picker.free_text:
        return picker.key_order or TEXT_KEYS
    order = picker.key_order or SELECT_KEYS
    return order + tuple(action for action in picker.actions if action not in order)


def sequences_of(keymap: KeyMap, action: str) -> tuple[KeySequence, ...]:
    """The keys of ``action``: the keymap's, a fixed key's own, or those of the action a
    check of Pi's ``Input`` reads (:data:`FIELD_CHECKS`)."""
    fixed = FIXED_KEYS.get(action)
    if fixed is not None:
        return fixed
    read = FIELD_CHECKS.get(action)
    if read is None:
        return keymap.of(action)
    keys = keymap.of(read)
    return keys if action == "field.escape" else tuple(dict.fromkeys((*keys, _LINE_FEED)))


def take_unbound(picker: Picker, typed: str) -> None:
    """A key none of ``picker``'s actions took: its text is typed (``typed``, empty for a
    control key), else the search takes it and changes nothing, as Pi's ``Input`` ignores
    it."""
    if is_typed_text(typed):
        picker.type(typed)
    else:
        picker.refilter()


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
        runs; with none, the key's text is typed (``typed``, empty for a control key), or
        the search takes the key and changes nothing."""
        for action in key_order(picker):
            if action not in actions:
                continue
            if action in picker.typing_passes and picker.query and picker.question is None:
                self._field(picker, actions, typed)
                return
            if self._run(picker, action):
                return
        take_unbound(picker, typed)

    def _field(self, picker: Picker, actions: frozenset[str], typed: str) -> None:
        """The key given to the search field alone, as its checks come in ``picker``'s
        order."""
        for action in key_order(picker):
            if action in actions and action in _FIELD_ACTIONS and self._run(picker, action):
                return
        take_unbound(picker, typed)

    def _run(self, picker: Picker, action: str) -> bool:
        """Run ``action`` on ``picker``; whether the picker has it (a field's key is the
        picker's only when a line takes the keys)."""
        if action in _FIELD_ACTIONS and not picker.has_field():
            return False
        question = picker.question
        if question is not None:
            if action == "tui.select.cancel":
                picker.dismiss()
            elif action in ("tui.select.confirm", "field.choose"):
                picker.answer()
            elif action in EDITS:
                picker.edit(action)
            return True
        own = picker.actions.get(action)
        if own is not None:
            own()
        elif action in _MOVES:
            picker.move(_MOVES[action])
        elif action == "tui.input.submit" and picker.backslash_new_line():
            pass
        elif action in ("tui.select.confirm", "field.choose", "tui.input.submit"):
            self._confirm(picker)
        elif action in ("tui.input.newLine", "key.alt+enter"):
            picker.new_line()
        elif action == "tui.select.cancel":
            if not picker.clear_query():
                self._cancel(picker)
        elif action == "key.ctrl+c":
            if not picker.clear_query(always=True):
                self._cancel(picker)
        elif action == "key.escape":
            self._cancel(picker)
        elif action in FIELD_CHECKS:
            picker.refilter()
        elif action in EDITS or action in LINE_MOVES:
            return picker.edit(action)
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

    for sequence, bound in actions_of.items():

        def run(event: KeyPressEvent, bound: frozenset[str] = frozenset(bound)) -> None:
            # An Alt key's letter is no typing, as Pi never types what comes with Esc.
            pressed = event.key_sequence
            actions.run(current(), bound, pressed[-1].data if len(pressed) == 1 else "")

        if sequence == ("escape",):
            # Not eager: an Alt key arrives as Esc and the key, and is told from a lone Esc
            # by the terminal's wait alone (the picker's own wait is none).
            keys.add(*sequence, filter=picking)(run)
        else:
            # Eager: the editor's Emacs keys start longer sequences with some of these
            # (Ctrl+X Ctrl+E), which would hold the key until the next one came.
            keys.add(*sequence, filter=picking, eager=True)(run)

    @keys.add("<any>", filter=picking)
    def _(event: KeyPressEvent) -> None:
        take_unbound(current(), event.key_sequence[-1].data)

    @keys.add("escape", "<any>", filter=picking)
    def _(event: KeyPressEvent) -> None:
        # An Alt key no action has: ignored, as Pi's field ignores what comes with Esc,
        # rather than read as Esc and then the key.
        take_unbound(current(), "")
