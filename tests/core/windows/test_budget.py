import pytest

from ctxmodes.sdk.context_state import context_state
from ctxmodes.tui.footer import tokens_text
from ctxmodes.windows.budget import (
    CONTEXT_WINDOW_FALLBACK_BUFFER,
    CONTEXT_WINDOW_REMINDER_THRESHOLD,
    BudgetTracker,
    context_remaining,
    remaining_tokens,
    reminder_threshold,
    reserve_tokens,
    small_window_warning,
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
    assert usable_context_window(0) == 0
    assert remaining_tokens(100_000, 200_000) == 0


@pytest.mark.parametrize(
    ("window", "reserve", "usable", "threshold"),
    [
        (272_000, 16_384, 255_616, 6_144),  # Codex's figures where they apply
        (65_536, 16_384, 49_152, 6_144),
        (32_768, 8_192, 24_576, 6_144),
        (32_000, 8_000, 24_000, 6_000),
        (8_192, 2_048, 6_144, 1_536),
        (4_096, 1_024, 3_072, 768),
    ],
)
def test_small_windows_scale_the_reserve_and_the_reminder(window, reserve, usable, threshold):
    assert reserve_tokens(window) == reserve
    assert usable_context_window(window) == usable
    assert reminder_threshold(window) == threshold


def test_an_8k_window_is_reminded_before_it_is_used_up():
    tracker = BudgetTracker()
    window = WindowIdentity.first("w0")
    threshold = reminder_threshold(8_192)
    assert tracker.check(window, remaining_tokens(8_192, 4_000), threshold) is None
    reminder = tracker.check(window, remaining_tokens(8_192, 4_700), threshold)
    assert reminder is not None
    assert reminder.kind == "reminder"
    assert tracker.check(window, remaining_tokens(8_192, 6_144), threshold).kind == "fallback"


def test_small_window_warning_names_the_window_and_mode():
    assert small_window_warning(32_768, "local") is None
    assert small_window_warning(None, "local") is None
    warning = small_window_warning(8_192, "tree")
    assert warning is not None
    assert "8,192" in warning
    assert "tree" in warning
    assert "6,144" in warning


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


def test_the_footer_knows_an_8k_models_room() -> None:
    state = context_state([], 8_192)
    assert state.usable_tokens == 6_144
    assert tokens_text(state) == "? / 6.1k left"
