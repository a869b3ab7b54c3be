"""The footer fitted to the terminal: every part of it stays readable at any width."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from ctxmodes.sdk.context_state import ContextState
from ctxmodes.tui.footer import FooterState, footer_lines
from ctxmodes.tui.text_wrap import text_cells

STATE = FooterState(
    cwd=Path("/srv/projects/billing-service"),
    branch="main",
    session_name="release 2.4",
    model="anthropic/claude-sonnet-4-5",
    mode="tree",
    thinking="high",
    context=ContextState(window=3, used_tokens=40_000, usable_tokens=183_616),
    token_stats="↑41k ↓2.3k",
    cost=0.42,
    subscription=False,
    statuses={"lint": "lint: 2 warnings"},
)
PARTS = [
    "anthropic/claude-sonnet-4-5 (high)",
    "tree",
    "window 3",
    "143.6k / 183.6k left",
    "↑41k ↓2.3k $0.420",
    "lint: 2 warnings",
    "Retrying (1/3) in 5s... (escape to cancel)",
]


def shown(width: int) -> list[str]:
    lines = footer_lines(STATE).with_part(("class:footer.activity", PARTS[-1]))
    return "".join(text for _, text in lines.fragments(width)).split("\n")


def test_a_wide_terminal_shows_two_lines() -> None:
    assert (
        shown(0)
        == shown(400)
        == [
            "/srv/projects/billing-service (main) • release 2.4",
            " • ".join(PARTS),
        ]
    )


@pytest.mark.parametrize("width", [44, 60, 80, 100])
def test_a_narrow_terminal_goes_on_between_parts_and_loses_none(width: int) -> None:
    lines = shown(width)
    assert all(text_cells(line) <= width for line in lines), lines
    # Every part whole, in order, each line starting with one (never with a separator).
    assert " • ".join(lines[1:]).split(" • ") == PARTS
    assert len(lines) > 2
    # A line goes on only when its next part would not fit.
    for line, after in itertools.pairwise(lines[1:]):
        assert text_cells(line) + len(" • ") + text_cells(after.split(" • ")[0]) > width


def test_what_is_wider_than_the_terminal_alone_is_cut_with_dots() -> None:
    lines = shown(20)
    assert lines[0] == "/srv/projects/bil..."  # as Pi cuts its footer's folder line
    assert "Retrying (1/3) in..." in lines
    assert "anthropic/claude-..." in lines
    assert all(text_cells(line) <= 20 for line in lines), lines


def test_a_status_text_stays_on_one_line_as_pis_footer_puts_it() -> None:
    state = dataclasses.replace(
        STATE, statuses={"a": " build:\n\t3  failed\r\n", "b": "\n \t", "c": "ok"}
    )
    lines = "".join(text for _, text in footer_lines(state).fragments(0)).split("\n")
    assert lines[1].endswith(" • ↑41k ↓2.3k $0.420 • build: 3 failed • ok")


def test_the_folder_line_names_the_branch_before_the_session_name_as_pis_does() -> None:
    def first(**changes: object) -> str:
        state = dataclasses.replace(STATE, **changes)  # type: ignore[arg-type]
        return footer_lines(state).first[1]

    assert first() == "/srv/projects/billing-service (main) • release 2.4"
    assert first(branch="detached", session_name=None) == "/srv/projects/billing-service (detached)"
    assert first(branch=None, session_name=None) == "/srv/projects/billing-service"


def usage_part(**changes: object) -> tuple[str, str] | None:
    """The part after the tokens left (a status text's, when the usage has none)."""
    state = dataclasses.replace(STATE, statuses={}, **changes)  # type: ignore[arg-type]
    parts = footer_lines(state).parts
    return parts[4] if len(parts) > 4 else None


def test_a_free_model_shows_its_tokens_and_no_cost_as_pis_footer_does() -> None:
    assert usage_part(cost=0.0) == ("class:footer", "↑41k ↓2.3k")
    assert usage_part(token_stats="", cost=0.0) is None
    assert usage_part(token_stats="", cost=0.01) == ("class:footer", "$0.010")
    # Exactly halfway: ``toFixed(3)`` rounds up, as Pi's footer writes it.
    assert usage_part(token_stats="", cost=0.0625) == ("class:footer", "$0.063")


def test_a_subscription_s_cost_is_marked_as_pi_marks_it() -> None:
    assert usage_part(subscription=True) == ("class:footer", "↑41k ↓2.3k $0.420 (sub)")
    # A subscription's calls are marked even while they have cost nothing yet.
    assert usage_part(token_stats="", cost=0.0, subscription=True) == (
        "class:footer",
        "$0.000 (sub)",
    )
