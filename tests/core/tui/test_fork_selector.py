"""``/fork``: Pi's user message selector in the terminal. Every user message of the file, all
branches, in file order, the last one selected; Enter forks before the chosen one, its text
in the editor; a plugin may keep the session; ``No messages to fork from`` without any;
the ``app.session.fork`` key and Esc Esc (``terminal.double_escape_action``) open it. The
real Pi judges the rows and keys (``pi_fork_selector.mjs`` drives Pi's own component over
the same file) and the fork (Pi's RPC ``fork`` of the same message opens as ours does)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_oracle import require_pi, run_pi_script
from support.rpc_client import pi_rpc
from support.terminal import CTRL_C, DOWN, ENTER, ESC, UP, run_terminal
from support.wire_server import WireServer

from ctxmodes import ForkRequest, NavigationRequest, SessionChangeDecision, hookimpl
from ctxmodes.config import TerminalSettings
from ctxmodes.sdk import Agent
from ctxmodes.tui.fork_selector import FORKED, NO_MESSAGES, SUBTITLE, TITLE
from ctxmodes.tui.keymap import KeyMap

SCRIPT = Path(__file__).parents[2] / "support" / "pi_fork_selector.mjs"
PAGE_UP = "\x1b[5~"
BACKSPACE = "\x7f"
#: The harness's terminal is this wide.
WIDTH = 100
#: The prompts of the main line, then of a branch left behind, then of the line after it.
LONG = "a long request " * 10
WIDE = "漢字と絵文字🙂 " * 12
PROMPTS = ["first", "second\nover two lines", "   padded   ", LONG, WIDE, "sixth"]
BRANCH = ["left behind"]
AFTER = ["after the branch", *(f"more {n}" for n in range(6))]


class Recorder:
    """Hears every fork; keeps the session when ``keep``."""

    def __init__(self, *, keep: bool) -> None:
        self.keep = keep
        self.asked: list[ForkRequest] = []

    @hookimpl
    def ctx_session_before_fork(
        self, session: Any, request: ForkRequest
    ) -> SessionChangeDecision | None:
        self.asked.append(request)
        return SessionChangeDecision(cancel=True) if self.keep else None


def _message_ids(agent: Agent) -> dict[str, str]:
    """The user messages' entry ids by their text."""
    found = {}
    for line in agent.session_file.read_bytes().splitlines()[1:]:
        entry = json.loads(line)
        message = entry.get("message", {})
        if entry["type"] == "message" and message["role"] == "user":
            content = message["content"]
            found[content if isinstance(content, str) else content[0]["text"]] = entry["id"]
    return found


def _agent(tmp_path: Path, prompts: list[str], plugin: Recorder | None = None) -> Agent:
    """An agent whose session holds ``prompts`` answered, then a branch: back to the second
    reply, ``BRANCH`` answered there, back again, and ``AFTER`` answered."""
    every = [*prompts, *BRANCH, *AFTER]
    replies = [{"text": f"reply {number}"} for number in range(len(every) + 2)]
    agent = make_agent(tmp_path, replies, plugins=[plugin] if plugin else [])
    for prompt in prompts:
        agent.prompt(prompt)
    if len(prompts) >= 2:
        back = agent.session_manager.get_leaf_id()
        for prompt in BRANCH:
            agent.prompt(prompt)
        agent.navigate(NavigationRequest(back))
        for prompt in AFTER:
            agent.prompt(prompt)
    return agent


def _shown(t: Any) -> dict[str, Any]:
    """What our selector draws: its title lines, the list, the hint line."""
    picker = t.session.picker
    if picker is None:
        return {"closed": True}
    lines = [line.rstrip() for line in "".join(s for _, s in picker.fragments(WIDTH)).split("\n")]
    titled = picker.title.count("\n") + 1
    return {"title": lines[:titled], "list": lines[titled:-1], "hint": lines[-1]}


def _pi_shown(step: dict[str, Any]) -> dict[str, Any]:
    """What Pi's selector draws between its borders, and its title lines."""
    if step["chosen"] is not None or step["cancelled"]:
        return {"closed": True}
    lines: list[str] = step["lines"]
    first, second = (at for at, line in enumerate(lines) if line and set(line) == {"─"})
    # A blank line after the first border and before the second.
    return {
        "title": [line.strip() for line in lines[:first] if line],
        "list": lines[first + 2 : second - 1],
    }


def _pi(
    agent: Agent, tmp_path: Path, keys: list[str], bindings: dict[str, Any] | None = None
) -> dict[str, Any]:
    copy = tmp_path / "pi-copy.jsonl"  # Pi may rewrite a file it opens
    shutil.copy(agent.session_file, copy)
    (tmp_path / "pi-agent").mkdir(exist_ok=True)
    request = {
        "sessionFile": str(copy),
        "cwd": str(tmp_path),
        "agentDir": str(tmp_path / "pi-agent"),
        "width": WIDTH,
        "keys": keys,
        "bindings": bindings or {},
    }
    answer: dict[str, Any] = run_pi_script(SCRIPT, json.dumps(request))
    return answer


CTRL_K, CTRL_Y, CTRL_G, CTRL_O = "\x0b", "\x19", "\x07", "\x0f"
#: Pi's selection keys moved: ↑ and ↓ to Ctrl+K and Ctrl+Y (Ctrl+Y, bound to ↓ and to
#: cancelling, moves down as Pi's selector checks ↓ first), Enter to Ctrl+O, cancelling to
#: Ctrl+G; the keys given up do nothing.
REBOUND = {
    "tui.select.up": "ctrl+k",
    "tui.select.down": "ctrl+y",
    "tui.select.confirm": "ctrl+o",
    "tui.select.cancel": ["ctrl+g", "ctrl+y"],
}
#: The keybindings.json, the keys pressed in the open selector, the last one closing it,
#: and the keys that close it (none named: Esc, Ctrl+C and Enter).
KEY_CASES: list[tuple[dict[str, Any], list[str], tuple[str, ...]]] = [
    ({}, [UP, UP, DOWN, DOWN, DOWN, PAGE_UP, "j", "k", "x", BACKSPACE, UP, UP, UP, ENTER], ()),
    ({}, [DOWN, DOWN, UP, ESC], ()),
    ({}, [UP, CTRL_C], ()),
    ({}, [*[UP] * 14, ENTER], ()),
    (REBOUND, [CTRL_K, CTRL_K, UP, CTRL_Y, DOWN, ESC, CTRL_C, ENTER, CTRL_K, CTRL_O], (CTRL_O,)),
    (REBOUND, [CTRL_K, ESC, CTRL_G], (CTRL_G,)),
]


@pytest.mark.pi
@pytest.mark.parametrize(("bindings", "keys", "closing"), KEY_CASES)
def test_each_key_shows_and_chooses_what_pi_s_selector_does(
    bindings: dict[str, Any], keys: list[str], closing: tuple[str, ...], tmp_path: Path
) -> None:
    recorder = Recorder(keep=True)
    agent = _agent(tmp_path, PROMPTS, recorder)
    ours: list[dict[str, Any]] = []
    closers = closing or (ESC, CTRL_C, ENTER)
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))

    async def scenario(t: Any) -> None:
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        ours.append(_shown(t))
        for key in keys:
            # A lone Esc is waited out, or the key after it would make an Alt key of it.
            await (t.escape() if key == ESC else t.type(key))
            if key in closers:
                await t.until(lambda: t.session.picker is None, "the selector to close")
            ours.append(_shown(t))
        if keys[-1] in (ENTER, CTRL_O):
            await t.until(lambda: recorder.asked, "the fork")
            await t.idle()

    run_terminal(agent, scenario, keymap=KeyMap.load(path))
    pi = _pi(agent, tmp_path, keys, bindings)
    ids = _message_ids(agent)
    assert [message["entryId"] for message in pi["messages"]] == [
        ids[text] for text in [*PROMPTS, *BRANCH, *AFTER]
    ]
    for at, (our, step) in enumerate(zip(ours, pi["steps"], strict=True)):
        expected = _pi_shown(step)
        if "title" in expected:
            assert our["title"] == expected["title"] == [TITLE, SUBTITLE]
            our = {key: our[key] for key in expected}
        assert our == expected, f"after {['(open)', *keys][at]!r} (step {at})"
    last = pi["steps"][-1]
    chosen = [ForkRequest(last["chosen"], "before")] if last["chosen"] is not None else []
    assert recorder.asked == chosen


def test_enter_forks_before_the_message_with_its_text_in_the_editor(tmp_path: Path) -> None:
    agent = _agent(tmp_path, PROMPTS)
    ids = _message_ids(agent)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        seen["before"] = agent.session_file
        await t.type("draft" + "\x15")  # typed, then Ctrl+U: an empty editor
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        seen["first row"] = t.session.picker.rows()[t.session.picker.selected].key
        everything = len(PROMPTS) + len(BRANCH) + len(AFTER)
        await t.type(UP * (everything - 2) + ENTER)
        await t.printed(FORKED)
        await t.idle()
        seen["editor"] = t.editor
        seen["after"] = agent.session_file

    run_terminal(agent, scenario)
    # It opened on the last message; the second of the file is the one chosen.
    assert seen["first row"] == ids[AFTER[-1]]
    assert seen["editor"] == "second\nover two lines"
    assert seen["after"] != seen["before"]
    header, *entries = [json.loads(line) for line in seen["after"].read_text().splitlines()]
    assert header["parentSession"] == str(seen["before"])
    users = [e["message"]["content"] for e in entries if e.get("message", {}).get("role") == "user"]
    assert [u if isinstance(u, str) else u[0]["text"] for u in users] == ["first"]


def test_a_plugin_keeps_the_session_and_the_editor(tmp_path: Path) -> None:
    keeper = Recorder(keep=True)
    agent = _agent(tmp_path, ["only"], keeper)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        seen["file"], seen["bytes"] = agent.session_file, agent.session_file.read_bytes()
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        await t.type(ENTER)
        await t.until(lambda: keeper.asked, "the plugin to be asked")
        await t.idle()
        seen["editor"] = t.editor

    text = run_terminal(agent, scenario).text()
    assert keeper.asked == [ForkRequest(_message_ids(agent)["only"], "before")]
    assert agent.session_file == seen["file"]
    assert seen["file"].read_bytes() == seen["bytes"]
    assert list(seen["file"].parent.iterdir()) == [seen["file"]]
    assert seen["editor"] == ""
    assert FORKED not in text


def test_without_a_user_message_there_is_nothing_to_fork(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [])
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/fork" + ENTER)
        await t.printed(NO_MESSAGES)
        seen["picker"] = t.session.picker

    run_terminal(agent, scenario)
    assert seen["picker"] is None


def test_fork_with_an_entry_stays_the_host_s_command(tmp_path: Path) -> None:
    agent = _agent(tmp_path, ["one", "two"])
    target = _message_ids(agent)["two"]
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        before = agent.session_file
        await t.type(f"/fork {target}" + ENTER)
        await t.printed("Forked into")
        await t.idle()
        seen["moved"] = agent.session_file != before
        seen["editor"] = t.editor
        seen["picker"] = t.session.picker

    run_terminal(agent, scenario)
    assert seen == {"moved": True, "editor": "two", "picker": None}


def test_the_fork_key_opens_the_selector(tmp_path: Path) -> None:
    path = tmp_path / "keybindings.json"
    # Ctrl+X copies first, as in Pi's editor, unless copying is given no key.
    path.write_text(json.dumps({"app.session.fork": "ctrl+x", "app.message.copy": []}))
    agent = _agent(tmp_path, ["one"])
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("kept")
        await t.type("\x18")
        await t.until(lambda: t.session.picker is not None, "the selector")
        seen["title"] = t.session.picker.title
        await t.type(ENTER)
        await t.printed(FORKED)
        await t.idle()
        seen["editor"] = t.editor

    run_terminal(agent, scenario, keymap=KeyMap.load(path))
    # As in Pi, the chosen message replaces what the editor held.
    assert seen == {"title": f"{TITLE}\n{SUBTITLE}", "editor": "one"}


async def _escape_twice(t: Any) -> None:
    await t.type(ESC)
    t.clock.now += 0.2
    await t.type(ESC)


@pytest.mark.parametrize(
    ("action", "opened"),
    [("tree", "Session tree"), ("fork", TITLE), ("none", None)],
)
def test_esc_esc_on_an_empty_editor_opens_what_the_setting_names(
    action: str, opened: str | None, tmp_path: Path
) -> None:
    agent = _agent(tmp_path, ["one"])
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("typed")
        await _escape_twice(t)
        seen["with text"] = t.session.picker
        await t.type("\x15")
        t.clock.now += 5
        await _escape_twice(t)
        if opened is not None:
            await t.until(lambda: t.session.picker is not None, "a picker")
        seen["opened"] = t.session.picker.title if t.session.picker else None
        if t.session.picker is not None:
            await t.type(ESC)
            await t.until(lambda: t.session.picker is None, "the picker to close")
        t.clock.now += 5
        await t.type(ESC)
        t.clock.now += 0.6  # too late for a double press
        await t.type(ESC)
        seen["slow"] = t.session.picker

    settings = TerminalSettings(double_escape_action=action)  # type: ignore[arg-type]
    run_terminal(agent, scenario, settings=settings)
    assert seen["with text"] is None
    assert seen["slow"] is None
    if opened is None:
        assert seen["opened"] is None
    else:
        assert seen["opened"].startswith(opened)


@pytest.mark.pi
def test_the_fork_opens_in_the_real_pi_as_pi_s_own_fork_of_that_message(tmp_path: Path) -> None:
    pi = require_pi()
    agent = _agent(tmp_path, PROMPTS)
    ids = _message_ids(agent)
    target = ids[LONG]
    source = tmp_path / "source.jsonl"
    shutil.copy(agent.session_file, source)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        rows = [row.key for row in t.session.picker.rows()]
        t.session.picker.selected = rows.index(target)
        await t.type(ENTER)
        await t.printed(FORKED)
        await t.idle()
        seen["editor"], seen["file"] = t.editor, agent.session_file

    run_terminal(agent, scenario)
    where = tmp_path / "pi"
    where.mkdir()
    copy = where / "session.jsonl"
    shutil.copy(source, copy)
    with WireServer([]) as server, pi_rpc(where, server.base_url, ["--session", str(copy)]) as rpc:
        answer = rpc.request({"type": "fork", "entryId": target})
        assert rpc.close() == 0, rpc.stderr()
    [pis] = set(where.glob("*.jsonl")) - {copy}
    assert answer["data"] == {"text": seen["editor"], "cancelled": False}
    ours_opened, pis_opened = pi.open_many(
        [{"file": str(seen["file"]), "at": [None]}, {"file": str(pis), "at": [None]}]
    )
    for key in ("entryCount", "leafId", "branchIds", "contextEntryIds", "context", "llm"):
        assert ours_opened[key] == pis_opened[key], key
    assert ours_opened["context"]


def test_the_rows_are_cut_again_when_the_terminal_narrows(tmp_path: Path) -> None:
    agent = _agent(tmp_path, [LONG])
    seen: dict[str, list[str]] = {}

    async def scenario(t: Any) -> None:
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        for width in (WIDTH, 40):
            text = "".join(s for _, s in t.session.picker.fragments(width))
            seen[str(width)] = [line for line in text.split("\n") if "a long request" in line]
        await t.type(ESC)

    run_terminal(agent, scenario)
    wide, narrow = seen[str(WIDTH)], seen["40"]
    assert wide == [f"\u203a {LONG.strip()[: WIDTH - 5]}..."]
    assert narrow == [f"\u203a {LONG.strip()[:35]}..."]
