"""Options changed while the host runs (Pi's ``setSteeringMode``, ``setFollowUpMode``,
``setAutoCompactionEnabled``, ``setAutoRetryEnabled``): the current session follows them at
once, the sessions that replace it start with them, and no settings file is written."""

from __future__ import annotations

import pytest
from support.host_rig import text_response

from ctxmodes.compaction import CompactionSettings
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.session.models import UserMessage


def _user_texts(request) -> list[str]:
    return [m.content[0].text for m in request.messages if isinstance(m, UserMessage)]


@pytest.mark.parametrize(("mode", "requests"), [("one-at-a-time", 2), ("all", 1)])
def test_the_steering_queue_delivers_by_the_mode_last_set(make_rig, mode, requests) -> None:
    rig = make_rig([text_response("one"), text_response("two")])
    rig.host.change_options(lambda options: options.with_queue_mode("steer", "all"))
    rig.host.change_options(lambda options: options.with_queue_mode("steer", mode))
    rig.session.steer("a")
    rig.session.steer("b")
    rig.session.prompt("go")
    sent = rig.requests()
    assert len(sent) == requests
    assert _user_texts(sent[-1]) == ["go", "a", "b"]


def test_the_follow_up_queue_delivers_all_at_once_after_the_change(make_rig) -> None:
    rig = make_rig([text_response("one"), text_response("two"), text_response("three")])
    rig.host.change_options(lambda options: options.with_queue_mode("follow_up", "all"))
    rig.session.follow_up("a")
    rig.session.follow_up("b")
    rig.session.prompt("go")
    assert [_user_texts(request) for request in rig.requests()] == [
        ["go"],
        ["go", "a", "b"],
    ]


def test_automatic_compaction_turned_off_does_not_compact(make_rig) -> None:
    options = HostOptions(compaction=CompactionSettings(reserve_tokens=1000, keep_recent_tokens=10))
    rig = make_rig(
        [text_response("big answer " * 10, usage={"totalTokens": 1500})] * 2,
        summaries=["auto summary"],
        options=options,
        context_window=2000,
    )
    rig.host.change_options(lambda options: options.with_auto_compaction(False))
    rig.session.prompt("question " * 10)
    assert not rig.of(records.CompactionStarted)
    rig.host.change_options(lambda options: options.with_auto_compaction(True))
    rig.session.prompt("again")
    assert rig.of(records.CompactionEnded)[0].trigger == "threshold"


def test_automatic_retry_turned_off_lets_a_transient_failure_stand(make_rig) -> None:
    failure = {"stop_reason": "error", "error_message": "503 Service Unavailable"}
    rig = make_rig(
        [failure, failure, text_response("done")],
        options=HostOptions(retry=RetrySettings(base_delay_ms=1)),
    )
    rig.host.change_options(lambda options: options.with_auto_retry(False))
    rig.session.prompt("go")
    assert not rig.of(records.AutoRetryStarted)
    assert rig.of(records.AgentEnded)[-1].will_retry is False
    rig.host.change_options(lambda options: options.with_auto_retry(True))
    rig.session.prompt("again")
    assert [started.attempt for started in rig.of(records.AutoRetryStarted)] == [1]


def test_a_replacing_session_starts_with_the_changed_options(make_rig, tmp_path) -> None:
    rig = make_rig([])
    host = rig.host
    host.change_options(lambda options: options.with_queue_mode("steer", "all"))
    host.change_options(lambda options: options.with_auto_compaction(False))
    host.change_options(lambda options: options.with_auto_retry(False))
    host.new_session()
    options = rig.session.options
    assert (options.steering_mode, options.follow_up_mode) == ("all", "one-at-a-time")
    assert (options.compaction.enabled, options.retry.enabled) == (False, False)
    # Only the switches changed: the other compaction and retry settings stay.
    assert options.compaction.reserve_tokens == HostOptions().compaction.reserve_tokens
    assert options.retry.max_retries == HostOptions().retry.max_retries
    assert not list(tmp_path.rglob("settings.json"))
