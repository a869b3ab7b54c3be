"""Pausing Python's cyclic garbage collector around work that makes no reference cycles.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection while the block runs; the collector is left as it was found.

    For work that builds many objects and no cycles (decoded JSON, say): the objects it makes
    set collections off, and each full pass walks everything the process holds, which can
    cost more than the work itself."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
