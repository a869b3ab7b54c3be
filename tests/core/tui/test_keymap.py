"""Pi's ``keybindings.json`` read for the terminal's actions: Pi's key format, the user's
keys over Pi's defaults, and a clear word about keys no terminal can report."""

from __future__ import annotations

import json

import pytest

from ctxmodes.tui.keymap import DEFAULTS, KeyMap, UnsupportedKey, key_label, parse_key
from ctxmodes.tui.line_field import EDITS


@pytest.mark.parametrize(
    ("pi_key", "sequence"),
    [
        ("ctrl+g", ("c-g",)),
        ("alt+enter", ("escape", "enter")),
        ("alt+up", ("escape", "up")),
        ("shift+tab", ("s-tab",)),
        ("ctrl+left", ("c-left",)),
        ("ctrl+shift+left", ("c-s-left",)),
        ("escape", ("escape",)),
        ("esc", ("escape",)),
        ("pageUp", ("pageup",)),
        ("f5", ("f5",)),
        ("ctrl+]", ("c-]",)),
        ("alt+b", ("escape", "b")),
        ("shift+l", ("L",)),
        ("ctrl+space", ("c-@",)),
    ],
)
def test_pi_key_names_become_the_keys_a_terminal_sends(pi_key, sequence):
    assert parse_key(pi_key) == sequence


@pytest.mark.parametrize("pi_key", ["shift+enter", "super+k", "ctrl+shift+p", "hyper+x", "meta"])
def test_keys_a_terminal_cannot_tell_apart_are_refused(pi_key):
    with pytest.raises(UnsupportedKey):
        parse_key(pi_key)


def test_without_a_file_every_action_has_pi_s_default_keys(tmp_path):
    keymap = KeyMap.load(tmp_path / "missing.json")
    assert keymap.problems == ()
    assert keymap.of("app.thinking.toggle") == (("c-t",),)
    # Pi's shift+enter is Enter to a terminal: only Ctrl+J remains, and nobody is told.
    assert keymap.of("tui.input.newLine") == (("c-j",),)
    # Pi's Shift+Ctrl+P is Ctrl+P to a terminal: Alt+P, Pi's key where they are one, remains.
    assert keymap.of("app.model.cycleBackward") == (("escape", "p"),)
    assert keymap.of("app.thinking.cycle") == (("s-tab",),)
    # The session pickers' keys; Pi's Ctrl+Backspace is Backspace to a terminal: unbound.
    assert keymap.of("app.session.rename") == (("c-r",),)
    assert keymap.of("app.session.delete") == (("c-d",),)
    assert keymap.of("app.session.deleteNoninvasive") == ()
    assert set(keymap.keys) == set(DEFAULTS)


@pytest.mark.parametrize(
    ("pi_key", "label"),
    [("ctrl+p", "Ctrl+P"), ("alt+p", "Alt+P"), ("shift+tab", "Shift+Tab"), ("f5", "F5")],
)
def test_a_key_is_named_as_people_name_it(pi_key, label):
    assert key_label(parse_key(pi_key)) == label


def test_the_user_s_keys_replace_the_defaults_of_their_actions_only(tmp_path):
    path = tmp_path / "keybindings.json"
    path.write_text(
        json.dumps(
            {
                "app.thinking.toggle": "ctrl+y",
                "tui.input.newLine": ["shift+enter", "alt+j"],
                "tui.editor.cursorUp": "ctrl+p",  # Pi's, not the terminal's: left to Pi
                "app.session.tree": ["ctrl+x"],
            }
        )
    )
    keymap = KeyMap.load(path)
    assert keymap.of("app.thinking.toggle") == (("c-y",),)
    assert keymap.of("tui.input.newLine") == (("escape", "j"),)
    assert keymap.of("app.session.tree") == (("c-x",),)
    assert keymap.of("app.tools.expand") == (("c-o",),)
    assert keymap.problems == (
        "keybindings: tui.input.newLine: 'shift+enter': terminals send the same as 'enter'; "
        "skipped",
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "cannot be read"),
        ("[1, 2]", "not a JSON object"),
        ('{"app.exit": 3}', "app.exit takes a key or a list of keys"),
    ],
)
def test_a_broken_file_keeps_the_defaults_and_says_why(tmp_path, content, problem):
    path = tmp_path / "keybindings.json"
    path.write_text(content)
    keymap = KeyMap.load(path)
    assert keymap.of("app.exit") == (("c-d",),)
    assert len(keymap.problems) == 1
    assert problem in keymap.problems[0]


#: Where ctxmodes' default keys differ from Pi's on purpose: the key Pi binds instead where
#: a terminal cannot tell its own apart (see ``keymap.DEFAULTS``).
OWN_DEFAULTS = {"app.model.cycleBackward": ("shift+ctrl+p", "alt+p")}


@pytest.mark.pi
def test_the_action_ids_and_default_keys_are_pi_s():
    from support.pi_oracle import REPO, run_pi_script

    pis = run_pi_script(REPO / "tests" / "support" / "pi_keybindings.mjs")
    ours = {action: keys for action, keys in DEFAULTS.items() if action not in OWN_DEFAULTS}
    assert ours == {action: tuple(pis[action]) for action in ours}
    assert tuple(pis["app.model.cycleBackward"]) == OWN_DEFAULTS["app.model.cycleBackward"][:1]
    # Every action of Pi's /tree navigator, session pickers and message copy is ours too.
    wanted = {
        action
        for action in pis
        if action.startswith(("app.tree.", "app.session.", "app.models.", "app.message."))
    }
    # And every key of Pi's selectors and of their search fields, all that Pi's Input takes.
    wanted |= {action for action in pis if action.startswith("tui.select.")}
    wanted |= {"tui.input.tab", "tui.input.submit", *EDITS}
    assert wanted <= set(DEFAULTS)


def test_the_tree_and_session_picker_keys_a_terminal_reports(tmp_path):
    keymap = KeyMap.load(tmp_path / "missing.json")
    assert keymap.of("tui.select.cancel") == (("escape",), ("c-c",))
    assert keymap.of("tui.select.confirm") == (("enter",),)
    assert keymap.of("tui.editor.deleteCharBackward") == (("backspace",),)
    assert keymap.of("tui.editor.cursorLineStart") == (("home",), ("c-home",), ("c-a",))
    assert keymap.of("app.tree.foldOrUp") == (("c-left",), ("escape", "left"))
    assert keymap.of("app.tree.unfoldOrDown") == (("c-right",), ("escape", "right"))
    assert keymap.of("app.tree.editLabel") == (("L",),)
    assert keymap.of("app.tree.toggleLabelTimestamp") == (("T",),)
    assert keymap.of("app.tree.filter.labeledOnly") == (("c-l",),)
    assert keymap.of("app.session.toggleSort") == (("c-s",),)
    assert keymap.of("app.message.copy") == (("c-x",),)
    # Pi's Shift+Ctrl+O is Ctrl+O to a terminal, which cycles forward in Pi too.
    assert keymap.of("app.tree.filter.cycleBackward") == ()
