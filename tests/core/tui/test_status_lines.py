"""What the terminal says while the agent works names the keys ``keybindings.json`` binds now,
in the words of Pi's own lines: the footer during a retry's wait, a compaction and a branch
summary (Pi's loaders), and the line under the queued messages. Pi's own components, given
the same bindings, draw the same text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_oracle import run_pi_script
from support.terminal import (
    ALT_ENTER,
    DOWN,
    ENTER,
    ESC,
    GatedStream,
    GateTool,
    Terminal,
    run_terminal,
)

from ctxmodes.host.options import HostOptions
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import events as ev
from ctxmodes.tui.app import plain
from ctxmodes.tui.keymap import KeyMap

SCRIPT = Path(__file__).parents[2] / "support" / "pi_status_lines.mjs"
#: The keys named, rebound (Esc still stops, with Alt+I beside it).
REBOUND: dict[str, Any] = {
    "app.interrupt": ["escape", "alt+i"],
    "app.message.dequeue": "alt+u",
}
#: The retry's wait: attempt 1 of 3, a minute away (the test's clock stands still).
RETRY = (1, 3, 60_000)
OVERLOADED = {"stop_reason": "error", "error_message": "529 overloaded, try again"}


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _keymap(tmp_path: Path, bindings: dict[str, Any]) -> KeyMap:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    return KeyMap.load(path)


def _retry_line(tmp_path: Path, keymap: KeyMap) -> str:
    _, most, delay = RETRY
    options = HostOptions(retry=RetrySettings(max_retries=most, base_delay_ms=delay))
    responses = [OVERLOADED, {"text": "never"}]
    agent = make_agent(_folder(tmp_path / "retry"), responses, options=options)
    seen: dict[str, str] = {}

    async def scenario(t: Terminal) -> None:
        await t.type("go" + ENTER)
        await t.until(lambda: (t.session.status.activity or "").startswith("Retrying"))
        seen["line"] = t.session.status.activity or ""
        await t.type(ESC)
        await t.until(lambda: t.session.status.retry_at is None, "the retry to end")
        await t.idle()

    run_terminal(agent, scenario, keymap=keymap)
    return seen["line"]


def _queue_lines(tmp_path: Path, keymap: KeyMap) -> list[str]:
    """The queued steering and follow-up messages, and the line under them."""
    gate = GateTool()
    call = {"tool_calls": [{"name": "gate", "arguments": {}}]}
    agent = make_agent(_folder(tmp_path / "queue"), [call, {"text": "done"}], gate)
    seen: dict[str, list[str]] = {}

    async def scenario(t: Terminal) -> None:
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set, "the tool to run")
        await t.type("first" + ENTER)
        await t.type("second" + ALT_ENTER)
        await t.until(lambda: t.session.live.queued == (("first",), ("second",)), "the queue")
        drawn = t.session.live.queue_fragments(t.session.keymap)
        seen["lines"] = "".join(text for _, text in drawn).splitlines()
        gate.opened.set()
        await t.idle()

    run_terminal(agent, scenario, keymap=keymap)
    return seen["lines"]


def _branch_summary_line(tmp_path: Path, keymap: KeyMap) -> str:
    """The footer while ``/tree``'s summary of the branch left is being made."""
    answers = {"responses": [{"text": "one"}, {"text": "two"}, {"text": "never seen"}]}
    scripted = ScriptedProvider(Script.model_validate(answers), chunk_chars=4)
    provider = GatedStream(scripted, hold_after=1, purpose="branch_summary")
    agent = make_agent(_folder(tmp_path / "summary"), [], provider=provider)
    seen: dict[str, str] = {}

    async def scenario(t: Terminal) -> None:
        for prompt, answer in (("first", "one"), ("second", "two")):
            await t.type(prompt + ENTER)
            await t.printed(answer)
            await t.idle()
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        await t.type("\x1b[A" * 3 + ENTER)  # the first answer, off the current branch's end
        await t.until(lambda: t.session.picker is not None, "the question")
        await t.type(DOWN + ENTER)  # Summarize
        await t.until(provider.held.is_set, "the summary to be under way")
        await t.until(lambda: t.session.status.activity is not None, "the footer")
        seen["line"] = t.session.status.activity or ""
        await t.type(ESC)
        await t.until(lambda: provider.signal is not None and provider.signal.aborted, "abort")
        provider.release.set()
        await t.printed("Branch summarization cancelled")
        await t.until(lambda: t.session.picker is not None, "the tree again")
        await t.type(ESC)
        await t.until(lambda: t.session.status.activity is None, "the footer to settle")

    run_terminal(agent, scenario, keymap=keymap)
    return seen["line"]


def _event_lines(tmp_path: Path, keymap: KeyMap) -> dict[str, str]:
    """The footer on each compaction's start, by its reason, and on a summary a mode makes
    of its own (Tree's of the previous window)."""
    agent = make_agent(_folder(tmp_path / "events"), [])
    seen: dict[str, str] = {}

    async def scenario(t: Terminal) -> None:
        transcript, status = t.session.transcript, t.session.status
        for reason in ("manual", "threshold", "overflow"):
            transcript.handle(ev.CompactionStarted(reason), [], t.session.width)
            seen[reason] = status.activity or ""
        transcript.handle(ev.SummaryStarted(), [], t.session.width)
        seen["window"] = status.activity or ""
        status.activity = None

    run_terminal(agent, scenario, keymap=keymap)
    return seen


def test_a_compaction_that_ends_without_a_summary_says_so_in_pi_s_words(tmp_path: Path) -> None:
    agent = make_agent(_folder(tmp_path / "ends"), [])
    said: list[str] = []
    endings = [
        ("manual", True, None),
        ("manual", False, "Compaction failed: the model is down"),
        ("threshold", True, None),
        ("overflow", False, "Context overflow recovery failed: the model is down"),
    ]

    async def scenario(t: Terminal) -> None:
        for trigger, aborted, error in endings:
            blocks: list[str] = []
            ended = ev.CompactionFinished(None, aborted, error, trigger)
            t.session.transcript.handle(ended, blocks, t.session.width)
            said.append(plain("".join(blocks)).strip())

    run_terminal(agent, scenario)
    assert said == [
        "Error: Compaction cancelled",
        "Error: Compaction failed: the model is down",
        "Auto-compaction cancelled",
        "Context overflow recovery failed: the model is down",
    ]


def test_a_retry_s_wait_names_the_key_that_cancels_it(tmp_path: Path) -> None:
    line = _retry_line(tmp_path, _keymap(tmp_path, REBOUND))
    assert line == "Retrying (1/3) in 60s... (escape/alt+i to cancel)"


def test_the_queue_names_the_key_that_takes_it_back(tmp_path: Path) -> None:
    lines = _queue_lines(tmp_path, _keymap(tmp_path, REBOUND))
    assert lines == ["Steering: first", "Follow-up: second", "↳ Alt+U to edit all queued messages"]


def test_a_branch_summary_names_the_key_that_stops_it(tmp_path: Path) -> None:
    line = _branch_summary_line(tmp_path, _keymap(tmp_path, REBOUND))
    assert line == "Summarizing branch... (escape/alt+i to cancel)"


def test_compactions_and_a_mode_s_summary_name_the_key_that_stops_them(tmp_path: Path) -> None:
    lines = _event_lines(tmp_path, _keymap(tmp_path, REBOUND))
    assert lines["manual"] == "Compacting context... (escape/alt+i to cancel)"
    assert lines["threshold"] == "Auto-compacting... (escape/alt+i to cancel)"
    assert lines["window"] == "Summarizing the previous window... (escape/alt+i to cancel)"


@pytest.mark.pi
@pytest.mark.parametrize("bindings", [{}, REBOUND], ids=["default", "rebound"])
def test_pi_s_own_components_draw_the_same_lines(tmp_path: Path, bindings: dict[str, Any]) -> None:
    keymap = _keymap(tmp_path, bindings)
    request = {
        "bindings": bindings,
        "retry": list(RETRY),
        "queued": {"steering": ["first"], "followUp": ["second"]},
        "resultLines": 25,
    }
    pi = run_pi_script(SCRIPT, json.dumps(request))
    assert _retry_line(tmp_path, keymap) == pi["retry"]
    assert _queue_lines(tmp_path, keymap) == pi["pending"]
    assert _branch_summary_line(tmp_path, keymap) == pi["branchSummary"]
    lines = _event_lines(tmp_path, keymap)
    for reason, line in pi["compaction"].items():
        assert lines[reason] == line, reason
