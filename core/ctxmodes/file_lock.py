"""The lock Pi takes on a file it shares with other processes (``auth.json``,
``trust.json``): proper-lockfile's protocol, a sibling directory ``<file>.lock`` made with
``mkdir`` (atomic), whose modification time is refreshed while it is held and which counts
as abandoned once it is 30 seconds old.

It lives outside :mod:`ctxmodes.providers` so that reading a saved trust decision, which
every start of the command line may do, does not load the model machinery.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ctxmodes.errors import CtxmodesError

#: Pi's ``stale`` for the lock: an older lock directory belongs to a process that died.
LOCK_STALE_S = 30.0


@contextlib.contextmanager
def pi_lock(
    path: Path, *, timeout_s: float, busy: Callable[[str], Exception] = CtxmodesError
) -> Iterator[None]:
    """Hold ``<path>.lock`` as proper-lockfile does (see the module docstring).

    :param busy: the error raised when another process holds the lock for longer than
        ``timeout_s``.
    """
    lock = path.with_name(path.name + ".lock")
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            with contextlib.suppress(FileNotFoundError):
                if time.time() - lock.stat().st_mtime > LOCK_STALE_S:
                    # Abandoned by a process that died; proper-lockfile removes it too.
                    with contextlib.suppress(OSError):
                        lock.rmdir()
                    continue
            if time.monotonic() >= deadline:
                raise busy(
                    f"{path} is locked by another process (remove {lock} if none is running)"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
    stop = threading.Event()

    def keep_fresh() -> None:
        # While held, the lock's mtime moves on, so nobody takes it for abandoned.
        while not stop.wait(LOCK_STALE_S / 3):
            with contextlib.suppress(OSError):
                os.utime(lock)

    keeper = threading.Thread(target=keep_fresh, name="pi-file-lock", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join()
        with contextlib.suppress(OSError):
            lock.rmdir()
