"""``/session`` beside the real Pi's, each program in a real terminal on a copy of the same
session: Pi's report word for word (messages, tokens with the cache apart, the cost per
model and what cache misses cost), then ctxmodes' own lines."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from support.beside_pi import PROGRAMS, open_terminal, wait_until_ready, write_loop_models
from support.pi_print import API
from support.usages import priced_usage

from ctxmodes.session.manager import SessionManager

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: What begins ctxmodes' editor line.
PROMPT = "\u203a"


def _session(folder: Path, project: Path) -> Path:
    """A named session where two models answered, the cache missed twice, and a tool
    was called."""
    manager = SessionManager.create(project, folder)
    spent = [
        ("m", priced_usage(2_000, 300, write=8_000)),
        ("m", priced_usage(900, 120, read=10_000)),
        ("n", priced_usage(12_500, 400)),  # another model: its prompt billed in full
        ("n", priced_usage(1_500, 80, read=4_000, write=9_000)),
    ]
    for turn, (model_id, usage) in enumerate(spent):
        manager.append_message({"role": "user", "content": f"question {turn}", "timestamp": 1})
        content: list[dict[str, object]] = [{"type": "text", "text": f"answer {turn}"}]
        if turn == 1:
            content.append(
                {"type": "toolCall", "id": "call-1", "name": "ls", "arguments": {"path": "."}}
            )
        manager.append_message(
            {
                "role": "assistant",
                "content": content,
                "api": API,
                "provider": "loop",
                "model": model_id,
                "usage": usage,
                "stopReason": "toolUse" if turn == 1 else "stop",
                "timestamp": 2,
            }
        )
        if turn == 1:
            manager.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": "call-1",
                    "toolName": "ls",
                    "content": [{"type": "text", "text": "README.md"}],
                    "isError": False,
                    "timestamp": 3,
                }
            )
    manager.append_session_info("pricing review")
    assert manager.session_file is not None
    return manager.session_file


def _report(screen: str) -> list[str]:
    """The lines of the report drawn last, from its title to where Pi's ends."""
    lines = [line.strip() for line in screen.splitlines()]
    start = len(lines) - 1 - lines[::-1].index("Session Info")
    report = []
    for line in lines[start:]:
        if line.startswith(("───", "Context", PROMPT)):
            break
        report.append(line)
    while report and not report[-1]:
        report.pop()
    return report


def test_both_report_the_same_session_in_the_same_words(tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    prices = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    # Nothing is sent: the address is never used.
    models = [{"id": "m", "cost": prices}, {"id": "n", "cost": prices}]
    write_loop_models(agent, "http://127.0.0.1:9", models)
    project = tmp_path / "p"
    project.mkdir()
    session = _session(tmp_path / "s", project)
    reports: dict[str, list[str]] = {}
    for program in PROGRAMS:
        # Each opens a copy: neither sees what the other may append.
        copy = tmp_path / program / session.name
        copy.parent.mkdir()
        shutil.copy(session, copy)
        tmux = open_terminal(program, project, agent, tmp_path, "--session", str(copy), columns=220)
        try:
            wait_until_ready(tmux)
            tmux.wait("answer 3")
            tmux.type("/session")
            time.sleep(0.3)  # the command menu, then Enter runs the command
            tmux.key("Enter")
            screen = tmux.until(lambda screen: "Total: " in screen and "Session Info" in screen)
            report = _report(screen)
            # The same lines but for the copy's path.
            reports[program] = [line.replace(str(copy), "SESSION") for line in report]
        finally:
            tmux.close()
    assert reports["pi"][:3] == ["Session Info", "", "Name: pricing review"]
    assert "File: SESSION" in reports["pi"]
    assert any(line.startswith("Cache Re-billed: $") for line in reports["pi"])
    assert any(line.startswith("loop/n: $") for line in reports["pi"])
    assert reports["ours"] == reports["pi"]
