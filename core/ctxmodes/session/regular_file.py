"""Opening files for reading without ever blocking on something that is not a file.

A FIFO given where a session file, a tool's file or a prompt file is expected would make a
plain ``open`` wait for a writer (or, to write it, a reader) for ever; a directory has no
lines to read, a device such as ``/dev/zero`` never ends, and one such as ``/dev/tty`` is the
user's terminal. Such paths are refused up front.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO, Final

__all__ = ["NotARegularFileError", "kind_of", "open_regular", "read_regular", "write_regular"]

_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotARegularFileError(OSError):
    """The path names a directory, FIFO, socket or device rather than a regular file."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(f"not a regular file (it is {kind}): {os.fspath(path)}")
        self.kind = kind
        # Without the path, for messages that name it themselves (``exc.strerror or exc``).
        self.strerror = f"not a regular file (it is {kind})"


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is that is not a regular file, in words: ``a
    directory``, ``a FIFO``, ``a socket``, ``a character device``, ``a block device``."""
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def open_regular(path: str | os.PathLike[str], buffering: int = -1) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file.

    What is not a regular file is not opened (opening some devices acts); what becomes one
    meanwhile is refused once open, and the open itself does not block (``O_NONBLOCK``,
    which regular files ignore).

    :raises NotARegularFileError: if ``path`` is not a regular file.
    :raises OSError: if it cannot be opened.
    """
    _refuse_unless_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, kind_of(mode))
        stream: BinaryIO = os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise
    return stream


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of ``path`` if it is a regular file: a FIFO would make the read wait for a
    writer and a device such as ``/dev/zero`` never ends, so both are refused.

    :raises NotARegularFileError: if ``path`` is not a regular file.
    :raises OSError: if it cannot be read.
    """
    with open_regular(path) as stream:
        return stream.read()


def write_regular(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the content of the regular file ``path`` with ``data``, making it if missing
    (mode ``0o666`` less the umask, as ``open`` makes files).

    :raises NotARegularFileError: ``path`` is a FIFO, a device or another file that is not
        regular: nothing is written (and, as for :func:`open_regular`, it is not opened).
    :raises OSError: it cannot be written.
    """
    _refuse_unless_regular(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO no one reads: opening it would wait for one
            raise NotARegularFileError(path, "a FIFO") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, kind_of(mode))
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _refuse_unless_regular(path: str | os.PathLike[str]) -> None:
    """Nothing when ``path`` is a regular file or nothing at all.

    :raises NotARegularFileError: it is something else.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the open that follows says what is wrong
    if not stat.S_ISREG(mode):
        raise NotARegularFileError(path, kind_of(mode))
