"""Request deadlines on the one watcher thread: each fires once, at its time and in order,
and a cancelled one never fires."""

from __future__ import annotations

import threading
import time

from ctxmodes.providers import deadlines


def test_deadlines_fire_in_time_order_whatever_order_they_were_set_in() -> None:
    fired: list[str] = []
    done = threading.Event()
    deadlines.after(0.3, lambda: (fired.append("late"), done.set()))
    deadlines.after(0.1, lambda: fired.append("early"))
    deadlines.after(0.2, lambda: fired.append("middle"))
    assert done.wait(5)
    assert fired == ["early", "middle", "late"]


def test_a_cancelled_deadline_never_fires() -> None:
    fired: list[str] = []
    done = threading.Event()
    cancelled = deadlines.after(0.05, lambda: fired.append("cancelled"))
    deadlines.after(0.15, done.set)
    cancelled.cancel()
    assert done.wait(5)
    assert fired == []


def test_a_deadline_fires_no_earlier_than_asked() -> None:
    fired = threading.Event()
    started = time.monotonic()
    deadlines.after(0.1, fired.set)
    assert fired.wait(5)
    assert time.monotonic() - started >= 0.1
