"""Each terminal command's happy path, driven by keys."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import orjson
import pytest
from support.agents import make_agent
from support.pi_oracle import pi_branch_export, require_pi
from support.terminal import DOWN, ENTER, ESC, GatedStream, GateTool, run_terminal

from ctxmodes import NavigationRequest
from ctxmodes.abort import AbortSignal
from ctxmodes.compaction.settings import BranchSummarySettings
from ctxmodes.config import Settings, TerminalSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.providers.base import ModelRequest, StreamEvent
from ctxmodes.sdk.agent import open_agent
from ctxmodes.session.models import TextContent, UserMessage
from ctxmodes.tools.shell_config import ShellConfig
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.navigator import TITLE


def entries(agent) -> list[dict]:
    return [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]


def test_session_context_name_and_copy(tmp_path):
    agent = make_agent(tmp_path, [{"text": "The answer is 42.", "usage": {"totalTokens": 1234}}])

    async def scenario(t):
        await t.type("question" + ENTER)
        await t.printed("The answer is 42.")
        await t.idle()
        await t.type("/session" + ENTER)
        await t.printed(f"ID: {agent.session_manager.session_id}")
        await t.printed("Assistant: 1")
        await t.printed("Mode: off")
        await t.type("/context" + ENTER)
        await t.printed("system prompt")
        await t.type("/name release prep" + ENTER)
        await t.printed("Session name set: release prep")
        footer = "".join(text for _, text in t.session.status.fragments())
        assert "release prep" in footer
        await t.type("/copy" + ENTER)
        await t.printed("Copied last agent message to clipboard")

    terminal = run_terminal(agent, scenario)
    text = terminal.text()
    assert "free               110382 of 111616 usable (reported)" in text
    assert entries(agent)[-1] == {
        **entries(agent)[-1],
        "type": "session_info",
        "name": "release prep",
    }
    osc = "\x1b]52;c;" + base64.b64encode(b"The answer is 42.").decode() + "\x07"
    assert osc in terminal.screen.getvalue()


def test_name_says_how_to_use_it_and_how_a_name_was_normalized(tmp_path):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("/name" + ENTER)
        await t.printed("Warning: Usage: /name <name>")
        await t.type("/name first\nsecond" + ENTER)  # Ctrl+J: a line break in the name
        await t.printed("Session name set: first second")
        await t.type("/name" + ENTER)
        await t.printed("Session name: first second")
        assert agent.session_manager.get_session_name() == "first second"

    text = run_terminal(agent, scenario).text()
    warning = 'Warning: Session name was normalized from "first\\nsecond" to "first second"'
    assert warning in text


def test_export_writes_the_page(tmp_path):
    agent = make_agent(tmp_path, [{"text": "exported <b>reply</b>"}])
    target = tmp_path / "out.html"

    async def scenario(t):
        await t.type("hi" + ENTER)
        await t.idle()
        await t.type(f"/export {target}" + ENTER)
        await t.printed(f"Session exported to: {target}")

    run_terminal(agent, scenario)
    page = target.read_text(encoding="utf-8")
    assert "exported &lt;b&gt;reply&lt;/b&gt;" in page
    assert " · mode off · " in page  # as `ctxmodes session export` names it


def test_export_without_a_file_writes_pi_s_page_name_in_the_working_directory(
    tmp_path, monkeypatch
):
    agent = make_agent(tmp_path, [{"text": "one"}])
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    async def scenario(t):
        await t.type("hi" + ENTER)
        await t.idle()
        await t.type("/export" + ENTER)
        await t.printed("Session exported to:")

    terminal = run_terminal(agent, scenario)
    name = f"pi-session-{agent.session_file.name.removesuffix('.jsonl')}.html"
    assert f"Session exported to: {name}" in terminal.flat()
    assert "one" in (work / name).read_text(encoding="utf-8")


def test_a_session_kept_in_memory_exports_its_branch_but_no_page(tmp_path, monkeypatch):
    # As Pi: `--no-session` has a branch to write out, but no file to make a page of.
    monkeypatch.chdir(tmp_path)  # where a page made by `/export` would go
    agent = open_agent(
        cwd=tmp_path,
        settings=Settings(),
        provider=ScriptedProvider(Script.model_validate({"responses": [{"text": "one"}]})),
        persist=False,
    )
    out = tmp_path / "branch.jsonl"

    async def scenario(t):
        await t.type("first" + ENTER)
        await t.idle()
        await t.type("/export" + ENTER)
        await t.printed("Nothing is stored yet to export")
        await t.type(f"/export {out}" + ENTER)
        await t.printed(f"Session exported to: {out}")

    run_terminal(agent, scenario)
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert lines[0]["type"] == "session"
    assert [line["message"]["role"] for line in lines if line["type"] == "message"] == [
        "user",
        "assistant",
    ]
    assert not list(tmp_path.glob("*.html"))


@pytest.mark.slow  # the real Pi exports the same branch, through node
def test_export_to_jsonl_writes_the_branch_as_pi_does(tmp_path):
    pi = require_pi()
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    ours = tmp_path / "out" / "branch.jsonl"

    async def scenario(t):
        await t.type("first" + ENTER)
        await t.idle()
        await t.type("second" + ENTER)
        await t.idle()
        one = next(
            entry["id"]
            for entry in entries(agent)
            if entry["type"] == "message" and entry["message"]["content"][0]["text"] == "one"
        )
        t.agent.navigate(NavigationRequest(one))
        await t.type("third" + ENTER)
        await t.printed("three")
        await t.idle()
        await t.type(f"/export {ours}" + ENTER)
        await t.printed(f"Session exported to: {ours}")
        session_before = agent.session_file.read_bytes()
        await t.type(f"/export {ours}" + ENTER)  # a file that exists is never written over
        await t.printed(f"Failed to export session: {ours} exists")
        await t.type(f"/export {agent.session_file}" + ENTER)
        await t.printed("Failed to export session:")
        assert agent.session_file.read_bytes() == session_before

    run_terminal(agent, scenario)
    theirs = tmp_path / "pi.jsonl"
    pi_branch_export(agent.session_file, theirs)
    our_lines = [orjson.loads(line) for line in ours.read_bytes().splitlines()]
    their_lines = [orjson.loads(line) for line in theirs.read_bytes().splitlines()]
    # The header's time is the export's own; everything else is byte for byte Pi's.
    assert {**our_lines[0], "timestamp": None} == {**their_lines[0], "timestamp": None}
    assert ours.read_bytes().splitlines()[1:] == theirs.read_bytes().splitlines()[1:]
    texts = [
        line["message"]["content"][0]["text"] for line in our_lines if line.get("type") == "message"
    ]
    assert texts == ["first", "one", "third", "three"]
    [opened] = pi.open_many([{"file": str(ours)}])
    assert opened["entryCount"] == len(our_lines) - 1
    assert opened["branchIds"] == [line["id"] for line in our_lines[1:]]


async def _open_the_tree_after_two_exchanges(t) -> None:
    await t.type("first" + ENTER)
    await t.idle()
    await t.type("second" + ENTER)
    await t.printed("two")
    await t.idle()
    await t.type("/tree" + ENTER)
    await t.until(lambda: t.session.picker is not None, "the tree")


async def _pick_the_second_question_in_the_tree(t) -> None:
    """Two exchanges, then ``/tree`` and Enter on the second user message."""
    await _open_the_tree_after_two_exchanges(t)
    rows = [row.key for row in t.session.picker.rows()]
    second = rows[-2]  # the user message "second" (the leaf is its answer)
    while t.session.picker.rows()[t.session.picker.selected].key != second:
        await t.type("\x1b[A")
    await t.type(ENTER)  # pick it


def _expanded(shown: str, title: str, summary: str) -> bool:
    """Whether Ctrl+O printed ``summary`` (its first line's start) under ``title``'s heading."""
    return summary.strip().splitlines()[0][:40] in shown.split(f"{title} output", 1)[1]


def test_tree_navigates_to_a_user_message_and_offers_its_text(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(
            lambda: t.session.picker is not None and "Summarize" in t.session.picker.title
        )
        await t.type(ENTER)  # no summary
        await t.until(lambda: t.editor == "second", "the message text in the editor")
        await t.printed("Navigated to selected point")

    run_terminal(agent, scenario)
    texts = [e["message"]["content"][0]["text"] for e in entries(agent) if e["type"] == "message"]
    assert texts.count("second") == 1  # nothing was sent again: the text waits in the editor


def test_tree_with_skip_prompt_moves_without_asking_or_summarizing(tmp_path):
    """Pi's ``branchSummary.skipPrompt``: the picked entry is reached at once, no summary."""
    options = HostOptions(branch_summary=BranchSummarySettings(skip_prompt=True))
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}], options=options)
    titles: list[str] = []

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.editor == "second", "the message text in the editor")
        await t.printed("Navigated to selected point")
        titles.append("" if t.session.picker is None else t.session.picker.title)

    run_terminal(agent, scenario)
    assert titles == [""]  # no picker left open: nothing was asked
    assert "branch_summary" not in [e["type"] for e in entries(agent)]


def _user_entry_id(agent, text: str) -> str:
    [entry_id] = [
        entry["id"]
        for entry in entries(agent)
        if entry["type"] == "message"
        and entry["message"]["role"] == "user"
        and entry["message"]["content"][0]["text"] == text
    ]
    return str(entry_id)


def _last_id(agent) -> str:
    """The id of the file's last entry: where the session is while nothing moved."""
    return str(entries(agent)[-1]["id"])


def test_tree_on_the_current_entry_says_so_and_asks_nothing(tmp_path):
    """Pi's tree: Enter on the entry the session is at moves nowhere and asks nothing."""
    agent = make_agent(tmp_path, [{"text": "one"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("first" + ENTER)
        await t.idle()
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        await t.type(ENTER)  # it opens on the current entry
        await t.printed("Already at this point")
        seen["picker"] = t.session.picker
        seen["leaf"] = agent.session_manager.get_leaf_id()

    run_terminal(agent, scenario)
    assert seen["picker"] is None
    assert seen["leaf"] == _last_id(agent)


def test_esc_goes_back_from_the_instructions_to_the_question_and_from_it_to_the_tree(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])
    titles: list[str] = []
    selected: list[object] = []
    leaves: list[str | None] = []

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.session.picker is not None, "the question")
        titles.append(t.session.picker.title)
        await t.type(DOWN + DOWN + ENTER)  # Summarize with custom prompt
        await t.until(lambda: "instructions" in t.session.picker.title, "the instructions")
        titles.append(t.session.picker.title)
        await t.type(ESC)
        await t.until(lambda: t.session.picker.title == titles[0], "the question again")
        await t.type(ESC)
        await t.until(lambda: "Summarize" not in t.session.picker.title, "the tree again")
        picker = t.session.picker
        selected.append(picker.rows()[picker.selected].key)
        await t.type(ESC)
        leaves.append(agent.session_manager.get_leaf_id())

    run_terminal(agent, scenario)
    assert titles == ["Summarize branch?", "Custom summarization instructions"]
    assert selected == [_user_entry_id(agent, "second")]  # the tree opens on the entry picked
    assert leaves == [_last_id(agent)]  # nothing moved


class _RecordingProvider(ScriptedProvider):
    """The scripted model, keeping the requests made for branch summaries."""

    def __init__(self, script: Script) -> None:
        super().__init__(script, chunk_chars=4)
        self.summary_requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        if request.purpose == "branch_summary":
            self.summary_requests.append(request)
        return super().stream(request, signal)


def _request_text(request: ModelRequest) -> str:
    return "\n".join(
        part.text
        for message in request.messages
        if isinstance(message, UserMessage) and not isinstance(message.content, str)
        for part in message.content
        if isinstance(part, TextContent)
    )


def test_custom_instructions_of_several_lines_reach_the_branch_summary(tmp_path):
    """Pi's multi-line editor: Ctrl+J, Alt+Enter and Enter after a backslash break the line,
    a paste keeps its line breaks (and drops other control characters), Enter submits the
    whole text, trimmed."""
    provider = _RecordingProvider(
        Script.model_validate({"responses": [{"text": "one"}, {"text": "two"}]})
    )
    agent = make_agent(tmp_path, [], provider=provider)
    drawn: list[str] = []

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.session.picker is not None, "the question")
        await t.type(DOWN + DOWN + ENTER)  # Summarize with custom prompt
        await t.until(lambda: "instructions" in t.session.picker.title, "the instructions")
        await t.type("Focus on" + "\n" + "the tests")  # Ctrl+J
        await t.type("\x1b\r")  # Alt+Enter
        await t.type("and the docs\\" + ENTER)
        await t.type("\x1b[200~on\x01ly\r\nthose \x1b[201~")
        await t.until(lambda: t.session.picker.query.endswith("those "), "the paste")
        drawn.append("".join(text for _, text in t.session.picker.fragments(100)))
        await t.type(ENTER)
        await t.printed("Navigated to selected point")

    run_terminal(agent, scenario)
    text = "Focus on\nthe tests\nand the docs\nonly\nthose"
    assert drawn[0].startswith(
        "Custom summarization instructions\n"
        "> Focus on\n  the tests\n  and the docs\n  only\n  those  \n"
    )
    [request] = provider.summary_requests
    assert text in _request_text(request)
    assert [e for e in entries(agent) if e["type"] == "branch_summary"]


def test_ctrl_o_shows_the_summary_of_the_branch_just_left(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.session.picker is not None, "the question")
        await t.type(DOWN + ENTER)  # Summarize
        await t.printed("Navigated to selected point")
        await t.type("\x0f")  # Ctrl+O, as Pi's key expands a branch summary
        await t.printed("branch summary output")

    shown = run_terminal(agent, scenario).text()
    [summary] = [e["summary"] for e in entries(agent) if e["type"] == "branch_summary"]
    line = next(row for row in shown.splitlines() if row.startswith("• branch summarized"))
    assert line.endswith("(ctrl+o to expand)")
    assert _expanded(shown, "branch summary", summary)


def test_ctrl_g_edits_the_custom_instructions_in_the_configured_external_editor(tmp_path):
    """As the main editor's Ctrl+G: the editor gets the text so far and its text comes back,
    line breaks and all, to be submitted with Enter."""
    editor = tmp_path / "editor.sh"
    editor.write_text(
        '#!/bin/sh\nprintf "%s\\nadded in the editor" "$(cat "$1")" > "$1.new"\nmv "$1.new" "$1"\n'
    )
    editor.chmod(0o755)
    provider = _RecordingProvider(
        Script.model_validate({"responses": [{"text": "one"}, {"text": "two"}]})
    )
    agent = make_agent(tmp_path, [], provider=provider)

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.session.picker is not None, "the question")
        await t.type(DOWN + DOWN + ENTER)  # Summarize with custom prompt
        await t.until(lambda: "instructions" in t.session.picker.title, "the instructions")
        await t.type("typed first" + "\x07")  # Ctrl+G
        await t.until(lambda: "\n" in t.session.picker.query, "the edited text")
        await t.type(ENTER)
        await t.printed("Navigated to selected point")

    run_terminal(agent, scenario, settings=TerminalSettings(external_editor=f"sh {editor}"))
    [request] = provider.summary_requests
    assert "typed first\nadded in the editor" in _request_text(request)


def test_the_tree_opened_again_from_the_question_is_a_new_one_on_the_entry_picked(tmp_path):
    """Pi opens a new selector there: the configured filter, no label times, nothing folded."""
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await _open_the_tree_after_two_exchanges(t)
        await t.type("\x15" + "T")  # Ctrl+U: user messages only; Shift+T: label times
        await t.until(lambda: t.session.picker.title.endswith("[+label time]"), "the labels")
        seen["before"] = t.session.picker.title
        await t.type("\x1b[A" + ENTER)  # the message "second" is last; the one above it
        await t.until(lambda: t.session.picker.title == "Summarize branch?", "the question")
        await t.type(ESC)
        await t.until(lambda: "Summarize" not in t.session.picker.title, "the tree again")
        picker = t.session.picker
        seen["title"] = picker.title
        seen["selected"] = picker.rows()[picker.selected].key
        seen["rows"] = len(picker.rows())
        await t.type(ESC)

    run_terminal(agent, scenario)
    assert seen["before"] == TITLE + " [user] [+label time]"
    assert seen["title"] == TITLE
    assert seen["selected"] == _user_entry_id(agent, "first")
    assert seen["rows"] == 4  # both exchanges again, as the default filter shows them


def test_a_summary_stopped_with_esc_opens_the_tree_again(tmp_path):
    scripted = ScriptedProvider(
        Script.model_validate(
            {"responses": [{"text": "one"}, {"text": "two"}, {"text": "a summary never seen"}]}
        ),
        chunk_chars=4,
    )
    provider = GatedStream(scripted, hold_after=1, purpose="branch_summary")
    agent = make_agent(tmp_path, [], provider=provider)
    seen: dict[str, object] = {}

    async def scenario(t):
        await _pick_the_second_question_in_the_tree(t)
        await t.until(lambda: t.session.picker is not None, "the question")
        await t.type(DOWN + ENTER)  # Summarize
        await t.until(provider.held.is_set, "the summary to be under way")
        await t.type(ESC)
        await t.until(lambda: provider.signal.aborted, "the abort")
        provider.release.set()
        await t.printed("Branch summarization cancelled")
        await t.until(lambda: t.session.picker is not None, "the tree again")
        picker = t.session.picker
        seen["title"] = picker.title
        seen["selected"] = picker.rows()[picker.selected].key
        await t.type(ESC)
        seen["leaf"] = agent.session_manager.get_leaf_id()

    run_terminal(agent, scenario)
    assert seen["selected"] == _user_entry_id(agent, "second")
    assert "Summarize" not in str(seen["title"])
    assert seen["leaf"] == _last_id(agent)  # nothing moved
    assert "branch_summary" not in [e["type"] for e in entries(agent)]


def test_ctrl_x_in_the_editor_copies_the_last_reply_and_keybindings_json_moves_it(tmp_path):
    """Pi's ``app.message.copy`` outside the tree: the last reply, as ``/copy``."""
    agent = make_agent(tmp_path, [{"text": "first reply"}, {"text": "second reply"}])
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.message.copy": "alt+c"}')
    payloads = {
        reply: base64.b64encode(reply.encode()).decode()
        for reply in ("first reply", "second reply")
    }

    async def scenario(t):
        await t.type("question" + ENTER)
        await t.printed("first reply")
        await t.idle()
        await t.type("\x18")  # Ctrl+X: rebound, so nothing
        await t.type("again" + ENTER)
        await t.printed("second reply")
        await t.idle()
        await t.type("\x1bc")  # Alt+C
        await t.printed("Copied last agent message to clipboard")

    screen = run_terminal(agent, scenario, keymap=KeyMap.load(bindings)).screen.getvalue()
    assert f"\x1b]52;c;{payloads['second reply']}\x07" in screen
    assert payloads["first reply"] not in screen


def test_ctrl_x_copies_with_pi_s_default_key(tmp_path):
    agent = make_agent(tmp_path, [{"text": "the reply"}])

    async def scenario(t):
        await t.type("question" + ENTER)
        await t.printed("the reply")
        await t.idle()
        await t.type("\x18")
        await t.printed("Copied last agent message to clipboard")

    run_terminal(agent, scenario)


def test_tree_opens_with_the_configured_filter(tmp_path):
    """``terminal.tree_filter`` (Pi's ``treeFilterMode``): the filter ``/tree`` opens with;
    Ctrl+O cycles on from it."""
    agent = make_agent(tmp_path, [{"text": "one"}])
    titles: list[str] = []

    async def scenario(t):
        await t.type("first" + ENTER)
        await t.idle()
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        titles.append(t.session.picker.title)
        await t.type("\x0f")  # Ctrl+O
        await t.until(lambda: t.session.picker.title != titles[0], "the next filter")
        titles.append(t.session.picker.title)

    run_terminal(agent, scenario, settings=TerminalSettings(tree_filter="user-only"))
    # Pi's words for the two filters after the title.
    assert [title.rpartition(" ")[2] for title in titles] == ["[user]", "[labeled]"]


def test_new_and_resume_replace_the_session(tmp_path):
    agent = make_agent(tmp_path, [{"text": "in the first session"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        first = agent.session_file
        seen["first"] = first
        await t.type("/new" + ENTER)
        await t.printed("New session")
        await t.until(lambda: agent.session_file != first, "a new session")
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        seen["rows"] = [row.key for row in t.session.picker.rows()]
        await t.type("hello")  # filters on the first message
        await t.until(lambda: [r.key for r in t.session.picker.rows()] == [first])
        await t.type(ENTER)
        await t.printed("Resumed session")
        await t.until(lambda: agent.session_file == first, "the first session back")

    run_terminal(agent, scenario)
    assert seen["first"] in seen["rows"]


@pytest.mark.slow  # draws two long replies
def test_compact_runs_on_the_worker_and_reports(tmp_path):
    # Long enough that Pi's 20,000 recent tokens leave something to summarize.
    agent = make_agent(tmp_path, [{"text": "a " * 60_000}, {"text": "b " * 60_000}])

    async def scenario(t):
        await t.type("one" + ENTER)
        await t.idle()
        await t.type("two" + ENTER)
        await t.idle()
        await t.type("/compact keep the numbers" + ENTER)
        await t.printed("Compacted from")
        await t.idle()
        await t.type("\x0f")  # Ctrl+O: the summary, as Pi's key expands a compaction
        await t.printed("compaction output")

    terminal = run_terminal(agent, scenario)
    compaction = next(entry for entry in entries(agent) if entry["type"] == "compaction")
    shown = terminal.text()
    assert f"• Compacted from {compaction['tokensBefore']:,} tokens (ctrl+o to expand)" in shown
    assert _expanded(shown, "compaction", compaction["summary"])


def test_switching_the_mode_asks_first_and_says_what_changes(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}], mode="tree")

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/mode off" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the prompt")
        title = t.session.picker.title
        assert title.startswith("Switching this session from tree to off: ")
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the prompt to close")
        assert agent.mode == "tree"
        await t.type("/mode off" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the prompt")
        await t.type(DOWN + ENTER)  # "Stay in tree"
        await t.printed("Mode unchanged: tree")
        assert agent.mode == "tree"
        await t.type("/mode off" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the prompt")
        await t.type(ENTER)  # "Switch to off"
        await t.printed("Mode: off")
        assert agent.mode == "off"

    run_terminal(agent, scenario)
    modes = [
        entry["data"]["mode"]
        for entry in entries(agent)
        if entry["type"] == "custom" and entry["customType"] == "ctxmodes-mode"
    ]
    assert modes == ["tree", "off"]


def test_before_the_first_message_the_mode_switches_without_asking(tmp_path):
    agent = make_agent(tmp_path, [{"text": "ok"}], mode="tree")

    async def scenario(t):
        await t.type("/mode local" + ENTER)
        await t.printed("Mode: local")
        assert t.session.picker is None
        assert agent.mode == "local"
        await t.type("hello" + ENTER)
        await t.idle()

    run_terminal(agent, scenario)
    modes = [
        entry["data"]["mode"]
        for entry in entries(agent)
        if entry["type"] == "custom" and entry["customType"] == "ctxmodes-mode"
    ]
    assert modes[-1] == "local"


def test_history_and_notes_read_through_the_mode(tmp_path):
    responses = [
        {
            "tool_calls": [
                {
                    "name": "notes",
                    "arguments": {"action": "write_file", "path": "plan.md", "text": "ship it"},
                }
            ]
        },
        {"text": "noted"},
    ]
    agent = make_agent(tmp_path, responses, mode="tree")

    async def scenario(t):
        await t.type("plan" + ENTER)
        await t.printed("noted")
        await t.idle()
        await t.type("/notes read_file path=plan.md" + ENTER)
        await t.printed("ship it")
        await t.type("/history list_windows" + ENTER)
        await t.printed('"windows"')
        await t.type("/history nonsense" + ENTER)
        await t.printed("has no read-only action")

    run_terminal(agent, scenario)


def test_ctrl_o_shows_the_summary_of_the_window_tree_archived(tmp_path):
    responses = [
        {"text": "Starting over.", "tool_calls": [{"name": "new_context"}]},
        {"text": "Fresh window."},
    ]
    agent = make_agent(tmp_path, responses, mode="tree")

    async def scenario(t):
        await t.type("plan" + ENTER)
        await t.printed("Fresh window.")
        await t.idle()
        await t.type("\x0f")  # Ctrl+O
        await t.printed("window 0 summary output")

    shown = run_terminal(agent, scenario).text()
    [summary] = [e["summary"] for e in entries(agent) if e["type"] == "branch_summary"]
    line = next(row for row in shown.splitlines() if row.startswith("── context window 1"))
    assert line.endswith("previous window archived (ctrl+o to expand)")
    assert _expanded(shown, "window 0 summary", summary)


def test_quit_leaves(tmp_path):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("/quit" + ENTER)
        await t.until(lambda: not t.session.app.is_running, "the application to exit")

    run_terminal(agent, scenario)


def test_bang_commands_run_and_reach_the_model_unless_doubled(tmp_path):
    agent = make_agent(tmp_path, [{"text": "seen it"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("!echo visible-output" + ENTER)
        await t.printed("$ echo visible-output")
        await t.printed(" visible-output\n")
        await t.idle()
        await t.type("!!echo hidden-output" + ENTER)
        await t.printed("$ echo hidden-output (not sent to the model)")
        await t.idle()
        await t.type("what did you see?" + ENTER)
        await t.printed("seen it")
        await t.idle()
        seen["request"] = t.session.transcript.last_request

    run_terminal(agent, scenario)
    bash = [
        e["message"] for e in entries(agent) if e.get("message", {}).get("role") == "bashExecution"
    ]
    assert [(m["command"], m["output"].strip(), m.get("excludeFromContext")) for m in bash] == [
        # Pi's interactive mode records a single ! as not excluded, in so many words.
        ("echo visible-output", "visible-output", False),
        ("echo hidden-output", "hidden-output", True),
    ]
    sent = seen["request"].model_dump_json()
    assert "visible-output" in sent
    assert "hidden-output" not in sent


def test_bang_commands_run_in_the_configured_shell_and_are_recorded_as_typed(tmp_path):
    wrapper = tmp_path / "logging-bash"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "log"}\nexec bash "$@"\n')
    wrapper.chmod(0o755)
    prefix = "shopt -s expand_aliases\nalias greet='echo hello from the alias'"
    shell = ShellConfig(path=str(wrapper), command_prefix=prefix)
    agent = make_agent(tmp_path, [], options=HostOptions(shell=shell))

    async def scenario(t):
        await t.type("!greet" + ENTER)
        await t.printed("$ greet")
        await t.printed(" hello from the alias\n")
        await t.idle()
        await t.type("!!greet" + ENTER)
        await t.printed("$ greet (not sent to the model)")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert "shopt" not in terminal.text()
    bash = [
        e["message"] for e in entries(agent) if e.get("message", {}).get("role") == "bashExecution"
    ]
    assert [(m["command"], m["output"], m["exitCode"]) for m in bash] == [
        ("greet", "hello from the alias\n", 0),
        ("greet", "hello from the alias\n", 0),
    ]
    assert (tmp_path / "log").read_text().count("--noprofile --norc") == 2


def test_a_bang_command_in_a_missing_shell_is_an_error_and_not_recorded(tmp_path):
    missing = tmp_path / "no-such-bash"
    agent = make_agent(tmp_path, [], options=HostOptions(shell=ShellConfig(path=str(missing))))

    async def scenario(t):
        await t.type("!echo never" + ENTER)
        await t.printed(f"The configured shell does not exist: {missing}")
        await t.idle()
        assert agent.session.messages == []

    run_terminal(agent, scenario)


def test_a_bang_command_typed_while_the_agent_works_runs_beside_it_as_in_pi(tmp_path):
    gate = GateTool()
    agent = make_agent(tmp_path, [{"tool_calls": [{"name": "gate"}]}, {"text": "done"}], gate)
    marker = tmp_path / "ran"
    command = f"echo beside > {marker} && echo printed"
    seen: dict[str, object] = {}

    def waiting(t) -> str:
        """What the live region lists among the queued messages."""
        return "".join(text for _, text in t.session.live.queue_fragments(t.session.keymap))

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set)
        await t.type("!" + command + ENTER)
        # At once, while the tool still holds the run; the editor is free again.
        await t.until(marker.exists, "the command to run")
        assert t.editor == ""
        seen["waiting"] = waiting(t)
        seen["recorded while the run goes on"] = [
            e for e in entries(agent) if e.get("message", {}).get("role") == "bashExecution"
        ]
        gate.opened.set()
        await t.printed("done")
        await t.idle()
        await t.printed("printed")
        seen["waiting after"] = waiting(t)

    run_terminal(agent, scenario)
    assert f"$ {command} (shown when the agent is done)" in str(seen["waiting"])
    assert seen["recorded while the run goes on"] == []
    assert "shown when the agent is done" not in str(seen["waiting after"])
    roles = [e["message"]["role"] for e in entries(agent) if e["type"] == "message"]
    # Recorded when the run ends, after its last answer, as Pi records it.
    assert roles == ["user", "assistant", "toolResult", "assistant", "bashExecution"]
    [bash] = [
        e["message"] for e in entries(agent) if e.get("message", {}).get("role") == "bashExecution"
    ]
    assert (bash["command"], bash["output"], bash["exitCode"]) == (command, "printed\n", 0)


def test_a_second_bang_command_waits_for_the_first(tmp_path):
    agent = make_agent(tmp_path, [])
    release = tmp_path / "release"
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.interrupt": ["escape", "alt+i"]}')

    async def scenario(t):
        await t.type(f"!while [ ! -e {release} ]; do sleep 0.02; done" + ENTER)
        await t.until(lambda: t.session.shell_abort is not None, "the first command to run")
        await t.type("!echo second" + ENTER)
        # Pi's words, naming the key that stops it as bound.
        await t.printed("A bash command is already running. Press escape/alt+i to cancel it first.")
        assert t.editor == "!echo second"
        release.touch()
        await t.idle()
        await t.until(lambda: t.session.shell_abort is None, "the first command to end")

    run_terminal(agent, scenario, keymap=KeyMap.load(bindings))
    commands = [e["message"]["command"] for e in entries(agent) if e["type"] == "message"]
    assert len(commands) == 1
    assert commands[0].startswith("while")


def reasoning_model(responses: list[dict[str, object]]) -> ScriptedProvider:
    return ScriptedProvider(Script.model_validate({"responses": responses, "reasoning": True}))


def test_thinking_changes_the_next_request_and_is_recorded(tmp_path):
    agent = make_agent(tmp_path, [], provider=reasoning_model([{"text": "thought hard"}]))
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("/thinking HIGH" + ENTER)  # in any case, as in Pi
        await t.printed("Thinking level: high")
        footer = "".join(text for _, text in t.session.status.fragments())
        seen["footer"] = footer
        await t.type("/thinking enormous" + ENTER)
        await t.printed(
            'Error: Unknown thinking level "enormous". '
            "Available levels: off, minimal, low, medium, high."
        )
        await t.type("go" + ENTER)
        await t.printed("thought hard")
        await t.idle()
        seen["reasoning"] = t.session.transcript.last_request.reasoning

    run_terminal(agent, scenario)
    assert "(high)" in seen["footer"]
    assert seen["reasoning"] == "high"
    levels = [e["thinkingLevel"] for e in entries(agent) if e["type"] == "thinking_level_change"]
    assert levels == ["medium", "high"]  # Pi's default to start with


def test_thinking_a_model_does_not_take_is_refused(tmp_path):
    """As Pi: a model without reasoning takes only off, and /thinking names only that."""
    agent = make_agent(tmp_path, [{"text": "plain answer"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("/thinking high" + ENTER)
        await t.printed('Error: Unknown thinking level "high". Available levels: off.')
        await t.type("go" + ENTER)
        await t.printed("plain answer")
        await t.idle()
        seen["reasoning"] = t.session.transcript.last_request.reasoning

    run_terminal(agent, scenario)
    assert seen["reasoning"] is None
    levels = [e["thinkingLevel"] for e in entries(agent) if e["type"] == "thinking_level_change"]
    assert levels == ["off"]


def test_model_switches_to_another_model_and_records_it(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"model": "second-model", "responses": [{"text": "from the second"}]}')
    agent = make_agent(tmp_path, [{"text": "from the first"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("one" + ENTER)
        await t.printed("from the first")
        await t.idle()
        await t.type("/model" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        seen["drawn"] = "".join(text for _, text in t.session.picker.fragments(100))
        await t.type("\x1b")
        await t.until(lambda: t.session.picker is None)
        await t.type(f"/model scripted:{other}" + ENTER)
        await t.printed("Model: second-model")
        seen["footer"] = "".join(text for _, text in t.session.status.fragments())
        await t.type("two" + ENTER)
        await t.printed("from the second")
        await t.idle()

    run_terminal(agent, scenario)
    # Without a model scope, Pi's line says only models with credentials are offered.
    assert "Only showing models from configured providers." in str(seen["drawn"])
    assert "scripted/second-model" in seen["footer"]
    changes = [(e["provider"], e["modelId"]) for e in entries(agent) if e["type"] == "model_change"]
    assert changes[-1] == ("scripted", "second-model")


def test_a_prompt_without_a_model_is_one_line_and_stays_in_the_editor(tmp_path):
    """A session opened without a model (a reopened one whose model is not usable here):
    the prompt is refused before anything is recorded, with a line naming /model, and the
    text goes back to the editor, the cursor at its end; /model then makes it work."""
    from ctxmodes.config import Settings
    from ctxmodes.sdk import open_agent
    from ctxmodes.tui.commands import NO_MODEL_NOTICE

    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "answered"}]}')
    agent = open_agent(
        cwd=tmp_path, settings=Settings(mode="off", durability="flush"), session_dir=tmp_path
    )
    seen = {}

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.printed(NO_MODEL_NOTICE)
        seen["editor"] = t.editor
        seen["cursor"] = t.session.buffer.cursor_position
        await t.type("\x15" + f"/model scripted:{script}" + ENTER)
        await t.printed("Model: scripted")
        await t.type("hello again" + ENTER)
        await t.printed("answered")
        await t.idle()

    run_terminal(agent, scenario)
    assert (seen["editor"], seen["cursor"]) == ("hello", len("hello"))
    users = [e for e in entries(agent) if e.get("message", {}).get("role") == "user"]
    assert [u["message"]["content"][0]["text"] for u in users] == ["hello again"]


def test_copy_before_any_reply_says_so_in_pi_s_words(tmp_path):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("/copy" + ENTER)
        await t.printed("Error: No agent messages to copy yet.")

    screen = run_terminal(agent, scenario).screen.getvalue()
    assert "\x1b]52;" not in screen


@pytest.mark.parametrize(
    ("bindings", "key"), [("{}", "Ctrl+P"), ('{"app.model.cycleForward": "alt+n"}', "Alt+N")]
)
def test_scoped_models_is_described_in_pi_s_words_with_the_cycling_key_bound(
    tmp_path, bindings, key
):
    agent = make_agent(tmp_path, [])
    keybindings = tmp_path / "keybindings.json"
    keybindings.write_text(bindings)
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("/scoped")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        [offered] = t.session.buffer.complete_state.completions
        seen["meta"] = offered.display_meta_text

    run_terminal(agent, scenario, keymap=KeyMap.load(keybindings))
    assert seen["meta"].startswith(f"Enable/disable models for {key} cycling")
