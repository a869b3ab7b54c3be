"""``/tree`` while the model is still answering, judged by the real Pi in a real terminal
(tmux) on a loopback model: the tree opens at once; moving back to the first question puts
the queued message in the editor (so the question's text is not), aborts the run, whose
cut-short reply is written before the move, and the next prompt hangs where the move went.
ctxmodes' terminal, given the same replies, writes the same entries in the same order."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API, pi_agent_dir, pi_command
from support.terminal import ENTER, GatedStream, Terminal, run_terminal
from support.tmux import WAIT, Tmux
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.config import Settings
from ctxmodes.host.options import BranchSummarySettings, HostOptions
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import open_agent

pytestmark = [
    pytest.mark.slow,  # the real Pi in a real terminal
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

UP = "\x1b[A"
FIRST, SLOW, THIRD = "first answer", "a reply still being written when the tree opens", "third"


def _messages(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [entry for entry in lines if entry["type"] == "message"]


def _shape(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each message's role and stop reason, its text unless aborted (how much of the held
    reply had arrived is timing), and which earlier message it follows (``None``: none)."""
    ids = [entry["id"] for entry in entries]
    shapes = []
    for entry in entries:
        message = entry["message"]
        content = message["content"]
        text = content if isinstance(content, str) else content[0].get("text")
        aborted = message.get("stopReason") == "aborted"
        parent = ids.index(entry["parentId"]) if entry["parentId"] in ids else None
        shown = None if aborted else text
        shapes.append((message["role"], message.get("stopReason"), shown, parent))
    return shapes


def _until(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _pi_run(tmp_path: Path) -> tuple[list[tuple[Any, ...]], str]:
    """Pi's messages after the scenario, and its editor line after the move."""
    project = tmp_path / "pi-project"
    project.mkdir()
    slow = Reply(text_stream(API, SLOW), behaviour="pause", cut_after=2)
    replies = [Reply(text_stream(API, FIRST)), slow, Reply(text_stream(API, THIRD))]
    with WireServer(replies) as server:
        agent = pi_agent_dir(tmp_path, server.base_url)
        # No summary question: the move is made as soon as the entry is chosen.
        (agent / "settings.json").write_text(json.dumps({"branchSummary": {"skipPrompt": True}}))
        pi, environment = pi_command(agent, {"HOME": str(tmp_path)})
        keep = ("PI_CODING_AGENT_DIR", "PI_OFFLINE", "HOME", "PATH")
        tmux = Tmux(
            ["env", "-C", str(project), *pi, "--model", "loop/m"],
            {**{key: environment[key] for key in keep}, "TERM": "xterm-256color"},
        )
        try:
            tmux.wait("0.0%/")
            tmux.type("q1")
            # Pi refuses a prompt until its start-up is over ("Startup is still in progress").
            deadline = time.monotonic() + WAIT
            while not server.requests and time.monotonic() < deadline:
                tmux.key("Enter")
                _until(lambda: bool(server.requests) or "still in progress" in tmux.screen(), "")
                time.sleep(0.3)
            tmux.wait(FIRST)
            tmux.type("q2")
            tmux.key("Enter")
            _until(lambda: len(server.requests) == 2, "the second request")
            tmux.wait("Working")
            tmux.type("steer me")
            tmux.key("Enter")
            tmux.wait("steer me")
            tmux.type("/tree")
            tmux.key("Enter")
            tmux.wait("Session Tree")
            tmux.key("Up", "Up", "Enter")  # from q2, past the first answer, to q1
            screen = tmux.wait("Navigated to selected point")
            editor = screen
            tmux.key("C-u")  # the queued message goes; a new prompt from the moved leaf
            tmux.type("q3")
            tmux.key("Enter")
            tmux.wait(THIRD)
        finally:
            tmux.close()
    [session] = (tmp_path / "pi-agent" / "sessions").rglob("*.jsonl")
    return _shape(_messages(session)), editor


def _our_run(tmp_path: Path) -> tuple[list[tuple[Any, ...]], str]:
    (tmp_path / "ours").mkdir()
    script = {"responses": [{"text": FIRST}, {"text": SLOW}, {"text": THIRD}]}
    scripted = ScriptedProvider(Script.model_validate(script), chunk_chars=4)
    provider = GatedStream(scripted, hold_after=1_000_000, purpose="turn")
    agent = open_agent(
        cwd=tmp_path / "ours",
        settings=Settings(mode="off"),
        provider=provider,
        session_dir=tmp_path / "ours" / "sessions",
        options=HostOptions(branch_summary=BranchSummarySettings(skip_prompt=True)),
    )
    agent.prompt("q1")
    provider.hold_after = 3
    seen: dict[str, Any] = {}

    async def scenario(t: Terminal) -> None:
        await t.type("q2" + ENTER)
        await t.until(provider.held.is_set, "the reply to be held")
        await t.type("steer me" + ENTER)
        await t.until(lambda: t.session.live.queued[0] == ("steer me",), "the queue")
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        await t.type(UP + UP + ENTER)
        await t.until(lambda: provider.signal is not None and provider.signal.aborted, "abort")
        provider.release.set()
        await t.printed("Navigated to selected point")
        await t.idle()
        seen["editor"] = t.editor
        await t.type("\x15q3" + ENTER)  # Ctrl+U empties the editor first
        await t.printed(THIRD)
        await t.idle()
        seen["file"] = t.agent.session_file

    run_terminal(agent, scenario)
    return _shape(_messages(seen["file"])), seen["editor"]


@pytest.mark.pi
def test_tree_during_a_reply_writes_what_pi_writes(tmp_path: Path) -> None:
    theirs, pi_screen = _pi_run(tmp_path)
    ours, our_editor = _our_run(tmp_path)
    assert ours == theirs
    assert theirs == [
        ("user", None, "q1", None),
        ("assistant", "stop", FIRST, 0),
        ("user", None, "q2", 1),
        ("assistant", "aborted", None, 2),
        ("user", None, "q3", None),
        ("assistant", "stop", THIRD, 4),
    ]
    assert our_editor == "steer me"
    # Pi's editor holds the queued message after the move.
    assert "steer me" in pi_screen.split("Navigated to selected point")[-1]
