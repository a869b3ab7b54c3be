"""The host's queue API for modes: taking queued messages and putting them back, and holding
other plugins' turn requests until a mode has appended what must come first."""

from __future__ import annotations

import pytest
from support.host_rig import text_response

from ctxmodes.host import records
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.session.models import CustomMessage, CustomMessageEntry, MessageEntry, UserMessage


def _texts(rig) -> list[str]:
    out = []
    for entry in rig.session.session_manager.get_branch():
        if isinstance(entry, CustomMessageEntry):
            out.append(f"custom:{entry.content}")
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            out.append(f"user:{entry.message.content[0].text}")
    return out


def test_held_turn_requests_wait_and_follow_the_next_prompt(make_rig):
    rig = make_rig([text_response("one"), text_response("two")])
    hold = rig.session.hold_turns()
    with pytest.raises(SessionBusyError):
        rig.session.hold_turns()
    rig.session.send_custom_message("other", "react", trigger_turn=True)
    # Nothing ran and nothing was appended while held.
    assert not rig.of(records.AgentStarted)
    assert _texts(rig) == []
    hold.release()
    hold.release()  # a second release does nothing
    rig.session.prompt("first")
    assert _texts(rig) == ["user:first", "custom:react"]
    assert len(rig.of(records.AgentStarted)) == 1


def test_a_hold_released_without_turns_appends_at_once(make_rig):
    rig = make_rig([text_response("one")])
    hold = rig.session.hold_turns()
    rig.session.send_custom_message("other", "react", trigger_turn=True)
    rig.session.send_custom_message("other", "no turn asked", trigger_turn=False)
    hold.release(start_turns=False)
    assert _texts(rig) == ["custom:no turn asked", "custom:react"]
    assert not rig.of(records.AgentStarted)


def test_taken_messages_are_queued_again_as_they_were(make_rig):
    rig = make_rig([text_response("one")])
    session = rig.session
    session.steer("a")
    session.follow_up("b")
    session.steer("c")
    steering = session.take_queued("steer")
    assert [m.content[0].text for m in steering] == ["a", "c"]
    assert session.take_queued("steer") == []
    (follow_up,) = session.take_queued("follow_up")
    session.enqueue(follow_up, deliver_as="steer")
    for message in steering:
        session.enqueue(message, deliver_as="follow_up")
    queued = rig.of(records.QueueUpdated)[-1]
    assert (queued.steering, queued.follow_up) == (("b",), ("a", "c"))


def test_taking_the_user_s_messages_back_keeps_plugins_messages_queued() -> None:
    from ctxmodes.host.queues import MessageQueue
    from ctxmodes.session.models import CustomMessage, UserMessage

    queue = MessageQueue()
    typed = [UserMessage(content="one", timestamp=1), UserMessage(content="two", timestamp=2)]
    plugin = CustomMessage(custom_type="note", content="kept", display=True, timestamp=3)
    for message in (typed[0], plugin, typed[1]):
        queue.push(message)
    assert queue.take_user_messages() == typed
    assert queue.texts() == ("kept",)
    assert queue.take_user_messages() == []


def test_the_pending_count_is_the_users_queued_messages(make_rig):
    rig = make_rig([text_response("one")])
    session = rig.session
    assert session.pending_message_count() == 0
    session.steer("a")
    session.follow_up("b")
    session.steer("c")
    plugins_own = CustomMessage(
        custom_type="other", content="not the user's", display=True, timestamp=1
    )
    session.enqueue(plugins_own, deliver_as="follow_up")
    assert session.pending_message_count() == 3
    session.take_queued("steer")
    assert session.pending_message_count() == 1
