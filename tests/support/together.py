"""Starting several things at once, as several service processes start on one database."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def start_together(start: Callable[[], T], count: int) -> tuple[list[T], list[Exception]]:
    """What ``count`` threads calling ``start`` at once returned, and what they raised."""
    started: list[T] = []
    errors: list[Exception] = []

    def run() -> None:
        try:
            started.append(start())
        except Exception as error:  # collected for the caller to assert on
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return started, errors
