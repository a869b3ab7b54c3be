"""The line shown before a session switches modes says what the switch really changes: for every
ordered pair of built-in modes, on sessions with 0, 1 and 2 finished windows, the next request
after the confirmed switch is checked against the line (the scripted model presented as Codex,
so that Remote runs too)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.mode_switch import BUILT_IN_MODES, every_mode_harness

from ctxmodes.testing.harness import HostHarness
from ctxmodes.windows import count_branch_windows

CASES = [
    (start, target, finished)
    for start in BUILT_IN_MODES
    for target in BUILT_IN_MODES
    if target != start
    for finished in ((0,) if start == "off" else (0, 1, 2))
]


def _harness(directory: Path, start: str, finished: int) -> HostHarness:
    responses: list[dict[str, object]] = []
    for number in range(finished):
        responses += [{"tool_calls": [{"name": "new_context"}]}, {"text": f"answer {number}"}]
    responses += [{"text": f"answer {finished}"}] + [{"text": "after the switch"}] * 2
    summaries = [f"summary of window {number}" for number in range(finished)]
    return every_mode_harness(directory, start, {"responses": responses, "summaries": summaries})


def _sent(h: HostHarness) -> str:
    (last, *_) = reversed(h.requests())
    return json.dumps([message.model_dump(mode="json") for message in last.messages])


@pytest.mark.parametrize(("start", "target", "finished"), CASES)
def test_the_line_says_what_the_next_request_shows(
    start: str, target: str, finished: int, tmp_path: Path
) -> None:
    h = _harness(tmp_path, start, finished)
    try:
        for number in range(finished + 1):
            h.prompt(f"question {number}")
        windows_before = count_branch_windows(h.manager)
        h.ui.confirm_answer = True
        h.session.submit(f"/mode {target}")
        (line,) = [text for _, text in h.ui.notifications if "switching this session" in text]
        said = line.split(f"switching this session from {start} to {target}: ", 1)[1]
        h.prompt("next")
        sent = _sent(h)
        assert h.session.mode_name == target
        windows_after = count_branch_windows(h.manager)
    finally:
        h.close()
    first_question_sent = '"question 0"' in sent
    if start == "off":
        assert not first_question_sent
        assert said.startswith("the conversation so far is no longer sent to the model; ")
        return
    summaries_sent = "summary of window 0" in sent
    if target == "off":
        if not finished:
            assert "window markers stop being managed" in said
        if start == "tree":
            # Archived windows stay on their side branches; only the current one is sent.
            assert first_question_sent == (finished == 0)
            assert summaries_sent == (finished > 0)
            assert (f"{finished} archived summar" in said) == summaries_sent
            assert ("re-enter" in said) == summaries_sent
        else:
            assert first_question_sent
            assert (f"{finished} earlier window" in said) == (finished > 0)
            assert ("sent to the model again" in said) == (finished > 0)
        return
    # A windowed target keeps the markers and sends only the latest window.
    assert first_question_sent == (finished == 0)
    assert not summaries_sent
    assert windows_after == windows_before, "the current window goes on"
    assert re.search(r"window markers(, history)?( and notes)? carry over", said)
    for false_claim in ("stop being managed", "sent to the model again", "re-enter"):
        assert false_claim not in said
    if finished and start == "tree":
        summaries = "its summary stays" if target == "local" else "archived summary stays"
        if finished > 1:
            summaries = (
                f"{finished} archived summaries stay"
                if target == "remote"
                else ("their summaries stay")
            )
        assert f"{summaries} out of the context" in said
    assert ("earlier windows stay out of the context" in said) == (finished > 0 and start != "tree")
    remote_reach = "history and notes come from the Remote service, not this file"
    assert (remote_reach in said) == (target == "remote")
    out_of_reach = "the history and notes kept by the Remote service are out of reach"
    assert (out_of_reach in said) == (start == "remote")


def test_an_off_session_with_markers_is_told_what_falls_out(tmp_path: Path) -> None:
    h = _harness(tmp_path, "local", 1)
    try:
        h.prompt("question 0")
        h.prompt("question 1")
        h.ui.confirm_answer = True
        h.session.submit("/mode off")
        h.prompt("asked in off")
        assert '"question 0"' in _sent(h), "Off sends the whole branch"
        h.ui.notifications.clear()
        h.session.submit("/mode local")
        (line,) = [text for _, text in h.ui.notifications if "switching this session" in text]
        h.prompt("next")
        sent = _sent(h)
    finally:
        h.close()
    assert "from off to local: messages before the latest window marker are no longer sent" in line
    assert '"question 0"' not in sent
    assert '"question 1"' in sent
    assert '"asked in off"' in sent
