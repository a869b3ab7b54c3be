"""``/fork``, ``/clone`` and ``/tree`` while the agent works, as in Pi: each opens at once;
a fork or clone chosen asks the plugins first, writes the new file from what the current one
holds, then aborts the run, whose aborted reply is appended to the file left behind; a
navigation puts the queued messages back in the editor, aborts the run and moves after it
settled. The session file is only ever appended to. The real Pi's RPC ``fork`` and
``clone`` during a reply judge the files (:mod:`tests.core.rpc.test_fork_during_a_reply`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.agents import ForkKeeper, make_agent
from support.terminal import ENTER, ESC, GatedStream, Terminal, run_terminal

from ctxmodes.config import TerminalSettings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import Agent
from ctxmodes.tui.fork_selector import FORKED, TITLE
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.session_copies import CLONED

UP = "\x1b[A"
#: The second reply is held after this many stream events: half of it has shown.
HELD_AFTER = 3


def _working_agent(tmp_path: Path, *plugins: object) -> tuple[Agent, GatedStream]:
    """An agent whose first reply comes at once and whose second is held half streamed
    (only turns are held; the scripted model answers a branch summary at once)."""
    script = {
        "responses": [
            {"text": "first reply"},
            {"text": SECOND_REPLY},
        ]
    }
    scripted = ScriptedProvider(Script.model_validate(script), chunk_chars=4)
    # The first reply is not held: no stream is that long.
    provider = GatedStream(scripted, hold_after=1_000_000, purpose="turn")
    agent = make_agent(tmp_path, [], provider=provider, plugins=plugins)
    agent.prompt("one")
    provider.hold_after = HELD_AFTER
    return agent, provider


SECOND_REPLY = "a second reply that takes its time to arrive"


def _is_aborted_reply(entry: dict[str, Any]) -> bool:
    """An assistant message cut short by the abort: part of the second reply, not all."""
    message = entry.get("message") or {}
    text = "".join(block.get("text", "") for block in message.get("content", []))
    return (
        message.get("role") == "assistant"
        and message.get("stopReason") == "aborted"
        and SECOND_REPLY.startswith(text)
        and text != SECOND_REPLY
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _shapes(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each entry's type, and for a message its role, first text and stop reason."""
    shapes = []
    for entry in entries:
        message = entry.get("message") or {}
        content = message.get("content") or [{}]
        first = content if isinstance(content, str) else content[0].get("text")
        shapes.append((entry["type"], message.get("role"), first, message.get("stopReason")))
    return shapes


async def _second_prompt_held(t: Terminal, provider: GatedStream) -> None:
    await t.type("two" + ENTER)
    await t.until(provider.held.is_set, "the reply to be held half streamed")


async def _abort_then_release(t: Terminal, provider: GatedStream) -> None:
    """Wait until the run is told to stop, then let the held stream go on (it stops at its
    next event)."""
    await t.until(lambda: provider.signal is not None and provider.signal.aborted, "the abort")
    provider.release.set()


def test_fork_chosen_during_a_reply_writes_the_fork_then_the_aborted_reply(tmp_path):
    agent, provider = _working_agent(tmp_path)
    original = agent.session_file
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await t.type("steer me" + ENTER)
        await t.until(lambda: t.session.live.queued[0] == ("steer me",), "the queued message")
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        seen["title"] = t.session.picker.title.split("\n")[0]
        seen["busy"] = agent.is_busy()
        seen["before"] = original.read_bytes()
        await t.type(ENTER)  # the last message, the one being answered
        await _abort_then_release(t, provider)
        await t.printed(FORKED)
        await t.idle()
        seen["editor"] = t.editor
        seen["queued"] = t.session.live.queued

    text = run_terminal(agent, scenario).text()
    assert seen["title"] == TITLE
    assert seen["busy"] is True
    # As in Pi, the chosen message replaces the editor's text and the queue went with the run.
    assert seen["editor"] == "two"
    assert seen["queued"] == ((), ())
    assert "steer me" not in [shape[2] for shape in _shapes(_lines(original))]
    forked = agent.session_file
    assert forked != original
    header, *copied = _lines(forked)
    assert header["parentSession"] == str(original)
    # The fork holds what preceded the message: the first exchange, not the held reply.
    kept = _lines(original)[1:]
    cut = next(at for at, entry in enumerate(kept) if _shapes([entry])[0][2] == "two")
    assert copied == kept[:cut]
    # The file left behind was appended to: the prompt, then the aborted reply, last.
    after = original.read_bytes()
    assert after.startswith(seen["before"])
    assert _shapes(kept[cut:])[:-1] == [("message", "user", "two", None)]
    assert _is_aborted_reply(kept[-1])
    assert "Operation aborted" in text
    assert text.index("Operation aborted") < text.index(FORKED)


def test_clone_during_a_reply_copies_up_to_the_prompt_being_answered(tmp_path):
    agent, provider = _working_agent(tmp_path)
    original = agent.session_file
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        seen["before"] = original.read_bytes()
        await t.type("/clone" + ENTER)
        await _abort_then_release(t, provider)
        await t.printed(CLONED)
        await t.idle()

    run_terminal(agent, scenario)
    clone = agent.session_file
    assert clone != original
    header, *copied = _lines(clone)
    assert header["parentSession"] == str(original)
    kept = _lines(original)[1:]
    # The clone ends at the leaf /clone found, the prompt; the aborted reply came after.
    assert copied == kept[:-1]
    assert _shapes(copied[-1:]) == [("message", "user", "two", None)]
    assert _is_aborted_reply(kept[-1])
    assert original.read_bytes().startswith(seen["before"])


def test_a_plugin_keeping_the_session_leaves_the_run_going(tmp_path):
    keeper = ForkKeeper()
    agent, provider = _working_agent(tmp_path, keeper)
    original = agent.session_file
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await t.type("/fork" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the selector")
        await t.type(ENTER)
        await t.until(lambda: keeper.asked, "the plugin to be asked")
        seen["aborted"] = provider.signal is not None and provider.signal.aborted
        seen["editor"] = t.editor
        provider.release.set()
        await t.printed(SECOND_REPLY)
        await t.idle()

    text = run_terminal(agent, scenario).text()
    assert seen == {"aborted": False, "editor": ""}
    assert agent.session_file == original
    assert list(original.parent.iterdir()) == [original]
    assert _shapes(_lines(original)[-2:]) == [
        ("message", "user", "two", None),
        ("message", "assistant", SECOND_REPLY, "stop"),
    ]
    assert FORKED not in text


def test_fork_with_an_entry_still_waits_for_an_idle_agent(tmp_path):
    agent, provider = _working_agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await t.type("/fork somewhere" + ENTER)
        await t.printed("/fork waits until the agent is idle")
        seen["editor"] = t.editor
        provider.release.set()
        await t.idle()

    run_terminal(agent, scenario)
    assert seen["editor"] == "/fork somewhere"


async def _pick_first_question(t: Terminal) -> None:
    await t.type("/tree" + ENTER)
    await t.until(lambda: t.session.picker is not None, "the tree")
    picker = t.session.picker
    assert picker is not None
    first = next(entry["id"] for entry in _lines(t.agent.session_file)[1:] if _is_user(entry))
    while picker.rows()[picker.selected].key != first:
        await t.type(UP)
    await t.type(ENTER)


def _is_user(entry: dict[str, Any]) -> bool:
    return entry["type"] == "message" and entry["message"]["role"] == "user"


def test_tree_during_a_reply_puts_the_queue_back_aborts_then_moves(tmp_path):
    agent, provider = _working_agent(tmp_path)
    original = agent.session_file
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await t.type("steer me" + ENTER)
        await t.until(lambda: t.session.live.queued[0] == ("steer me",), "the queued message")
        seen["before"] = original.read_bytes()
        await _pick_first_question(t)
        await t.until(lambda: "Summarize" in (t.session.picker.title or ""), "the question")
        seen["busy while asked"] = agent.is_busy()
        await t.type(ENTER)  # no summary
        await _abort_then_release(t, provider)
        await t.printed("Navigated to selected point")
        await t.idle()
        seen["editor"] = t.editor
        seen["leaf"] = agent.session_manager.get_leaf_id()

    run_terminal(agent, scenario)
    assert seen["busy while asked"] is True
    # As in Pi, the queued message is back in the editor, so the question's text is not.
    assert seen["editor"] == "steer me"
    entries = _lines(original)[1:]
    assert original.read_bytes().startswith(seen["before"])
    assert _shapes(entries[-2:-1]) == [("message", "user", "two", None)]
    assert _is_aborted_reply(entries[-1])
    first = next(entry for entry in entries if _is_user(entry))
    assert seen["leaf"] == first["parentId"]


def test_tree_with_a_summary_during_a_reply_writes_it_after_the_aborted_reply(tmp_path):
    agent, provider = _working_agent(tmp_path)
    original = agent.session_file

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await _pick_first_question(t)
        await t.until(lambda: "Summarize" in (t.session.picker.title or ""), "the question")
        await t.type("\x1b[B" + ENTER)  # summarize
        await _abort_then_release(t, provider)
        await t.printed("Navigated to selected point")
        await t.idle()

    run_terminal(agent, scenario)
    entries = _lines(original)[1:]
    assert [shape[:2] for shape in _shapes(entries[-3:])] == [
        ("message", "user"),
        ("message", "assistant"),
        ("branch_summary", None),
    ]
    assert _is_aborted_reply(entries[-2])
    first = next(entry for entry in entries if _is_user(entry))
    # The summary hangs where the move went: before the first question.
    assert entries[-1]["parentId"] == first["parentId"]


def test_esc_esc_during_a_reply_stops_it_first_as_pi_s_does(tmp_path):
    """Pi's Esc stops a run and counts no press toward Esc Esc: the selector opens only
    for a double press once the agent is idle."""
    agent, provider = _working_agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        await t.type(ESC)
        await _abort_then_release(t, provider)
        await t.idle()
        t.clock.now += 0.1
        await t.type(ESC)
        seen["after two"] = t.session.picker
        t.clock.now += 0.1
        await t.type(ESC)
        await t.until(lambda: t.session.picker is not None, "the selector")
        seen["after three"] = t.session.picker.title.split("\n")[0]

    settings = TerminalSettings(double_escape_action="fork")
    run_terminal(agent, scenario, settings=settings)
    assert seen == {"after two": None, "after three": TITLE}
    assert _is_aborted_reply(_lines(agent.session_file)[-1])


def test_the_fork_and_tree_keys_open_their_pickers_during_a_reply(tmp_path):
    path = tmp_path / "keybindings.json"
    bindings = {"app.session.fork": "ctrl+x", "app.message.copy": [], "app.session.tree": "f2"}
    path.write_text(json.dumps(bindings))
    agent, provider = _working_agent(tmp_path)
    titles: list[str] = []

    async def scenario(t: Terminal) -> None:
        await _second_prompt_held(t, provider)
        for key in ("\x18", "\x1bOQ"):  # Ctrl+X, F2
            await t.type(key)
            await t.until(lambda: t.session.picker is not None, "a picker")
            titles.append(t.session.picker.title.split("\n")[0])
            t.session.cancel_picker()
        titles.append("busy" if agent.is_busy() else "idle")
        provider.release.set()
        await t.idle()

    run_terminal(agent, scenario, keymap=KeyMap.load(path))
    assert titles[0] == TITLE
    assert titles[1].startswith("Session tree")
    # Closing them changed nothing: the reply was still being written.
    assert titles[2] == "busy"
    assert _lines(agent.session_file)[-1]["message"]["stopReason"] == "stop"
