"""The active branch printed into the scrollback: after ``/tree``, ``/new`` and ``/resume`` the
branch that is now current is on screen, bounded to its last turns, archived windows one line
with their summary's goal; the navigator labels archived windows the same way."""

from __future__ import annotations

import orjson
from support.agents import make_agent
from support.extension_files import USAGE
from support.terminal import ENTER, run_terminal

from ctxmodes.compaction import BRANCH_SUMMARY_PREAMBLE, summary_goal
from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.app import plain
from ctxmodes.tui.replay import branch_blocks
from ctxmodes.windows.archive_line import branch_summary_line

PROMPT = "\u203a "
GOAL = "Pick the release code name"
ROLLOVER = [
    {"text": "Rolling over.", "tool_calls": [{"name": "new_context"}]},
    {"text": "Window one is open."},
    {"text": "Second answer."},
]
SUMMARIES = [f"## Goal\n{GOAL}\n\n## Progress\n- chose AMBER"]


def entries(agent) -> list[dict]:
    return [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]


def user_ids(agent) -> dict[str, str]:
    found = {}
    for entry in entries(agent):
        message = entry.get("message") or {}
        if message.get("role") == "user":
            found[message["content"][0]["text"]] = entry["id"]
    return found


def tree_agent(tmp_path):
    from ctxmodes.providers.script import Script
    from ctxmodes.providers.scripted import ScriptedProvider

    script = Script.model_validate({"responses": ROLLOVER, "summaries": SUMMARIES})
    return make_agent(tmp_path, [], mode="tree", provider=ScriptedProvider(script, chunk_chars=8))


def test_summary_goal_skips_the_preamble() -> None:
    summary = BRANCH_SUMMARY_PREAMBLE + "## Goal\n  Ship   it \n\n## Progress\n- x"
    assert summary_goal(summary) == "Ship it"
    assert summary_goal(BRANCH_SUMMARY_PREAMBLE + "Chose a name.\nMore.") == "Chose a name."
    assert summary_goal(None) == ""


async def two_turns(t) -> None:
    """The release prompt (its window rolls over), then the next step, each answered."""
    await t.type("Prepare the release" + ENTER)
    await t.printed("Window one is open.")
    await t.idle()
    await t.type("Next step" + ENTER)
    await t.printed("Second answer.")
    await t.idle()


def test_navigating_prints_the_branch_now_current(tmp_path):
    agent = tree_agent(tmp_path)

    async def scenario(t):
        await two_turns(t)
        t.transcript.clear()
        # Back into the archived window: its prompt is current again.
        target = user_ids(agent)["Prepare the release"]
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        rows = t.session.picker.rows()
        labels = ["".join(text for _, text in row.fragments) for row in rows]
        assert any(f"archived window 0 · {GOAL}" in label for label in labels), labels
        keys = [row.key for row in rows]
        t.session.picker.selected = keys.index(target)
        await t.type(ENTER)
        await t.until(lambda: t.session.picker.title.startswith("Summarize"), "the choice")
        await t.type(ENTER)  # no summary
        await t.until(lambda: "── session" in plain(t.text()), "the branch to be printed")
        await t.idle()

    terminal = run_terminal(agent, scenario)
    after = plain(terminal.text())
    replay = after.split("── session")[-1]
    assert "Window one is open." not in replay, "the branch left behind is not shown as current"
    assert "Next step" not in replay


def test_new_and_resume_print_the_session_they_open(tmp_path):
    agent = tree_agent(tmp_path)

    async def scenario(t):
        await t.type("Prepare the release" + ENTER)
        await t.printed("Window one is open.")
        await t.idle()
        first = agent.session_file
        await t.type("/new" + ENTER)
        await t.until(lambda: agent.session_file != first, "the new session")
        await t.idle()
        t.transcript.clear()
        await t.type(f"/resume {first}" + ENTER)
        await t.printed(f"window 0 archived · 4 entries · {GOAL}")
        await t.printed("Window one is open.")

    run_terminal(agent, scenario)


def test_the_replay_is_bounded_and_counts_what_it_leaves_out(tmp_path):
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        for n in range(30):
            manager.append_message({"role": "user", "content": f"question {n}", "timestamp": n})
            manager.append_message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": f"answer {n}"},
                        {"type": "toolCall", "id": f"c{n}", "name": "bash", "arguments": {}},
                    ],
                    "api": "scripted",
                    "provider": "scripted",
                    "model": "scripted",
                    "usage": USAGE,
                    "stopReason": "toolUse",
                    "timestamp": n,
                }
            )
        text = plain("\n".join(branch_blocks(manager, 80, turns=3)))
    assert text.startswith("… 54 earlier entries")
    assert [line for line in text.splitlines() if line.startswith(PROMPT)] == [
        f"{PROMPT}question {n}" for n in (27, 28, 29)
    ]
    assert text.count("→ $ ") == 3, "each tool call one line"


def test_each_prompt_stands_apart_from_the_turn_before_it_as_in_pi(tmp_path):
    """A blank line above each prompt, as it is printed and as it is replayed on reopening."""
    agent = tree_agent(tmp_path)
    terminal = run_terminal(agent, two_turns)
    with SessionManager.open(agent.session_file, read_only=True) as manager:
        replayed = plain("\n".join(branch_blocks(manager, 80)))
    for text in (plain(terminal.text()), replayed):
        lines = text.splitlines()
        prompts = [n for n, line in enumerate(lines) if line.startswith(PROMPT + "Next step")]
        assert len(prompts) == 1, text
        assert lines[prompts[0] - 1] == "", text
        assert lines[prompts[0] - 2] != "", "one blank line, not two"


def test_a_summary_that_archived_no_window_says_so(tmp_path):
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        first = manager.append_message({"role": "user", "content": "a", "timestamp": 1})
        manager.append_message({"role": "user", "content": "b", "timestamp": 2})
        summary = manager.branch_with_summary(first, BRANCH_SUMMARY_PREAMBLE + "Tried b.")
        line = branch_summary_line(manager, manager.get_entry_json(summary) or {})
    assert line == "branch summarized · 1 entry · Tried b."


def test_resuming_a_damaged_file_names_the_lines_it_skipped(tmp_path):
    """`/resume FILE` of a file with a line it cannot read: the line is skipped, as Pi
    skips it, and named in a warning, as when the session opens at start."""
    agent = make_agent(tmp_path, [{"text": "first answer"}, {"text": "second answer"}])

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.printed("first answer")
        await t.idle()
        first = agent.session_file
        with first.open("a") as damaged:
            damaged.write('{"type":"message","id":"cut-off\n')
        seen["line"] = len(first.read_text().splitlines())
        await t.type("/new" + ENTER)
        await t.until(lambda: agent.session_file != first, "the new session")
        await t.idle()
        await t.type(f"/resume {first}" + ENTER)
        await t.printed("Resumed session")
        warning = f"{first}: line {seen['line']}: not valid JSON (skipped)"
        assert warning in t.text().replace("\n", "")

    seen: dict[str, int] = {}
    run_terminal(agent, scenario)


def test_a_session_opened_says_how_often_it_was_compacted_as_pi_does(tmp_path):
    agent = make_agent(tmp_path, [])
    manager = agent.session_manager
    first = manager.append_message({"role": "user", "content": "first", "timestamp": 1})
    manager.append_compaction("one", first, 9_000)
    manager.branch(first)  # another branch's compaction counts too
    manager.append_compaction("two", first, 9_000)

    async def scenario(t):
        await t.printed("Session compacted 2 times")

    run_terminal(agent, scenario)
    (tmp_path / "plain").mkdir()
    plain_session = make_agent(tmp_path / "plain", [])
    plain_session.session_manager.append_message({"role": "user", "content": "hi", "timestamp": 1})

    async def nothing_said(t):
        await t.printed("hi")

    assert "compacted" not in run_terminal(plain_session, nothing_said).text()
