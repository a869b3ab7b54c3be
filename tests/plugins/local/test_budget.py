"""The window budget in Local: ``get_context_remaining``, the one reminder, the forced
fallback, and both remembered across a resume, from scripted usage and context windows."""

from __future__ import annotations

from support.local_rig import call, developer_texts, markers, record_kinds, text, tool_results, used

from ctxmodes.session.models import TextContent
from ctxmodes.windows.budget import reminder_threshold, usable_context_window

WINDOW = 40_000
USABLE = usable_context_window(WINDOW)
THRESHOLD = reminder_threshold(WINDOW)
#: The smallest context that leaves the reminder threshold or less.
REMINDED_AT = USABLE - THRESHOLD


def test_get_context_remaining_reports_the_usable_window(local) -> None:
    h = local([call("get_context_remaining") | used(12_000), text("fine")], context_window=272_000)
    h.prompt("how much room is left?")
    (window,) = markers(h)
    (result,) = tool_results(h, "get_context_remaining")
    assert result.content == [
        TextContent(text="You have 243616 tokens left in this context window.")
    ]
    assert result.details == {
        "remainingTokens": 243_616,
        "windowId": window.details["contextManagement"]["currentWindowId"],
        "contextWindow": 255_616,
    }


def test_one_reminder_once_the_threshold_is_reached(local) -> None:
    h = local(
        [
            text("still roomy") | used(REMINDED_AT - 1),
            text("getting tight") | used(REMINDED_AT),
            text("tighter") | used(REMINDED_AT + 500),
        ],
        context_window=WINDOW,
    )
    h.prompt("one")
    assert markers(h, "reminder") == []
    h.prompt("two")
    h.prompt("three")
    (window,) = markers(h, "window")
    (reminder,) = markers(h, "reminder")
    details = reminder.details["contextManagement"]
    identity = ("firstWindowId", "currentWindowId", "windowNumber")
    assert [details[k] for k in identity] == [
        window.details["contextManagement"][k] for k in identity
    ]
    assert f"Only {THRESHOLD} tokens are left" in reminder.content
    # The reminder starts no turn: each prompt made exactly one request.
    assert len(h.requests()) == 3
    assert developer_texts(h.requests()[-1]) == [window.content, reminder.content]


def test_the_fallback_at_zero_starts_a_turn_once(local) -> None:
    h = local(
        [
            text("the window is full") | used(USABLE),
            text("checkpointing as told") | used(100),
            text("full again") | used(USABLE + 10),
        ],
        context_window=WINDOW,
    )
    h.prompt("fill it")
    (fallback,) = markers(h, "fallback")
    assert markers(h, "reminder") == [], "the fallback counts as the window's reminder"
    assert record_kinds(h, "AgentStarted", "ProviderRequested", "AgentSettled") == [
        "AgentStarted",
        "ProviderRequested",
        "ProviderRequested",
        "AgentSettled",
    ]
    assert developer_texts(h.requests()[-1])[-1] == fallback.content
    h.prompt("and again")
    assert len(markers(h, "fallback")) == 1
    assert len(h.requests()) == 3


def test_reminder_and_fallback_are_not_repeated_after_a_resume(local, reopen) -> None:
    first = local(
        [text("tight") | used(REMINDED_AT), text("full") | used(USABLE), text("noted")],
        context_window=WINDOW,
    )
    first.prompt("one")
    first.prompt("two")
    path = first.manager.session_file
    assert len(markers(first, "reminder")) == len(markers(first, "fallback")) == 1
    first.close()

    second = reopen(
        path,
        [text("tight again") | used(REMINDED_AT + 1), text("full again") | used(USABLE)],
        context_window=WINDOW,
    )
    second.prompt("three")
    second.prompt("four")
    assert len(markers(second, "reminder")) == len(markers(second, "fallback")) == 1
    assert len(second.requests()) == 2, "no fallback turn in a window that already had one"
