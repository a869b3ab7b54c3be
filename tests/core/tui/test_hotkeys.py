"""``/hotkeys``: the terminal's keys in the rows of Pi's list, as the keymap binds them."""

from __future__ import annotations

import json
import re

from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from support.agents import make_agent
from support.pi_oracle import PI_PACKAGE, require_pi_modules
from support.terminal import ENTER, run_terminal

from ctxmodes.tui.hotkeys import EDITOR_KEYS, SECTIONS, hotkey_rows
from ctxmodes.tui.keymap import DEFAULTS, KeyMap, parse_key


#: Pi's rows for actions this terminal does not have.
def test_a_remapped_key_shows_as_remapped_and_the_list_ends_with_the_typed_prefixes(tmp_path):
    bindings = tmp_path / "keybindings.json"
    bindings.write_text(json.dumps({"app.tools.expand": "alt+o", "app.suspend": []}))
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("/hotkeys" + ENTER)
        await t.printed("Keyboard Shortcuts")

    text = run_terminal(agent, scenario, keymap=KeyMap.load(bindings)).text()
    assert re.search(r"^  Alt\+O +Toggle tool output expansion$", text, re.MULTILINE)
    assert "Suspend to background" not in text  # unbound: no row
    assert re.search(r"Ctrl\+P / Alt\+P +Cycle models", text)
    assert re.search(r"!! +Run bash command \(excluded from context\)", text)
    assert re.search(r"^  Ctrl\+X +Copy last assistant message$", text, re.MULTILINE)


def test_hotkeys_is_offered_by_the_slash_menu(tmp_path):
    agent = make_agent(tmp_path, [])
    offered: list[str] = []

    async def scenario(t):
        await t.type("/hotk")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        offered.extend(c.text.strip() for c in t.session.buffer.complete_state.completions)

    run_terminal(agent, scenario)
    assert offered == ["/hotkeys"]


def test_every_editor_key_listed_is_one_the_editor_binds(tmp_path):
    agent = make_agent(tmp_path, [])
    unbound: list[str] = []

    async def scenario(t):
        bindings = t.session.app.key_bindings
        for names in EDITOR_KEYS.values():
            for name in names:
                # prompt_toolkit's own names for the keys (Backspace is Ctrl+H to it).
                probe = KeyBindings()
                probe.add(*parse_key(name))(lambda event: None)
                keys = probe.bindings[0].keys
                # A jump takes the character to jump to as its last key.
                if not bindings.get_bindings_for_keys(keys) and not any(
                    binding.keys[-1] == Keys.Any
                    for binding in bindings.get_bindings_starting_with_keys(keys)
                ):
                    unbound.append(name)

    run_terminal(agent, scenario)
    assert unbound == []


def test_the_rows_are_pi_s_rows_in_pi_s_order():
    """Pi's list, read from its ``handleHotkeysCommand``: its rows' descriptions in order,
    and every action id one Pi knows."""
    dist = require_pi_modules() / PI_PACKAGE.parent / "dist"
    source = (dist / "modes" / "interactive" / "interactive-mode.js").read_text()
    body = source[source.index("    handleHotkeysCommand() {") :]
    body = body[: body.index("// Add extension-registered shortcuts")]
    pi_rows = [
        re.sub(r"\$\{.*?\}", "", description).strip()
        for description in re.findall(r"^\| \\`.*?\\` \| (.*?) \|$", body, re.MULTILINE)
    ]
    ours = [what for _, rows in SECTIONS for _, what in rows]
    assert ours == pi_rows
    actions = {action for _, rows in SECTIONS for ids, _ in rows for action in ids if "." in action}
    pi_ids = set(re.findall(r'Display\("([\w.]+)"\)', body))
    assert actions == pi_ids
    assert actions <= set(EDITOR_KEYS) | set(DEFAULTS)


def test_every_row_has_keys_with_the_default_keymap():
    rows = [row for _, section in hotkey_rows(KeyMap.load(None)) for row in section]
    assert len(rows) == sum(len(section) for _, section in SECTIONS)
    assert all(keys for keys, _ in rows)
