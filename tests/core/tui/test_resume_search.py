"""What the resume picker says of a ``re:`` search it could not finish: a session the
pattern is too slow in is left out and the line under the title says how many were; a
pattern too large to compile is refused, and the line says so. The keys' hint line stays."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from ctxmodes.session import UserMessage
from ctxmodes.session.manager import SessionManager
from ctxmodes.tui import resume as resume_module
from ctxmodes.tui.resume import ResumePicker
from ctxmodes.tui.session_search import MAX_PATTERN_STEPS, SearchBudget, filter_and_sort


def make_session(sessions: Path, cwd: Path, text: str) -> Path:
    manager = SessionManager.create(cwd, sessions)
    manager.append_message(UserMessage(content=text, timestamp=1))
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


@pytest.fixture
def resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ResumePicker:
    """Three sessions, one of them a long run of ``a`` that ``(a|a)+!`` backtracks over
    for longer than anyone would wait, their files read whole. The search's total budget is
    one no load of the machine can spend, so that only the one session's limit decides."""
    budget = SearchBudget(per_session=0.2, total=600)
    monkeypatch.setattr(resume_module, "filter_and_sort", partial(filter_and_sort, budget=budget))
    directory = tmp_path / "sessions"
    # "!" is in no session's id or folder, which are searched too ("ab" can be in an id).
    for text in ("a" * 40, "one a!", "two aa!"):
        make_session(directory, tmp_path, text)
    picker = ResumePicker(directory, lambda path: None)
    picker.join_load(30)
    return picker


def lines(resume: ResumePicker) -> list[str]:
    drawn = "".join(text for _, text in resume.picker.fragments(200))
    return drawn.split("\n")


def listed(resume: ResumePicker) -> list[str]:
    return sorted(head.first_message for head in resume.heads if head.path in keys(resume))


def keys(resume: ResumePicker) -> list[Path]:
    return [row.key for row in resume.picker.rows()]


def test_a_pattern_too_slow_in_a_session_leaves_it_out_and_says_so(
    resume: ResumePicker,
) -> None:
    hints = lines(resume)[1:3]
    resume.picker.type("re:(a|a)+!")
    assert listed(resume) == ["one a!", "two aa!"]
    said, keys_line = lines(resume)[1:3]
    assert "too slow" in said
    assert "1 session" in said
    assert "left out" in said
    assert keys_line == hints[1]  # the keys are still named
    # A pattern that finishes everywhere: the search's forms are hinted again.
    for _ in "(a|a)+!":
        resume.picker.backspace()
    resume.picker.type("a+!")
    assert listed(resume) == ["one a!", "two aa!"]
    assert lines(resume)[1:3] == hints


def test_a_pattern_too_large_to_compile_is_refused_and_the_picker_says_why(
    resume: ResumePicker,
) -> None:
    resume.picker.type("re:(a{1000}){1000}")
    assert keys(resume) == []
    said = lines(resume)[1]
    assert "too large" in said
    assert f"{MAX_PATTERN_STEPS:,}" in said


def test_an_invalid_pattern_lists_nothing_and_says_nothing_as_pi_s_does(
    resume: ResumePicker,
) -> None:
    hints = lines(resume)[1:3]
    resume.picker.type("re:(a")
    assert keys(resume) == []
    assert lines(resume)[1:3] == hints
