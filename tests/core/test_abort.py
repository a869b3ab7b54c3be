from __future__ import annotations

import threading

import pytest

from ctxmodes.abort import AbortController, AbortedError
from ctxmodes.errors import CtxmodesError


def test_fresh_signal_is_not_aborted():
    signal = AbortController().signal
    assert not signal.aborted
    assert signal.reason is None
    signal.raise_if_aborted()
    assert signal.wait(0) is False


def test_abort_sets_reason_and_raises():
    controller = AbortController()
    controller.abort("user pressed escape")
    signal = controller.signal
    assert signal.aborted
    assert signal.reason == "user pressed escape"
    with pytest.raises(AbortedError, match="user pressed escape"):
        signal.raise_if_aborted()
    assert issubclass(AbortedError, CtxmodesError)


def test_second_abort_keeps_first_reason():
    controller = AbortController()
    controller.abort("first")
    controller.abort("second")
    assert controller.signal.reason == "first"


def test_callbacks_run_once_on_abort():
    controller = AbortController()
    calls: list[str] = []
    controller.signal.add_callback(lambda: calls.append("a"))
    controller.signal.add_callback(lambda: calls.append("b"))
    controller.abort()
    controller.abort()
    assert calls == ["a", "b"]


def test_callback_added_after_abort_runs_immediately():
    controller = AbortController()
    controller.abort()
    calls: list[int] = []
    remove = controller.signal.add_callback(lambda: calls.append(1))
    assert calls == [1]
    remove()  # harmless


def test_removed_callback_does_not_run():
    controller = AbortController()
    calls: list[int] = []
    remove = controller.signal.add_callback(lambda: calls.append(1))
    remove()
    remove()
    controller.abort()
    assert calls == []


def test_failing_callback_does_not_stop_the_others(caplog):
    controller = AbortController()
    calls: list[int] = []

    def broken() -> None:
        raise RuntimeError("boom")

    controller.signal.add_callback(broken)
    controller.signal.add_callback(lambda: calls.append(1))
    controller.abort()
    assert calls == [1]
    assert "boom" in caplog.text


def test_abort_from_another_thread_wakes_waiter():
    controller = AbortController()
    timer = threading.Timer(0.05, controller.abort, args=("timer",))
    timer.start()
    assert controller.signal.wait(5) is True
    assert controller.signal.reason == "timer"
    timer.join()
