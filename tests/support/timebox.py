"""Calls that must finish: a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def bounded(call: Callable[[], T], seconds: float) -> T:
    """``call()``'s result (or exception), failing instead of hanging after ``seconds``."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed back to the calling thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise AssertionError(f"did not finish within {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
