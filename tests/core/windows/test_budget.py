import pytest

from ctxmodes.windows.budget import (
    CONTEXT_WINDOW_FALLBACK_BUFFER,
    CONTEXT_WINDOW_REMINDER_THRESHOLD,
    BudgetTracker,
    context_remaining,
    remaining_tokens,
    usable_context_window,
)
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import parse_marker_details


def test_constants():
    assert CONTEXT_WINDOW_FALLBACK_BUFFER == 16_384
    assert CONTEXT_WINDOW_REMINDER_THRESHOLD == 6_144


def test_reference_example():
    # 12,000 tokens used of a 272,000-token window.
    result = context_remaining(272_000, 12_000, "w1")
    assert result.dump() == {
        "remainingTokens": 243_616,
        "windowId": "w1",
        "contextWindow": 255_616,
    }
    assert result.text() == "You have 243616 tokens left in this context window."


def test_unknown_usage():
    result = context_remaining(272_000, None, None)
    assert result.dump() == {"contextWindow": 255_616}
    assert result.text() == "You have unknown tokens left in this context window."


def test_fractional_usage_rounds_down():
    assert remaining_tokens(272_000, 12_000.5) == 243_615


def test_limits_never_go_negative():
    assert usable_context_window(None) == 0
    assert usable_context_window(10_000) == 0
    assert remaining_tokens(100_000, 200_000) == 0


def _marker_details(marker):
    return parse_marker_details(marker.details.dump()).context_management


def test_one_reminder_then_one_fallback_per_window():
    tracker = BudgetTracker()
    window = WindowIdentity.first("w0")
    assert tracker.check(window, CONTEXT_WINDOW_REMINDER_THRESHOLD + 1) is None
    reminder = tracker.check(window, CONTEXT_WINDOW_REMINDER_THRESHOLD)
    assert reminder is not None
    assert reminder.kind == "reminder"
    assert tracker.check(window, 100) is None
    fallback = tracker.check(window, 0)
    assert fallback is not None
    assert fallback.kind == "fallback"
    assert tracker.check(window, 0) is None
    assert tracker.check(window, 10) is None


def test_fallback_first_suppresses_later_reminder():
    tracker = BudgetTracker()
    window = WindowIdentity.first("w0")
    assert tracker.check(window, 0).kind == "fallback"
    assert tracker.check(window, 3_000) is None


def test_next_window_gets_its_own_reminder():
    tracker = BudgetTracker()
    first = WindowIdentity.first("w0")
    assert tracker.check(first, 10) is not None
    second = first.advance("w1")
    assert tracker.check(second, 10).kind == "reminder"


def test_unknown_remaining_or_window_sends_nothing():
    tracker = BudgetTracker()
    assert tracker.check(None, 0) is None
    assert tracker.check(WindowIdentity.first("w0"), None) is None


@pytest.mark.parametrize("kind", ["reminder", "fallback"])
def test_restored_markers_prevent_repeats_after_resume(kind):
    window = WindowIdentity.first("w0")
    before = BudgetTracker()
    marker = before.check(window, 0 if kind == "fallback" else 10)
    assert marker.kind == kind

    resumed = BudgetTracker()
    resumed.observe_marker(_marker_details(marker))
    assert resumed.was_reminded("w0")
    assert resumed.was_exhausted("w0") is (kind == "fallback")
    assert resumed.check(window, 10) is None
    if kind == "fallback":
        assert resumed.check(window, 0) is None
    else:
        assert resumed.check(window, 0).kind == "fallback"


def test_window_markers_do_not_count_as_reminders():
    from ctxmodes.windows.marker import window_marker

    tracker = BudgetTracker()
    window = WindowIdentity.first("w0")
    tracker.observe_marker(_marker_details(window_marker(window)))
    assert not tracker.was_reminded("w0")
