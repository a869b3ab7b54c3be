"""The interactive session driven through prompt_toolkit's pipe input: streaming, queueing,
taking queued text back, Esc, completion, and the commands that must wait for the turn."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from support.agents import make_agent
from support.terminal import (
    ALT_ENTER,
    ALT_UP,
    CTRL_C,
    ENTER,
    ESC,
    TAB,
    GatedStream,
    GateTool,
    run_terminal,
)

from ctxmodes.abort import AbortSignal
from ctxmodes.config import TerminalSettings
from ctxmodes.providers.base import ModelRequest, Provider, StreamDone, StreamEvent
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.models import ImageContent, TextContent, UserMessage
from ctxmodes.tui.keymap import KeyMap

PROMPT = "\u203a "  # how the transcript shows a user message
GATED = [
    {"tool_calls": [{"name": "gate"}]},
    {"text": "after steering"},
    {"text": "after follow-up"},
]


def user_texts(agent) -> list[str]:
    path = agent.session_file
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    texts = []
    for entry in entries:
        message = entry.get("message") or {}
        if message.get("role") == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def test_a_reply_streams_in_the_live_region_then_goes_to_the_scrollback(tmp_path):
    text = "Streaming *replies* arrive a few characters at a time."
    provider = GatedStream(
        ScriptedProvider(Script.model_validate({"responses": [{"text": text}]}), chunk_chars=4),
        hold_after=5,
    )
    agent = make_agent(tmp_path, [], provider=provider)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.printed(PROMPT + "hello")
        await t.until(provider.held.is_set, "the stream to be held")
        await t.until(lambda: len(t.session.live.text) == 20, "five deltas")
        seen["live"] = t.session.live.text
        seen["fragments"] = "".join(f[1] for f in t.session.live.fragments(t.session.width))
        seen["scrollback"] = t.text()
        provider.release.set()
        await t.printed("Streaming replies arrive")
        await t.idle()
        seen["after"] = t.session.live.text

    terminal = run_terminal(agent, scenario)
    assert seen["live"] == text[:20]
    assert text[:20] in seen["fragments"]
    assert "Streaming" not in seen["scrollback"]
    assert seen["after"] == ""
    # Markdown is rendered: the emphasis markers are gone from the scrollback.
    assert "*replies*" not in terminal.text()


def test_enter_steers_and_alt_enter_follows_up_while_a_tool_runs(tmp_path):
    gate = GateTool()
    agent = make_agent(tmp_path, GATED, gate)
    queued: dict[str, object] = {}

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set, "the tool to run")
        await t.type("try the other branch" + ENTER)
        await t.type("then add tests" + ALT_ENTER)
        await t.until(
            lambda: t.session.live.queued == (("try the other branch",), ("then add tests",))
        )
        queued["shown"] = "".join(f[1] for f in t.session.live.queue_fragments(t.session.keymap))
        queued["editor"] = t.editor
        gate.opened.set()
        await t.printed("after follow-up")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert "Steering: try the other branch" in queued["shown"]
    assert "Follow-up: then add tests" in queued["shown"]
    assert queued["editor"] == ""
    assert user_texts(agent) == ["start", "try the other branch", "then add tests"]
    transcript = terminal.text()
    assert transcript.index(PROMPT + "try the other branch") < transcript.index("after steering")
    assert transcript.index("after steering") < transcript.index(PROMPT + "then add tests")


def test_alt_up_takes_the_queue_back_into_the_editor(tmp_path):
    gate = GateTool()
    agent = make_agent(tmp_path, [GATED[0], {"text": "done"}], gate)

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set)
        await t.type("first thought" + ENTER)
        await t.type("second thought" + ALT_ENTER)
        await t.until(lambda: t.session.live.queued[1] == ("second thought",))
        await t.type("draft")
        await t.type(ALT_UP)
        await t.until(lambda: t.session.live.queued == ((), ()), "the queue to empty")
        assert t.editor == "first thought\nsecond thought\ndraft"
        gate.opened.set()
        await t.printed("done")
        await t.idle()

    run_terminal(agent, scenario)
    assert user_texts(agent) == ["start"]


def test_esc_aborts_and_puts_the_queue_back_before_the_draft(tmp_path):
    gate = GateTool()
    agent = make_agent(tmp_path, [GATED[0], {"text": "never sent"}], gate)

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set)
        await t.type("steer me" + ENTER)
        await t.until(lambda: t.session.live.queued[0] == ("steer me",))
        await t.type("half typed")
        await t.type(ESC)
        await t.until(lambda: t.editor == "steer me\nhalf typed", "the queue in the editor")
        await t.printed("Operation aborted")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert user_texts(agent) == ["start"]
    assert "never sent" not in terminal.text()


def test_commands_that_need_an_idle_session_are_refused_and_kept(tmp_path):
    gate = GateTool()
    agent = make_agent(tmp_path, [GATED[0], {"text": "done"}], gate)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set)
        await t.type("/compact keep the plan" + ENTER)
        await t.printed("/compact waits until the agent is idle (escape to interrupt)")
        seen["editor"] = t.editor
        await t.type("\x15/session" + ENTER)  # Ctrl+U clears the line; /session may run now
        await t.printed("ID: ")
        gate.opened.set()
        await t.printed("done")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert seen["editor"] == "/compact keep the plan"
    assert "Compacted" not in terminal.text()


def test_slash_commands_and_their_arguments_complete(tmp_path):
    agent = make_agent(tmp_path, [], mode="off")
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("/com")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        state = t.session.buffer.complete_state
        seen["offered"] = [(c.text, c.display_meta_text) for c in state.completions]
        await t.type(TAB)
        await t.until(lambda: t.editor == "/compact ", "the completion")
        await t.type("\x15/mode ")
        await t.until(
            lambda: (
                t.session.buffer.complete_state is not None
                and "off" in [c.text for c in t.session.buffer.complete_state.completions]
            ),
            "mode names",
        )
        seen["modes"] = [c.text for c in t.session.buffer.complete_state.completions]

    run_terminal(agent, scenario)
    assert seen["offered"] == [
        ("/compact ", "Summarize older messages to free context · when idle")
    ]
    assert {"off", "local", "tree"} <= set(seen["modes"])


def test_ctrl_c_clears_then_exits(tmp_path):
    agent = make_agent(tmp_path, [])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("some draft")
        await t.type(CTRL_C)
        await t.until(lambda: t.editor == "", "the editor to clear")
        seen["history"] = list(t.session.buffer.history.get_strings())
        t.clock.now += 5  # a later, separate press only arms the exit
        await t.type(CTRL_C)
        await t.printed("Press ctrl+c again to exit")
        t.clock.now += 0.2
        await t.type(CTRL_C)
        await t.until(lambda: not t.session.app.is_running, "the application to exit")

    run_terminal(agent, scenario)
    assert seen["history"] == ["some draft"]


def test_the_exit_s_second_press_is_asked_for_by_the_key_bound(tmp_path):
    agent = make_agent(tmp_path, [])
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.clear": "alt+c"}')

    async def scenario(t):
        await t.type("\x1bc")  # Alt+C
        await t.printed("Press alt+c again to exit")
        t.clock.now += 0.2
        await t.type("\x1bc")
        await t.until(lambda: not t.session.app.is_running, "the application to exit")

    run_terminal(agent, scenario, keymap=KeyMap.load(bindings))


def test_esc_esc_while_idle_opens_the_tree(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])

    async def scenario(t):
        await t.type("first" + ENTER)
        await t.printed("one")
        await t.idle()
        await t.type(ESC)
        await t.until(lambda: t.session.keys.last_escape > 0, "the first Esc")
        t.clock.now += 0.2
        await t.type(ESC)
        await t.until(lambda: t.session.picker is not None, "the tree picker")
        assert t.session.picker.title.startswith("Session tree")
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the picker to close")

    run_terminal(agent, scenario)


def test_the_session_reads_the_editor_through_the_api(tmp_path):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("kept text")
        await t.until(lambda: t.editor == "kept text")
        assert agent.session.ui.get_editor_text() == "kept text"

    run_terminal(agent, scenario)


def _drawn_editor(t) -> str:
    """The rows the editor's window draws now (during a search: the prompt it found)."""
    content = t.session.editor_control.create_content(80, 10)
    rows = ("".join(text for _, text, *_ in content.get_line(i)) for i in range(content.line_count))
    return "\n".join(row.rstrip() for row in rows)


def test_ctrl_r_searches_the_history(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])

    async def scenario(t):
        await t.type("deploy the staging branch" + ENTER)
        await t.idle()
        await t.type("something else" + ENTER)
        await t.idle()
        await t.type("draft")
        await t.type("\x12stag")  # Ctrl+R, then the search text
        # Each key typed shows the prompt found, as readline does; the draft stays the
        # buffer's until the match is accepted.
        await t.until(lambda: _drawn_editor(t) == "deploy the staging branch", "the preview")
        assert t.editor == "draft"
        await t.type("\x7f" * 4 + "zzz")  # nothing matches: the draft is shown again
        await t.until(lambda: _drawn_editor(t) == "draft", "the draft")
        await t.type("\x7f" * 3 + "staging")
        await t.until(lambda: _drawn_editor(t) == "deploy the staging branch", "the preview")
        await t.type(ENTER)  # accept the match into the editor
        await t.until(lambda: t.editor == "deploy the staging branch", "the match")
        await t.until(lambda: t.session.app.layout.has_focus(t.session.buffer), "the editor")

    terminal = run_terminal(agent, scenario)
    assert terminal.editor == "deploy the staging branch"


def test_ctrl_g_edits_the_draft_in_the_external_editor(tmp_path, monkeypatch):
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "edited in the editor" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("rough draft")
        await t.type("\x07")  # Ctrl+G
        await t.until(lambda: t.editor == "edited in the editor", "the edited text")

    run_terminal(agent, scenario)


def test_ctrl_g_opens_the_configured_editor_before_visual(tmp_path, monkeypatch):
    """``terminal.external_editor`` (Pi's ``externalEditor``), a command line with arguments,
    comes before ``$VISUAL``; a blank one counts as none."""
    configured = tmp_path / "configured editor.sh"
    configured.write_text('#!/bin/sh\nprintf "%s" "$1" > "$2"\n')
    configured.chmod(0o755)
    visual = tmp_path / "visual.sh"
    visual.write_text('#!/bin/sh\nprintf "from visual" > "$1"\n')
    visual.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(visual))
    for number, (editor, expected) in enumerate(
        [(f"'{configured}' --from-settings", "--from-settings"), ("  ", "from visual")]
    ):
        (tmp_path / str(number)).mkdir()
        agent = make_agent(tmp_path / str(number), [])

        async def scenario(t, expected=expected):
            await t.type("rough draft")
            await t.type("\x07")  # Ctrl+G
            await t.until(lambda: t.editor == expected, "the edited text")

        run_terminal(agent, scenario, settings=TerminalSettings(external_editor=editor))


def test_warnings_and_errors_are_said_as_pi_says_them(tmp_path):
    """A plugin's notices (the host's interface to it) and a command's are shown alike."""
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        agent.session.ui.notify("the index is almost full", "warning")
        agent.session.ui.notify("the index cannot be read", "error")
        agent.session.ui.notify("the index is saved", "info")
        await t.printed("the index is saved")
        await t.type("/copy" + ENTER)
        await t.printed("Error: No agent messages to copy yet.")

    text = run_terminal(agent, scenario).text()
    assert "Warning: the index is almost full" in text
    assert "Error: the index cannot be read" in text
    assert "Error: Error:" not in text
    assert ": the index is saved" not in text


def test_a_retry_counts_down_and_esc_cancels_it(tmp_path):
    from ctxmodes.host.options import HostOptions
    from ctxmodes.host.retry_settings import RetrySettings

    overloaded = {"stop_reason": "error", "error_message": "529 overloaded, try again"}
    options = HostOptions(retry=RetrySettings(base_delay_ms=60_000))
    agent = make_agent(tmp_path, [overloaded, {"text": "never"}], options=options)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("go" + ENTER)
        await t.printed("529 overloaded, try again — retry 1/3")
        await t.until(lambda: (t.session.status.activity or "").startswith("Retrying (1/3) in 60s"))
        seen["activity"] = t.session.status.activity
        await t.type(ESC)
        await t.until(lambda: t.session.status.retry_at is None, "the retry to end")
        await t.printed("Error: Retry failed after 1 attempts: Retry cancelled")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert seen["activity"] == "Retrying (1/3) in 60s... (escape to cancel)"
    assert "never" not in terminal.flat()


def test_esc_before_any_output_puts_the_prompt_back_with_the_queue_and_the_draft(tmp_path):
    provider = GatedStream(
        ScriptedProvider(Script.model_validate({"responses": [{"text": "never shown"}]})),
        hold_after=0,
    )
    agent = make_agent(tmp_path, [], provider=provider)

    async def scenario(t):
        await t.type("explain the parser" + ENTER)
        await t.printed(PROMPT + "explain the parser")
        await t.until(provider.held.is_set, "the request to be sent")
        await t.type("and its tests" + ENTER)
        await t.until(lambda: t.session.live.queued[0] == ("and its tests",))
        await t.type("draft")
        await t.type(ESC)
        await t.until(
            lambda: t.editor == "explain the parser\nand its tests\ndraft", "the prompt back"
        )
        provider.release.set()
        await t.idle()

    run_terminal(agent, scenario)
    # The queued steer went back to the editor, not to the model.
    assert user_texts(agent) == ["explain the parser"]


def test_esc_after_the_reply_began_leaves_the_prompt_answered(tmp_path):
    provider = GatedStream(
        ScriptedProvider(
            Script.model_validate({"responses": [{"text": "a partial answer here"}]}),
            chunk_chars=4,
        ),
        hold_after=3,
    )
    agent = make_agent(tmp_path, [], provider=provider)

    async def scenario(t):
        await t.type("explain the parser" + ENTER)
        await t.until(provider.held.is_set, "the stream to be held")
        await t.until(lambda: t.session.live.text != "", "the first delta")
        await t.type("draft")
        await t.type(ESC)
        await t.until(lambda: provider.signal.aborted, "the abort")
        provider.release.set()
        await t.printed("Operation aborted")
        await t.idle()
        assert t.editor == "draft"

    run_terminal(agent, scenario)
    assert user_texts(agent) == ["explain the parser"]


def test_finished_blocks_reach_the_scrollback_while_the_reply_streams(tmp_path):
    text = "First **paragraph** here.\n\nSecond paragraph, still being written."
    provider = GatedStream(
        ScriptedProvider(Script.model_validate({"responses": [{"text": text}]}), chunk_chars=4),
        hold_after=9,
    )
    agent = make_agent(tmp_path, [], provider=provider)
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.until(provider.held.is_set, "the stream to be held")
        await t.printed("First paragraph here.")
        seen["scrollback"] = t.text()
        seen["live"] = "".join(f[1] for f in t.session.live.fragments(t.session.width))
        provider.release.set()
        await t.printed("Second paragraph, still being written.")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    assert "Second" not in seen["scrollback"]
    assert "First" not in seen["live"]
    assert seen["live"].startswith("Second pa")
    transcript = terminal.text()
    assert transcript.count("First paragraph here.") == 1
    assert transcript.count("Second paragraph, still being written.") == 1
    assert "**" not in transcript


class TwoTextParts(Provider):
    """The scripted model, whose final message splits the streamed text into two text
    parts (as a provider does for a reply interrupted by a tool call or reasoning)."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner

    @property
    def transport(self) -> str:
        return self.inner.transport

    @property
    def info(self) -> Any:
        return self.inner.info

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        for event in self.inner.stream(request, signal):
            if isinstance(event, StreamDone):
                (block,) = event.message.content
                assert isinstance(block, TextContent)
                cut = block.text.index("Second")
                parts = [TextContent(text=block.text[:cut]), TextContent(text=block.text[cut:])]
                event = StreamDone(event.message.model_copy(update={"content": parts}))
            yield event


def test_a_reply_of_several_text_parts_is_printed_once(tmp_path):
    text = "First paragraph, streamed.\n\nSecond paragraph, at the end."
    provider = TwoTextParts(
        ScriptedProvider(Script.model_validate({"responses": [{"text": text}]}), chunk_chars=4)
    )
    agent = make_agent(tmp_path, [], provider=provider)

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.printed("Second paragraph")
        await t.idle()

    transcript = run_terminal(agent, scenario).text()
    assert transcript.count("First paragraph") == 1
    assert transcript.count("Second paragraph") == 1


def test_the_command_lines_messages_are_sent_each_after_the_reply_before_it(tmp_path):
    agent = make_agent(tmp_path, [{"text": "first reply"}, {"text": "second reply"}])
    prompts = ['<file name="/w/a.txt">\nbody\n</file>\nhi', "again"]

    async def scenario(t):
        await t.printed("second reply")
        await t.idle()

    terminal = run_terminal(agent, scenario, initial_prompts=prompts)
    assert user_texts(agent) == prompts
    text = terminal.text()
    assert text.index("first reply") < text.index(PROMPT + "again") < text.index("second reply")


def test_the_command_lines_images_go_with_its_first_message_and_show_in_the_transcript(
    tmp_path,
):
    from ctxmodes.tui.app import plain
    from ctxmodes.tui.replay import branch_blocks

    agent = make_agent(tmp_path, [{"text": "first reply"}, {"text": "second reply"}])
    png = ImageContent(mime_type="image/png", data="iVBORw0KGgo=")
    gif = ImageContent(mime_type="image/gif", data="R0lGODlh")
    prompts = ['<file name="/w/a.png"></file>\n<file name="/w/b.gif"></file>\nlook', "again"]

    seen = {}

    async def scenario(t):
        await t.printed("second reply")
        await t.idle()
        session = agent.session
        seen["users"] = [m for m in session.messages if isinstance(m, UserMessage)]
        # Replayed (after /tree, /resume, or when the session is reopened) the same way.
        blocks = branch_blocks(session.session_manager, 100)
        seen["replayed"] = "\n".join(plain(block) for block in blocks) + "\n"

    terminal = run_terminal(agent, scenario, initial_prompts=prompts, initial_images=[png, gif])
    assert [m.content for m in seen["users"]] == [
        [TextContent(text=prompts[0]), png, gif],
        [TextContent(text="again")],
    ]
    marks = "  [image image/png]\n  [image image/gif]\n"
    text = terminal.text()
    assert text.index("look\n" + marks) < text.index("first reply") < text.index(PROMPT + "again")
    assert text.count("[image") == 2
    assert "look\n" + marks in seen["replayed"]


def test_the_command_lines_messages_go_to_the_editor_when_there_is_no_model(tmp_path):
    from ctxmodes.config import Settings
    from ctxmodes.sdk import open_agent

    agent = open_agent(cwd=tmp_path, settings=Settings(), session_dir=tmp_path / "sessions")

    async def scenario(t):
        await t.printed("No model selected")
        assert t.editor == "hi\n\nagain"

    run_terminal(agent, scenario, initial_prompts=["hi", "again"])
    assert agent.session_file is None or not agent.session_file.exists()
