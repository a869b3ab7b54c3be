"""Tree's search cache: the gram filter of each archived window, kept beside the session.

A search that finds fewer hits than its page reads every archived window to its end. A
window's :class:`~ctxmodes_tree.gram_filter.GramFilter` tells, without reading it, that the
window holds no hit, so after a resume such a search reads only the windows that may hold
one. Filters are made when a window is archived, and lazily for a window that a call reads
to its end (a session written before, or by the TypeScript extension, has none), and kept
in ``<session file>.tree-search``.

The file is derived data, never authoritative: the session file decides. Each filter names
what it covers (the archive's manifest entry id, and the newest ``count`` entries of the
archived path, the first of them ``first_id``) and the session file it was made from (the
header's session id, the file's device and inode, and a size the file has reached), and is
used only when all of that still holds: a filter covering fewer entries than the archive's
bounds now keep, a session file replaced, rewritten or cut short, or a filter from another
session is ignored, and the window is read as if there were none. Each record carries a
CRC-32 of its contents, so a damaged or torn record is ignored too. A filter that fails to
apply costs a read, never a hit.

Only a process that holds the session open for writing writes the cache, so the session's
write lock keeps writers apart; a filter is appended as one record with one ``write``, and a
file with records to drop is replaced whole (written beside and renamed), so a reader sees
either file complete, or a torn last record it ignores. A file that cannot be written (a
read-only directory, a full disk) leaves the filters in memory. The file is created with the
session file's permission bits, never wider.

Format: the line ``ctxmodes tree search cache 1``, then records, each ``b"\\0rec"``, the
body's length and its CRC-32 (little-endian 32-bit), and the body: the length of a JSON
object (:class:`FilterRecord`), the object, then the filter's bitmap.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxmodes import SessionView
from ctxmodes.session import codec
from ctxmodes_tree.gram_filter import BYTE_ORDER, GRAM_BYTES, GramFilter
from ctxmodes_tree.traversal import VerifiedArchive

#: Appended to the session file's name.
CACHE_SUFFIX: Final = ".tree-search"
_MAGIC: Final = b"ctxmodes tree search cache 1\n"
_MARKER: Final = b"\x00rec"
_FRAME: Final = struct.Struct("<4sII")
_LENGTH: Final = struct.Struct("<I")
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)

_Id = Annotated[str, Field(min_length=1)]


class FilterRecord(BaseModel):
    """What one persisted filter covers, and the session file it was made from."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    session: _Id
    device: int
    inode: int
    size: Annotated[int, Field(ge=0)]
    manifest: _Id
    first_id: _Id
    count: Annotated[int, Field(gt=0)]
    gram_bytes: Annotated[int, Field(ge=GRAM_BYTES, le=GRAM_BYTES)]
    byte_order: str
    bits: Annotated[int, Field(gt=0)]


class _FileIdentity:
    """The session file as it is now: which file, and how long."""

    __slots__ = ("device", "inode", "size")

    def __init__(self, device: int, inode: int, size: int) -> None:
        self.device, self.inode, self.size = device, inode, size

    def matches(self, record: FilterRecord) -> bool:
        return (
            record.device == self.device and record.inode == self.inode and record.size <= self.size
        )


class SearchCache:
    """The gram filters of one session's archived windows (see the module docstring).

    :param session: the session the archives are in; its file locates the cache, and only a
        session open for writing writes it.
    """

    __slots__ = ("_damaged", "_filters", "_loaded", "_path", "_session")

    def __init__(self, session: SessionView) -> None:
        self._session = session
        file = session.session_file
        self._path = None if file is None else Path(f"{file}{CACHE_SUFFIX}")
        self._filters: dict[str, list[tuple[FilterRecord, GramFilter]]] = {}
        self._loaded = False
        #: Whether the file holds records that no longer apply (replaced before the next
        #: append, so the file does not keep them).
        self._damaged = False

    @property
    def path(self) -> Path | None:
        """Where the cache is kept (``None`` for a session kept in memory)."""
        return self._path

    @property
    def persists(self) -> bool:
        """Whether filters given to :meth:`remember` are written to the cache file: the
        session is a file this process holds open for writing. (A filter only this process
        would use is not worth making: a window it read whole is searched in memory.)"""
        return self._path is not None and not self._session.read_only

    def filter_for(self, archive: VerifiedArchive, kept: Sequence[str]) -> GramFilter | None:
        """A filter covering ``kept`` (the archived entries a search reads, a suffix of the
        archive's path), or ``None`` when none is known to."""
        self._load()
        for record, found in self._filters.get(archive.manifest_entry_id, ()):
            if _covers(record, archive.entry_ids, kept):
                return found
        return None

    def remember(self, archive: VerifiedArchive, kept: Sequence[str], found: GramFilter) -> None:
        """Keep ``found``, the filter of the items of ``kept``, and persist it when the
        session is open for writing."""
        if not kept:
            return
        self._load()
        identity = self._identity()
        record = FilterRecord(
            session=self._session.session_id,
            device=identity.device if identity is not None else 0,
            inode=identity.inode if identity is not None else 0,
            size=identity.size if identity is not None else 0,
            manifest=archive.manifest_entry_id,
            first_id=kept[0],
            count=len(kept),
            gram_bytes=GRAM_BYTES,
            byte_order=BYTE_ORDER,
            bits=found.size,
        )
        self._filters.setdefault(record.manifest, []).insert(0, (record, found))
        if identity is not None and self.persists:
            with contextlib.suppress(OSError):
                self._persist(record, found)

    # -- the file ------------------------------------------------------------------------

    def _identity(self) -> _FileIdentity | None:
        file = self._session.session_file
        if file is None or self._path is None:
            return None
        try:
            status = os.stat(file)
        except OSError:
            return None
        return _FileIdentity(status.st_dev, status.st_ino, status.st_size)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        identity = self._identity()
        data = _read_regular(self._path) if identity is not None else None
        if identity is None or data is None:
            return
        if not data.startswith(_MAGIC):
            self._damaged = bool(data)
            return
        session_id = self._session.session_id
        for parsed in _records(data, len(_MAGIC)):
            if parsed is None or parsed[0].session != session_id or not identity.matches(parsed[0]):
                self._damaged = True
            else:
                self._filters.setdefault(parsed[0].manifest, []).append(parsed)

    def _persist(self, record: FilterRecord, found: GramFilter) -> None:
        assert self._path is not None
        if self._damaged:
            self._replace()
            return
        fd = os.open(
            self._path,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK,
            self._mode(),
        )
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            start = b"" if os.fstat(fd).st_size else _MAGIC
            os.write(fd, start + _frame(record, found))
        finally:
            os.close(fd)

    def _replace(self) -> None:
        """Write every filter this process holds for the session to a new file, in place
        of the old one."""
        assert self._path is not None
        frames = [
            _frame(record, found)
            for kept in self._filters.values()
            for record, found in reversed(kept)
            if record.device or record.inode
        ]
        fd, temporary = tempfile.mkstemp(prefix=f".{self._path.name}.", dir=self._path.parent)
        try:
            os.chmod(temporary, self._mode())
            with os.fdopen(fd, "wb") as out:
                out.write(_MAGIC + b"".join(frames))
            os.replace(temporary, self._path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._damaged = False

    def _mode(self) -> int:
        file = self._session.session_file
        assert file is not None
        return stat.S_IMODE(os.stat(file).st_mode) & 0o666


def _covers(record: FilterRecord, interval: Sequence[str], kept: Sequence[str]) -> bool:
    """Whether ``record`` covers ``kept``: the newest ``record.count`` entries of the
    archive, which begin with ``record.first_id``, include them."""
    if len(kept) > record.count or record.count > len(interval):
        return False
    return interval[len(interval) - record.count] == record.first_id


def _frame(record: FilterRecord, found: GramFilter) -> bytes:
    meta = codec.dumps(record.model_dump())
    body = _LENGTH.pack(len(meta)) + meta + bytes(found.bitmap)
    return _FRAME.pack(_MARKER, len(body), zlib.crc32(body)) + body


def _records(data: bytes, offset: int) -> Iterator[tuple[FilterRecord, GramFilter] | None]:
    """The records from ``offset`` on; a damaged one as ``None``. A frame that cannot be
    delimited (a torn last record) ends the file."""
    view = memoryview(data)
    while offset < len(data):
        if len(data) - offset < _FRAME.size:
            yield None
            return
        marker, length, checksum = _FRAME.unpack_from(data, offset)
        body = view[offset + _FRAME.size : offset + _FRAME.size + length]
        if marker != _MARKER or len(body) < length:
            yield None
            return
        offset += _FRAME.size + length
        yield _record(body) if zlib.crc32(body) == checksum else None


def _record(body: memoryview) -> tuple[FilterRecord, GramFilter] | None:
    if len(body) < _LENGTH.size:
        return None
    (meta_length,) = _LENGTH.unpack_from(body)
    meta = body[_LENGTH.size : _LENGTH.size + meta_length]
    try:
        record = FilterRecord.model_validate(codec.loads(meta))
        found = GramFilter(record.bits, body[_LENGTH.size + meta_length :])
    except (ValidationError, ValueError):
        return None
    if record.byte_order != BYTE_ORDER:
        return None
    return record, found


def _read_regular(path: Path | None) -> bytes | None:
    """The file's bytes when it is a regular file (never following a link or blocking on a
    FIFO), else ``None``."""
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as file:
            return file.read()
    except OSError:
        return None
    finally:
        os.close(fd)
