"""A Tree rollover in the interactive session: one transcript line for the new window, a
status while the summary is made, and text typed meanwhile kept — what was submitted is
delivered after the new window's marker, the draft stays in the editor."""

from __future__ import annotations

import orjson
from support.agents import make_agent
from support.terminal import ENTER, ESC, GatedStream, run_terminal

from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider

SCRIPT = {
    "responses": [
        {"text": "Rolling over.", "tool_calls": [{"name": "new_context"}]},
        {"text": "Window 1 starts."},
        {"text": "Got your note."},
    ],
    "summaries": ["Window 0 rolled over at once."],
}


def test_text_typed_during_the_rollover_survives_it(tmp_path):
    provider = GatedStream(
        ScriptedProvider(Script.model_validate(SCRIPT), chunk_chars=8),
        hold_after=1,
        purpose="branch_summary",
    )
    agent = make_agent(tmp_path, [], mode="tree", provider=provider)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("go" + ENTER)
        await t.until(provider.held.is_set, "the summary to be in progress")
        await t.until(
            lambda: (
                t.session.status.activity == "Summarizing the previous window... (escape to cancel)"
            ),
            "the status",
        )
        await t.type("also check the tests" + ENTER)
        await t.type("unsent draft")
        provider.release.set()
        await t.printed("context window 1 — previous window archived")
        await t.printed("Got your note.")
        await t.idle()
        seen["editor"] = t.editor
        seen["footer"] = "".join(text for _, text in t.session.status.fragments())

    terminal = run_terminal(agent, scenario)
    assert seen["editor"] == "unsent draft"
    assert "window 1" in seen["footer"]
    assert terminal.flat().count("context window 1") == 1
    entries = [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]
    marker = max(i for i, e in enumerate(entries) if e.get("customType") == "codex-context-window")
    held = next(
        i
        for i, e in enumerate(entries)
        if e["type"] == "message"
        and e["message"]["role"] == "user"
        and e["message"]["content"][0]["text"] == "also check the tests"
    )
    assert held > marker


def test_a_failed_rollover_is_one_error_line_and_loses_no_text(tmp_path):
    script = {**SCRIPT, "summaries": []}  # the summary call finds nothing: the rollover fails
    agent = make_agent(
        tmp_path,
        [],
        mode="tree",
        provider=ScriptedProvider(Script.model_validate(script)),
    )

    async def scenario(t):
        await t.type("go" + ENTER)
        await t.printed("Tree context rollover failed:")
        await t.idle()
        await t.type("still here")

    terminal = run_terminal(agent, scenario)
    assert terminal.flat().count("Tree context rollover failed:") == 1
    assert "context window 1" not in terminal.flat()
    assert terminal.editor == "still here"


def test_esc_cancels_the_summary_and_keeps_the_draft(tmp_path):
    provider = GatedStream(
        ScriptedProvider(Script.model_validate(SCRIPT), chunk_chars=8),
        hold_after=1,
        purpose="branch_summary",
    )
    agent = make_agent(tmp_path, [], mode="tree", provider=provider)

    async def scenario(t):
        await t.type("go" + ENTER)
        await t.until(provider.held.is_set, "the summary to be in progress")
        await t.type("my draft")
        await t.type(ESC)
        await t.until(lambda: provider.signal is not None and provider.signal.aborted, "abort")
        provider.release.set()
        await t.printed("Tree context rollover failed:")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert terminal.editor == "my draft"
    assert "context window 1" not in terminal.flat()
    assert terminal.flat().count("Tree context rollover failed:") == 1
