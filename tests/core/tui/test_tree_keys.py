"""The ``/tree`` navigator's keys as Pi's key bindings name them: the direct filters, cycling,
label times and copying, with Pi's default keys or those of ``keybindings.json``, each key
judged by the real Pi's tree selector pressed the same way over the same file."""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.agents import make_agent
from support.pi_oracle import run_pi_script
from support.terminal import ENTER, run_terminal

from ctxmodes import NavigationRequest
from ctxmodes.session import UserMessage
from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.navigator import TITLE, page_rows
from ctxmodes.tui.tree_text import label_time, tree_hint

SCRIPT = Path(__file__).parents[2] / "support" / "pi_tree_selector.mjs"
#: What a terminal sends for each key (Alt: Esc first).
KEYS = {
    "ctrl+a": "\x01",
    "ctrl+k": "\x0b",
    "ctrl+d": "\x04",
    "ctrl+g": "\x07",
    "ctrl+l": "\x0c",
    "ctrl+o": "\x0f",
    "ctrl+t": "\x14",
    "ctrl+u": "\x15",
    "ctrl+x": "\x18",
    "ctrl+y": "\x19",
    "alt+u": "\x1bu",
    "shift+t": "T",
    "backspace": "\x7f",
    "ctrl+c": "\x03",
    "escape": "\x1b",
    "t": "t",
    "w": "w",
}
#: The terminal's width, narrow enough for a long search to be cut.
WIDTH = 40
#: (Pi's keybindings.json, the keys pressed).
CASES: list[tuple[dict[str, Any], list[str]]] = [
    (
        {},
        [
            "ctrl+u", "ctrl+u", "ctrl+t", "ctrl+l", "ctrl+a", "ctrl+a", "ctrl+o", "ctrl+o",
            "ctrl+d", "shift+t", "ctrl+x", "shift+t",
        ],
    ),
    (
        {
            "app.tree.filter.userOnly": "alt+u",
            "app.tree.filter.cycleBackward": "ctrl+k",
            "app.message.copy": ["ctrl+y"],
            "app.tree.toggleLabelTimestamp": "ctrl+g",
        },
        ["ctrl+u", "alt+u", "ctrl+k", "ctrl+k", "ctrl+x", "ctrl+y", "ctrl+g"],
    ),
    # Pi's selection and search keys rebound; a key bound to two actions runs the one Pi's
    # tree selector checks first (↓ before the default filter, the user-only filter before
    # Backspace), and the keys given up do nothing.
    (
        {
            "tui.select.up": "ctrl+k",
            "tui.select.down": ["ctrl+y", "ctrl+d"],
            "tui.select.cancel": "ctrl+g",
            "tui.editor.deleteCharBackward": ["alt+u", "ctrl+u"],
        },
        [
            "ctrl+k", "ctrl+k", "ctrl+y", "ctrl+d", "t", "w", "backspace", "alt+u", "ctrl+u",
            "ctrl+u", "escape", "ctrl+c", "ctrl+g", "ctrl+k",
        ],
    ),
    # A search wider than the terminal is cut at its edge with "...", then Esc clears it.
    ({}, ["t", "w"] * 13 + ["backspace"] * 3 + ["escape"]),
]  # fmt: skip


def _message_ids(agent: Any) -> dict[str, str]:
    found = {}
    for line in agent.session_file.read_bytes().splitlines()[1:]:
        entry = orjson.loads(line)
        if entry["type"] == "message":
            content = entry["message"]["content"]
            found[content if isinstance(content, str) else content[0]["text"]] = entry["id"]
    return found


async def _labelled_fork(t: Any) -> dict[str, str]:
    """first → one, then second → two and third → three under it; "two" labelled."""
    for prompt in ("first", "second"):
        await t.type(prompt + ENTER)
        await t.idle()
    t.agent.navigate(NavigationRequest(_message_ids(t.agent)["one"]))
    await t.type("third" + ENTER)
    await t.printed("three")
    await t.idle()
    ids = _message_ids(t.agent)
    t.agent.session_manager.append_label(ids["two"], "plan b")
    return ids


def _copied(screen: str) -> list[str]:
    return [
        base64.b64decode(found).decode()
        for found in re.findall(r"\x1b]52;c;([^\x07]*)\x07", screen)
    ]


def _ours(t: Any, copies_before: int) -> dict[str, Any]:
    picker = t.session.picker
    if picker is None:
        return {"closed": True}
    rows = picker.rows()
    copies = _copied(t.screen.getvalue())
    drawn = "".join(text for _, text in picker.fragments(WIDTH)).splitlines()
    return {
        "shown": [row.key for row in rows if row.key is not None],
        "selected": rows[picker.selected].key if rows else None,
        "status": picker.title[len(TITLE) :],
        "copied": copies[-1] if len(copies) > copies_before else None,
        "query": picker.query,
        "closed": False,
        **_search_and_place(drawn),
    }


def _search_and_place(lines: list[str]) -> dict[str, Any]:
    """The line showing the search and the selected row's place, ``(3/12)``, in the lines
    drawn (Pi's or ours)."""
    stripped = [line.strip() for line in lines]
    places = [found[0] for line in stripped if (found := re.match(r"\(\d+/\d+\)", line))]
    return {
        "search_line": next(
            line.rstrip() for line in lines if line.lstrip().startswith("Type to search:")
        ),
        "place": places[0] if places else None,
    }


def _pi_step(pi: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    if pi["closed"]:
        return {"closed": True}
    return {**{name: pi[name] for name in names}, **_search_and_place(pi["lines"])}


@pytest.mark.pi
@pytest.mark.parametrize(("bindings", "keys"), CASES)
def test_each_key_shows_what_pi_s_tree_selector_does(
    tmp_path: Path, bindings: dict[str, Any], keys: list[str]
) -> None:
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    steps: list[dict[str, Any]] = []
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        ids = await _labelled_fork(t)
        seen["stamp"] = t.agent.session_manager.get_label_timestamp(ids["two"])
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        steps.append(_ours(t, 0))
        for key in keys:
            before = len(_copied(t.screen.getvalue()))
            await (t.escape() if key == "escape" else t.type(KEYS[key]))
            steps.append(_ours(t, before))
            seen["rows"] = [
                "".join(text for _, text in row.fragments) for row in t.session.picker.rows()
            ]

    run_terminal(agent, scenario, keymap=KeyMap.load(path))
    pis = run_pi_script(
        SCRIPT,
        json.dumps(
            {
                "sessionFile": str(agent.session_file),
                "bindings": bindings,
                "width": WIDTH,
                "keys": [KEYS[key] for key in keys],
            }
        ),
    )["steps"]
    assert len(pis) == len(steps)
    names = ("shown", "selected", "status", "copied", "query", "closed")
    for pressed, ours, pi in zip(["(open)", *keys], steps, pis, strict=True):
        assert ours == _pi_step(pi, names), pressed
    # A label's time: shown after it as Pi draws it, when Pi's last step shows it too.
    stamp = seen["stamp"]
    assert stamp is not None
    pi_row = next(line for line in pis[-1]["lines"] if "[plan b]" in line)
    our_row = next(row for row in seen["rows"] if "[plan b]" in row)
    timed = f"[plan b] {label_time(stamp)}"
    assert (timed in pi_row) == (timed in our_row) == (pis[-1]["status"].endswith("time]"))


def _pi_tree(tmp_path: Path, stamps: list[str]) -> dict[str, Any]:
    """The real Pi's navigator over a session of one message, nothing pressed."""
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    manager.append_message(UserMessage(content="hello", timestamp=1))
    path = manager.session_file
    manager.close()
    request = {"sessionFile": str(path), "bindings": {}, "width": 200, "keys": [], "stamps": stamps}
    answer: dict[str, Any] = run_pi_script(SCRIPT, json.dumps(request))
    return answer


@pytest.mark.pi
def test_a_label_s_time_is_written_as_pi_writes_it(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    stamps = [
        now.isoformat(),
        (now - timedelta(days=40)).isoformat(),
        (now - timedelta(days=800)).isoformat(),
        "2024-03-09T05:07:00.000Z",
    ]
    pis = _pi_tree(tmp_path, stamps)["stampTexts"]
    assert [label_time(stamp) for stamp in stamps] == pis


@pytest.mark.pi
def test_the_help_line_names_pi_s_items_with_the_keys_bound(tmp_path: Path) -> None:
    pi_lines = _pi_tree(tmp_path, [])["steps"][0]["lines"]
    pi_items = {item.strip() for line in pi_lines for item in line.split(" · ")}
    ours = tree_hint(KeyMap.load(None)).split(" · ")
    # The words of this picker are not Pi's items.
    own = {"type to search", "enter go", "escape/ctrl+c cancel"}
    # Pi's backward cycle key (Shift+Ctrl+O) reaches a terminal as Ctrl+O: not bound here.
    assert "cycle ctrl+o/shift+ctrl+o" in pi_items
    assert {item for item in ours if item not in own} == pi_items & set(ours) | {"cycle ctrl+o"}


#: What a terminal sends for the keys that move and page (xterm's legacy sequences).
MOVES = {
    "up": "\x1b[A",
    "down": "\x1b[B",
    "left": "\x1b[D",
    "right": "\x1b[C",
    "ctrl+left": "\x1b[1;5D",
    "ctrl+right": "\x1b[1;5C",
    "ctrl+b": "\x02",
    "ctrl+f": "\x06",
    "pageUp": "\x1b[5~",
    "pageDown": "\x1b[6~",
}
#: What a terminal sends for the keys that edit the search; any other key named is one
#: character, typed.
EDITS = {
    "backspace": "\x7f",
    "escape": "\x1b",
    "ctrl+c": "\x03",
    "space": " ",
    "enter": "\r",
    "paste": "\x1b[200~route\x1b[201~",
}
USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def _exchange(manager: SessionManager, text: str) -> tuple[str, str]:
    """A prompt and its reply at the leaf: their ids."""
    asked = manager.append_message({"role": "user", "content": text, "timestamp": 1})
    reply = {
        "role": "assistant",
        "content": [{"type": "text", "text": f"re: {text}"}],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-5",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 2,
    }
    return asked, manager.append_message(reply)


def _forks_three_deep(manager: SessionManager) -> None:
    """At three forks the active branch is written after a side branch, and a side branch
    comes after it at the first; two labels end the file, so Pi opens it at the active
    branch's end (the leaf is the last label, which the default filter hides)."""
    _, start = _exchange(manager, "start")
    side, _ = _exchange(manager, "plan a")
    manager.branch(start)
    _, plan_b = _exchange(manager, "plan b")
    older, _ = _exchange(manager, "b one")
    manager.branch(plan_b)
    _, b_two = _exchange(manager, "b two")
    _exchange(manager, "b two x")
    manager.branch(b_two)
    _, leaf = _exchange(manager, "b two y")
    manager.branch(start)
    _exchange(manager, "plan c")
    manager.branch(leaf)
    manager.append_label(side, "side")
    manager.append_label(older, "older")


def _long_fork(manager: SessionManager) -> None:
    """Two long branches from the first reply, the active one written second, under a
    chain: far more rows than a page of a 40-row terminal."""
    _, start = _exchange(manager, "start")
    for step in range(12):
        _exchange(manager, f"old step {step}")
    manager.branch(start)
    for step in range(12):
        _exchange(manager, f"new step {step}")


def _sent(key: str) -> str:
    return MOVES.get(key) or KEYS.get(key) or EDITS.get(key) or key


def _compare_with_pi(tmp_path: Path, grow: Any, bindings: dict[str, Any], keys: list[str]) -> None:
    """The session ``grow`` writes, opened in ``/tree`` here and in Pi's tree selector,
    then each key pressed in both: the entries shown, in order, the selection, the filter
    words, the search typed, the line showing it, the selected row's place and whether the
    tree closed must agree after every key."""
    agent = make_agent(tmp_path, [])
    grow(agent.session_manager)
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    steps: list[dict[str, Any]] = []

    async def scenario(t: Any) -> None:
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        steps.append(_ours(t, 0))
        for key in keys:
            typed = t.session.picker.query
            await t.type(_sent(key))
            if key == "escape":
                # Alt+arrows are the tree's: a lone Esc is taken once its timeout ran out,
                # to empty the search or close the tree.
                await t.until(
                    lambda typed=typed: t.session.picker is None or t.session.picker.query != typed,
                    "Esc to be taken",
                )
            steps.append(_ours(t, 0))

    run_terminal(agent, scenario, keymap=KeyMap.load(path))
    request = {
        "sessionFile": str(agent.session_file),
        "bindings": bindings,
        "width": 120,
        "keys": [_sent(key) for key in keys],
    }
    pis = run_pi_script(SCRIPT, json.dumps(request))["steps"]
    assert len(pis) == len(steps)
    names = ("shown", "selected", "status", "query", "closed")
    for pressed, ours, pi in zip(["(open)", *keys], steps, pis, strict=True):
        expected = _pi_step(pi, names)
        assert {name: ours[name] for name in expected} == expected, pressed


@pytest.mark.pi
def test_the_active_branch_is_listed_first_at_every_fork_as_pi_lists_it(
    tmp_path: Path,
) -> None:
    keys = [
        "up", "up", "up", "ctrl+left", "ctrl+left", "ctrl+right", "ctrl+right", "ctrl+right",
        "pageUp", "up", "down", "down", "down", "ctrl+left", "down", "ctrl+left", "ctrl+left",
        "ctrl+right", "ctrl+u", "ctrl+left", "up", "ctrl+l", "ctrl+o", "ctrl+x", "ctrl+a",
        "pageDown", "ctrl+left", "ctrl+d", "ctrl+t", "down", "ctrl+right",
    ]  # fmt: skip
    _compare_with_pi(tmp_path, _forks_three_deep, {}, keys)


PAGING: list[tuple[dict[str, Any], list[str]]] = [
    (
        {},
        [
            "pageDown", "pageDown", "pageDown", "right", "ctrl+f", "left", "left", "ctrl+b",
            "pageUp", "pageUp", "pageUp", "up", "right", "ctrl+u", "ctrl+f", "ctrl+f",
            "ctrl+b", "ctrl+left", "pageDown", "down",
        ],
    ),
    (
        {
            "tui.editor.cursorLeft": "ctrl+k",
            "tui.editor.cursorRight": ["ctrl+y"],
            "tui.select.pageDown": "ctrl+g",
        },
        ["ctrl+y", "right", "ctrl+f", "ctrl+y", "ctrl+y", "left", "ctrl+k", "pageDown",
         "ctrl+g", "pageUp", "ctrl+k", "ctrl+k", "ctrl+k"],
    ),
]  # fmt: skip


@pytest.mark.pi
@pytest.mark.parametrize(("bindings", "keys"), PAGING)
def test_paging_moves_as_pi_s_tree_selector_does(
    tmp_path: Path, bindings: dict[str, Any], keys: list[str]
) -> None:
    _compare_with_pi(tmp_path, _long_fork, bindings, keys)


def test_a_page_is_half_the_terminal_at_least_five_rows() -> None:
    assert [page_rows(rows) for rows in (0, 9, 10, 11, 12, 40, 41)] == [5, 5, 5, 5, 6, 20, 20]


def _two_roots(manager: SessionManager) -> None:
    """A second root (a new start from before the first entry) holding the active branch,
    itself forked with the active branch written last."""
    _exchange(manager, "first root")
    manager.reset_leaf()
    _, start = _exchange(manager, "second root")
    _exchange(manager, "aside")
    manager.branch(start)
    _exchange(manager, "onwards")


@pytest.mark.pi
def test_the_root_holding_the_active_branch_is_listed_first_as_in_pi(tmp_path: Path) -> None:
    keys = ["down", "ctrl+right", "ctrl+left", "ctrl+left", "up", "ctrl+left", "ctrl+right"]
    _compare_with_pi(tmp_path, _two_roots, {}, keys)


@pytest.mark.pi
@pytest.mark.parametrize(
    "bindings",
    [
        {"tui.editor.cursorLeft": "pageUp", "tui.editor.cursorRight": ["pageDown", "right"]},
        {"tui.editor.cursorLeft": [], "tui.editor.cursorRight": []},
        {"tui.select.up": "alt+k", "tui.select.down": ["pageDown", "down"]},
        {"tui.select.up": [], "tui.select.down": []},
    ],
)
def test_the_help_line_s_move_and_page_items_name_the_keys_bound(
    tmp_path: Path, bindings: dict[str, Any]
) -> None:
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    manager.append_message(UserMessage(content="hello", timestamp=1))
    path = manager.session_file
    manager.close()
    request = {"sessionFile": str(path), "bindings": bindings, "width": 200, "keys": []}
    pi_lines = run_pi_script(SCRIPT, json.dumps(request))["steps"][0]["lines"]
    pi_items = [item.strip() for line in pi_lines for item in line.split(" · ")]
    keybindings = tmp_path / "keybindings.json"
    keybindings.write_text(json.dumps(bindings))
    ours = tree_hint(KeyMap.load(keybindings)).split(" · ")
    first = next(at for at, item in enumerate(pi_items) if item.endswith("move"))
    assert ours[:2] == pi_items[first:][:2]


def _searchable(manager: SessionManager) -> None:
    """Words in different fields: a label, roles, the texts of prompts, replies, a tool's
    result and an extension's message, a tool call (whose name and path, drawn, are not
    searched), a model change; the active branch, written second, ends with a label."""
    _, start = _exchange(manager, "Start the Plan")
    manager.append_model_change("openai", "gpt-zeta")
    side, _ = _exchange(manager, "alpha route")
    manager.branch(start)
    manager.append_message({"role": "user", "content": "beta route with tools", "timestamp": 1})
    call = {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {"path": "notes.md"}}
    manager.append_message(
        {
            "role": "assistant",
            "content": [call],
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-5",
            "usage": USAGE,
            "stopReason": "toolUse",
            "timestamp": 2,
        }
    )
    result = [{"type": "text", "text": "gamma output"}]
    manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call-1",
            "toolName": "read",
            "content": result,
            "isError": False,
            "timestamp": 3,
        }
    )
    _exchange(manager, "Beta again")
    manager.append_custom_message_entry("note-kind", "delta remark", True)
    manager.append_label(side, "zeta plan")


SEARCHES = [
    # Words narrowing and widening, one shown in every field, typed in capitals too;
    # Backspace to empty and on empty; a non-breaking space between words; a filter with a
    # search; nothing matching (Enter then keeps the tree open); Esc with and without a
    # search.
    [
        "b", "e", "t", "a", "space", "r", "e", ":", "backspace", "backspace", "backspace",
        "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "up",
        "backspace", "B", "E", "space", "r", "o", "ctrl+a", "ctrl+a", "escape", "z", "e",
        "t", "a", "\u00a0", "p", "ctrl+a", "down", "ctrl+d", "x", "y", "enter", "backspace",
        "backspace", "escape", "escape",
    ],
    # Folds, then typing; a tool's result by its role and text, its call by nothing drawn;
    # an extension's message by its type; Ctrl+C as Esc; a paste, which the search drops.
    [
        "up", "up", "ctrl+left", "ctrl+left", "ctrl+left", "t", "o", "o", "l", "r", "space",
        "g", "a", "m", "ctrl+c", "ctrl+left", "r", "e", "a", "d", "ctrl+c", "paste", "n", "o", "t",
        "e", "-", "k", "space", "d", "e", "l", "ctrl+left", "escape", "up", "ctrl+c",
    ],
]  # fmt: skip


@pytest.mark.pi
@pytest.mark.parametrize("keys", SEARCHES)
def test_typing_searches_as_pi_s_tree_selector_does(tmp_path: Path, keys: list[str]) -> None:
    _compare_with_pi(tmp_path, _searchable, {}, keys)
