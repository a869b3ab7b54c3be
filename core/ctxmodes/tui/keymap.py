"""Which keys run which of the terminal's actions: Pi's action ids and defaults, changed by
Pi's own ``keybindings.json`` (in Pi's agent directory, ``~/.pi/agent`` unless
``PI_CODING_AGENT_DIR`` says otherwise), in Pi's key format (``ctrl+g``, ``alt+enter``,
``shift+tab``, ``["ctrl+j", "shift+enter"]``).

Only the actions this terminal has are read; the file's other ids (Pi's fullscreen viewport
and so on) are left to Pi. Pi's ``tui.select.*`` keys and the ``tui.editor.*`` keys of its
search fields are read for the pickers (the ``/tree`` navigator pages with the cursor keys
as Pi's does); the editor keeps prompt_toolkit's own keys. A key a terminal cannot report apart from
another (``shift+enter`` is Enter to most of them, ``super`` never arrives) is skipped, and
said once when the user asked for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: A key as prompt_toolkit takes it: one key, or Esc then a key for Alt.
KeySequence = tuple[str, ...]


def _tree_arrow_keys(direction: str) -> tuple[str, str]:
    """Pi's tree keys for one arrow: Ctrl first, Alt (Option) first on macOS."""
    ctrl, alt = f"ctrl+{direction}", f"alt+{direction}"
    return (alt, ctrl) if sys.platform == "darwin" else (ctrl, alt)


#: The actions of the terminal, with Pi's default keys.
DEFAULTS: Final[Mapping[str, tuple[str, ...]]] = {
    "tui.input.submit": ("enter",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"),
    "app.message.followUp": ("alt+enter",),
    "app.message.dequeue": ("alt+up",),
    "app.interrupt": ("escape",),
    "app.clear": ("ctrl+c",),
    "app.exit": ("ctrl+d",),
    "app.editor.external": ("ctrl+g",),
    "app.tools.expand": ("ctrl+o",),
    "app.thinking.toggle": ("ctrl+t",),
    "app.clipboard.pasteImage": ("ctrl+v",),
    "app.model.select": ("ctrl+l",),
    "app.thinking.cycle": ("shift+tab",),
    "app.model.cycleForward": ("ctrl+p",),
    # Pi's Shift+Ctrl+P arrives as Ctrl+P from a terminal's legacy keys, all a terminal
    # program reads without the kitty protocol: Alt+P, Pi's own key where the two cannot
    # be told apart (Windows), is the one that works.
    "app.model.cycleBackward": ("shift+ctrl+p", "alt+p"),
    "app.session.tree": (),
    "app.session.new": (),
    "app.session.resume": (),
    "app.session.fork": (),
    # The session pickers' own (``/resume``, ``-r``). Pi's Ctrl+Backspace arrives as
    # Backspace from a terminal's legacy keys, so it binds nothing until a key is given.
    "app.session.rename": ("ctrl+r",),
    "app.session.delete": ("ctrl+d",),
    "app.session.deleteNoninvasive": ("ctrl+backspace",),
    # The resume picker's own toggles: named sessions only, each session's path, the order.
    "app.session.toggleNamedFilter": ("ctrl+n",),
    "app.session.togglePath": ("ctrl+p",),
    "app.session.toggleSort": ("ctrl+s",),
    # The selected message to the clipboard: the tree's entry, or in the editor the last
    # reply.
    "app.message.copy": ("ctrl+x",),
    # The /tree navigator's own. Pi's Shift+Ctrl+O arrives as Ctrl+O from a terminal's
    # legacy keys, which cycles forward first in Pi as here: it binds nothing until a key
    # is given.
    "app.tree.foldOrUp": _tree_arrow_keys("left"),
    "app.tree.unfoldOrDown": _tree_arrow_keys("right"),
    "app.tree.editLabel": ("shift+l",),
    "app.tree.toggleLabelTimestamp": ("shift+t",),
    "app.tree.filter.default": ("ctrl+d",),
    "app.tree.filter.noTools": ("ctrl+t",),
    "app.tree.filter.userOnly": ("ctrl+u",),
    "app.tree.filter.labeledOnly": ("ctrl+l",),
    "app.tree.filter.all": ("ctrl+a",),
    "app.tree.filter.cycleForward": ("ctrl+o",),
    "app.tree.filter.cycleBackward": ("shift+ctrl+o",),
    # Pi's selection keys, which every picker takes (the -r picker too).
    "tui.select.up": ("up",),
    "tui.select.down": ("down",),
    "tui.select.pageUp": ("pageUp",),
    "tui.select.pageDown": ("pageDown",),
    "tui.select.confirm": ("enter",),
    "tui.select.cancel": ("escape", "ctrl+c"),
    # The scope key of the /model and session pickers.
    "tui.input.tab": ("tab",),
    # Pi's editor keys that the pickers' search and answer fields take, as its single-line
    # Input does; in /tree the cursor keys page (the editor's own keys are prompt_toolkit's
    # and stay as they are).
    "tui.editor.undo": ("ctrl+-",),
    "tui.editor.deleteCharBackward": ("backspace",),
    "tui.editor.deleteCharForward": ("delete", "ctrl+d"),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"),
    "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",),
    "tui.editor.deleteToLineEnd": ("ctrl+k",),
    "tui.editor.yank": ("ctrl+y",),
    "tui.editor.yankPop": ("alt+y",),
    "tui.editor.cursorLeft": ("left", "ctrl+b"),
    "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+home", "ctrl+a"),
    "tui.editor.cursorLineEnd": ("end", "ctrl+end", "ctrl+e"),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    # Between the rows of the draft (and of a branch summary's instructions), and on
    # through the prompts sent before, as in Pi's multi-line editor.
    "tui.editor.cursorUp": ("up",),
    "tui.editor.cursorDown": ("down",),
    "tui.editor.historyPrevious": (),
    "tui.editor.historyNext": (),
    "tui.editor.pageUp": ("pageUp", "ctrl+pageUp"),
    "tui.editor.pageDown": ("pageDown", "ctrl+pageDown"),
    # The /scoped-models list's own.
    "app.models.save": ("ctrl+s",),
    "app.models.enableAll": ("ctrl+a",),
    "app.models.clearAll": ("ctrl+x",),
    "app.models.toggleProvider": ("ctrl+p",),
    "app.models.reorderUp": ("alt+up",),
    "app.models.reorderDown": ("alt+down",),
    # Windows has no job control to suspend into, and Pi binds nothing there.
    "app.suspend": () if sys.platform == "win32" else ("ctrl+z",),
}

_SPECIAL: Final[Mapping[str, str]] = {
    "escape": "escape",
    "esc": "escape",
    "enter": "enter",
    "return": "enter",
    "tab": "tab",
    "space": " ",
    "backspace": "backspace",
    "delete": "delete",
    "insert": "insert",
    "home": "home",
    "end": "end",
    "pageup": "pageup",
    "pagedown": "pagedown",
    "up": "up",
    "down": "down",
    "left": "left",
    "right": "right",
    **{f"f{n}": f"f{n}" for n in range(1, 13)},
}
#: Keys prompt_toolkit knows with Ctrl (and Shift) held.
_ARROWS: Final = frozenset({"up", "down", "left", "right", "home", "end", "pageup", "pagedown"})
_CONTROL_SYMBOLS: Final[Mapping[str, str]] = {
    "]": "c-]",
    "\\": "c-\\",
    "^": "c-^",
    "_": "c-_",
    "-": "c-_",
    "@": "c-@",
    "space": "c-@",
}


def key_label(sequence: KeySequence) -> str:
    """A key as a person names it: ``Ctrl+P``, ``Alt+P``, ``Shift+Tab``."""
    *prefix, key = sequence
    alt = "Alt+" if prefix == ["escape"] else ""
    if key == "s-tab":
        return f"{alt}Shift+Tab"
    if key.startswith("c-") and len(key) == 3:
        return f"{alt}Ctrl+{key[2].upper()}"
    return alt + (key.upper() if len(key) == 1 else key.capitalize())


def display_keys(names: tuple[str, ...]) -> str:
    """Keys in Pi's format shown as Pi's ``keyDisplayText`` shows them: each ``+`` part
    with its first letter capitalized (``alt`` named ``Option`` on macOS, as Pi names it),
    the keys joined by ``/``."""

    def part(text: str) -> str:
        shown = "option" if sys.platform == "darwin" and text.lower() == "alt" else text
        return shown[:1].upper() + shown[1:]

    return "/".join("+".join(part(piece) for piece in name.split("+")) for name in names)


def key_text(names: tuple[str, ...]) -> str:
    """Keys in Pi's format as Pi's hints name them (its ``keyText``): as written, ``alt``
    named ``option`` on macOS, the keys joined by ``/`` (``alt+up/alt+down``)."""

    def part(text: str) -> str:
        return "option" if sys.platform == "darwin" and text.lower() == "alt" else text

    return "/".join("+".join(part(piece) for piece in name.split("+")) for name in names)


class UnsupportedKey(ValueError):
    """A key in Pi's format that a terminal cannot report distinctly."""


def parse_key(text: str) -> KeySequence:
    """One key in Pi's format as the sequence prompt_toolkit binds.

    :raises UnsupportedKey: the terminal cannot tell this key apart (``shift+enter``,
        ``super+…``, ``ctrl+shift+letter``) or the name is unknown.
    """
    parts = [part for part in text.strip().split("+") if part] or [""]
    if text.strip().endswith("++"):
        parts.append("+")  # "ctrl++": the plus key itself
    *modifiers, name = parts
    mods = {modifier.lower() for modifier in modifiers}
    if not mods <= {"ctrl", "shift", "alt", "super"}:
        raise UnsupportedKey(f"unknown modifier in {text!r}")
    if "super" in mods:
        raise UnsupportedKey(f"{text!r}: the super key does not reach a terminal program")
    key = _plain_key(name, ctrl="ctrl" in mods, shift="shift" in mods, original=text)
    return ("escape", key) if "alt" in mods else (key,)


def _plain_key(name: str, *, ctrl: bool, shift: bool, original: str) -> str:
    lowered = name.lower()
    special = _SPECIAL.get(lowered)
    if special is not None:
        if special in _ARROWS:
            prefix = ("c-" if ctrl else "") + ("s-" if shift else "")
            return prefix + special
        if lowered == "tab" and shift and not ctrl:
            return "s-tab"
        if lowered == "space" and ctrl and not shift:
            return _CONTROL_SYMBOLS["space"]
        if ctrl or shift:
            raise UnsupportedKey(f"{original!r}: terminals send the same as {lowered!r}")
        return special
    if len(name) != 1:
        raise UnsupportedKey(f"unknown key {name!r} in {original!r}")
    if ctrl:
        if name.isalpha() and not shift:
            return f"c-{name.lower()}"
        symbol = _CONTROL_SYMBOLS.get(name)
        if symbol is not None and not shift:
            return symbol
        raise UnsupportedKey(f"{original!r}: terminals cannot report this combination")
    if shift and name.isalpha():
        return name.upper()
    if shift:
        raise UnsupportedKey(f"{original!r}: write the shifted symbol itself")
    return name


@dataclass(frozen=True)
class KeyMap:
    """The keys of each action, and what could not be read (one line each, to tell once).

    :param names: each action's bound keys as the defaults or ``keybindings.json`` name
        them (Pi's format), for showing them as Pi does (:meth:`display`).
    :param source: the file read (``None``: Pi's defaults only), read again by ``/reload``."""

    keys: Mapping[str, tuple[KeySequence, ...]]
    problems: tuple[str, ...] = field(default=())
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: Path | None = None

    def of(self, action: str) -> tuple[KeySequence, ...]:
        return self.keys.get(action, ())

    def display(self, action: str) -> str:
        """The keys of ``action`` as Pi's ``/hotkeys`` shows them: each part capitalized,
        keys joined by ``/`` (``Shift+Ctrl+P/Alt+P``); empty when none is bound."""
        return display_keys(self.names.get(action, ()))

    def text(self, action: str) -> str:
        """The keys of ``action`` as Pi's hints name them (``ctrl+s``, see
        :func:`key_text`); empty when none is bound."""
        return key_text(self.names.get(action, ()))

    @classmethod
    def load(cls, path: Path | None) -> KeyMap:
        """Pi's defaults with ``path``'s bindings over them (a missing file changes nothing;
        a file that cannot be read keeps the defaults and says why)."""
        user: dict[str, object] = {}
        problems: list[str] = []
        if path is not None and path.exists():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
                problems.append(f"{path}: cannot be read ({error}); using the default keys")
            else:
                if isinstance(loaded, dict):
                    user = loaded
                else:
                    problems.append(f"{path}: not a JSON object; using the default keys")
        keys: dict[str, tuple[KeySequence, ...]] = {}
        names_bound: dict[str, tuple[str, ...]] = {}
        for action, defaults in DEFAULTS.items():
            chosen = user.get(action, defaults)
            names = [chosen] if isinstance(chosen, str) else chosen
            if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
                problems.append(f"{path}: {action} takes a key or a list of keys")
                names = list(defaults)
            sequences: list[KeySequence] = []
            bound: list[str] = []
            for name in names:
                try:
                    sequences.append(parse_key(name))
                except UnsupportedKey as error:
                    if action in user:  # Pi's own defaults may name keys no terminal reports
                        problems.append(f"keybindings: {action}: {error}; skipped")
                else:
                    bound.append(name)
            keys[action] = tuple(dict.fromkeys(sequences))
            names_bound[action] = tuple(dict.fromkeys(bound))
        return cls(keys, tuple(problems), names_bound, path)


def keybindings_path() -> Path:
    """Pi's ``keybindings.json``, in the agent directory Pi uses."""
    from ctxmodes.session.paths import agent_dir

    return agent_dir() / "keybindings.json"
