"""Finding a byte string in a large immutable buffer at the speed of the C library.

For needles shorter than six bytes, ``bytes.find`` runs a Horspool-style search that skips
at most one needle length per step: over prose, a query of common letters such as ``" the"``
scans about 1.3 GB/s. The C library's ``memmem`` (glibc, musl, the BSDs and macOS) hashes
byte pairs to skip further and, on code and on prose alike, usually runs two to four times
as fast (it can be slower only on long runs of one repeated byte). :class:`SearchableBytes`
uses it where the C library has it and ``bytes.find`` everywhere else (Windows); the
results are the same.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Final

_Memmem = Callable[[int, int, bytes, int], int | None]


def _load_memmem() -> _Memmem | None:
    if sys.platform == "win32":
        return None
    try:
        function = ctypes.CDLL(None).memmem
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)
    found: _Memmem = function
    return found


_MEMMEM: Final = _load_memmem()


class SearchableBytes:
    """An immutable byte buffer with a fast :meth:`find`."""

    __slots__ = ("_address", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        # A bytes object never moves or changes, and ``data`` keeps it alive, so its buffer
        # address stays valid for the life of this object (ctypes does not copy bytes).
        self._address: int = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0

    def find(self, needle: bytes, start: int, end: int) -> int:
        """The lowest index of ``needle`` (non-empty) within ``data[start:end]``, else -1."""
        if _MEMMEM is None or not self._address:
            return self.data.find(needle, start, end)
        if end - start < len(needle):
            return -1
        hit = _MEMMEM(self._address + start, end - start, needle, len(needle))
        return -1 if hit is None else hit - self._address
