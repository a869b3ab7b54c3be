"""The lifecycle's hand-off: work a non-driving thread starts goes to the hand-off, counts as
deferred until taken, and then drives the session on the thread that runs it."""

from __future__ import annotations

import threading

from ctxmodes.host.lifecycle import Lifecycle


def test_work_is_handed_off_and_drives_on_the_taking_thread():
    life = Lifecycle()
    handed: list = []
    life.set_handoff(handed.append)
    ran_on: list[int] = []
    driving: list[bool] = []

    def start() -> None:
        ran_on.append(threading.get_ident())
        driving.append(life.is_driver())

    assert life.hands_off()
    life.run_or_defer(start)
    assert ran_on == []  # not on the caller's thread
    assert life.has_deferred()
    assert not life.wait_until_released(timeout=0)
    worker = threading.Thread(target=handed[0])
    worker.start()
    worker.join(10)
    assert ran_on == [worker.ident]
    assert driving == [True]
    assert not life.has_deferred()
    assert life.wait_until_released(timeout=0)


def test_a_driver_present_still_gets_the_work_deferred():
    life = Lifecycle()
    handed: list = []
    life.set_handoff(handed.append)
    order: list[str] = []
    assert life.try_acquire()
    assert not life.hands_off()
    life.run_or_defer(lambda: order.append("deferred"))
    assert handed == []
    order.append("driver work")
    life.release()
    assert order == ["driver work", "deferred"]


def test_without_a_handoff_the_caller_drives():
    life = Lifecycle()
    ran: list[bool] = []
    life.run_or_defer(lambda: ran.append(life.is_driver()))
    assert ran == [True]
    assert not life.hands_off()
