"""Internal to ctxmodes' terminal: the hint lines of the pickers, naming the keys
``keybindings.json`` binds now as Pi's hints name them (``keybinding-hints.js``): an
action's keys as written there, joined by ``/`` (``escape/ctrl+c``), then what they do.

Where Pi draws a picker's hint, the words and their order are Pi's; the pickers Pi has no
hint for (``/fork``, ``/settings``, ``/login``'s list, ``/model``, which names fixed keys
in Pi) say theirs the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ctxmodes.tui.keymap import KeyMap, key_text

CONFIRM: Final = "tui.select.confirm"
CANCEL: Final = "tui.select.cancel"
#: How Pi's tree writes key names in its help, in the order it replaces them.
_KEY_WORDS: Final = (
    ("pageUp", "pgup"),
    ("pageDown", "pgdn"),
    ("up", "↑"),
    ("down", "↓"),
    ("left", "←"),
    ("right", "→"),
)


def set_as_default_hint(keymap: KeyMap) -> str:
    """The line of Pi's model and thinking level selectors, naming the keys bound; their
    set-as-default key is Ctrl+S whatever ``keybindings.json`` binds, as Pi checks it by
    name."""
    select, cancel = key_hint(keymap, CONFIRM, "to select"), key_hint(keymap, CANCEL, "to cancel")
    return f"{select} · ctrl+s to set as default · {cancel}"


def key_hint(keymap: KeyMap, action: str, words: str) -> str:
    """Pi's ``keyHint``: the keys of ``action`` (none: nothing), a space, ``words``."""
    return f"{keymap.text(action)} {words}"


def raw_key_hint(key: str, words: str) -> str:
    """Pi's ``rawKeyHint``: ``key`` written as Pi writes keys (``alt`` named ``option`` on
    macOS), a space, ``words``: for what is typed (``/ commands``) or several actions' keys
    joined (``ctrl+c/ctrl+d clear/exit``)."""
    return f"{key_text(tuple(key.split('/')))} {words}"


def help_keys(keymap: KeyMap, actions: Sequence[str]) -> str:
    """Pi's tree help's ``formatHelpKeys``: the first key bound to each of ``actions``, one
    shared modifier written once (``ctrl+d/t/u/l/a``, Pi's ``compactRawKeys``), page keys
    shortened and arrows drawn as arrows (``↑/↓``); empty when none is bound."""
    keys = [names[0] for action in actions if (names := keymap.names.get(action, ()))]
    if not keys:
        return ""
    if len(keys) == 1:
        joined = keys[0]
    else:
        prefixes = [key[: key.rfind("+") + 1] for key in keys]
        shared = prefixes[0]
        if shared and all(prefix == shared for prefix in prefixes):
            joined = shared + "/".join(key[len(shared) :] for key in keys)
        else:
            joined = "/".join(keys)
    shown = key_text((joined,))
    for word, written in _KEY_WORDS:
        shown = re.sub(rf"\b{word}\b", written, shown)
    return shown


def move_hint(keymap: KeyMap) -> str:
    """The keys that move the selection, as Pi's tree names them: ``↑/↓ move``."""
    return f"{help_keys(keymap, ('tui.select.up', 'tui.select.down'))} move"


def selector_hint(keymap: KeyMap, choose: str) -> str:
    """The hint of Pi's selectors of a few choices (an extension's question, a
    confirmation, ``/trust``): ``↑↓ navigate  enter select  escape/ctrl+c cancel``, the
    arrows as Pi writes them whatever moves, ``choose`` what Enter does."""
    return f"↑↓ navigate  {key_hint(keymap, CONFIRM, choose)}  {key_hint(keymap, CANCEL, 'cancel')}"


def input_hint(keymap: KeyMap, submit: str = "submit") -> str:
    """The hint of Pi's one-line answer fields (an extension's input, a tree label):
    ``enter submit  escape/ctrl+c cancel``."""
    return f"{key_hint(keymap, CONFIRM, submit)}  {key_hint(keymap, CANCEL, 'cancel')}"


def editor_hint(keymap: KeyMap) -> str:
    """The hint of Pi's multi-line editor (``ExtensionEditorComponent``): ``enter submit
    shift+enter/ctrl+j newline  escape/ctrl+c cancel  ctrl+g external editor``."""
    return "  ".join(
        (
            key_hint(keymap, CONFIRM, "submit"),
            key_hint(keymap, "tui.input.newLine", "newline"),
            key_hint(keymap, CANCEL, "cancel"),
            key_hint(keymap, "app.editor.external", "external editor"),
        )
    )


def list_hint(keymap: KeyMap, choose: str, *, typed: bool = True, cancel: str = "cancel") -> str:
    """The hint of a list Pi has none for: the move keys, ``type to filter`` when typing
    filters it, the key choosing (``choose``, what it does) and the one closing it."""
    items = [move_hint(keymap)]
    if typed:
        items.append("type to filter")
    items += [key_hint(keymap, CONFIRM, choose), key_hint(keymap, CANCEL, cancel)]
    return " · ".join(items)
