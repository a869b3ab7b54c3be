"""Replacing a file whole: readers see the old file or the new one, never part of either.

The new text goes to a temporary file beside the target, which is renamed over the target
when it is complete and removed when writing it fails, so a crash, a full disk or an error
halfway leaves the old file as it was. A target that is a symbolic link has the file it
points to replaced, and the link is kept, as writing through the link would.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


@contextlib.contextmanager
def replacing(target: Path, *, mode: int | None = None, durable: bool = False) -> Iterator[TextIO]:
    """A text file (UTF-8) that replaces ``target`` when the block ends without an error.

    ``mode`` gives the new file's permissions; without it a file that exists keeps its own,
    and a new one is created as ``open`` creates a file (the umask applies). ``durable``
    writes the text to the disk before the rename, for a file whose loss after the rename
    would lose a decision or a credential.
    """
    target = target.resolve()
    try:
        kept: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        kept = None
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    # A file with a mode of its own is made owner-only at once, so a secret written to it
    # is never readable by others, even before the permissions are set.
    created = 0o666 if mode is None else 0o600
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, created)
    try:
        with open(handle, "w", encoding="utf-8") as out:
            yield out
            if durable:
                out.flush()
                os.fsync(out.fileno())
        permissions = mode if mode is not None else kept
        if permissions is not None:
            os.chmod(temporary, permissions)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
