"""Tree's search cache: the gram filters of each archived window, kept beside the session.

A search that finds fewer hits than its page reads every archived window to its end. A
window's :class:`~ctxmodes_tree.window_filter.SearchFilter` tells, without reading it, that
the window holds no hit, or which of its blocks of entries may hold one, so after a resume
such a search reads only the blocks that may hold one. Filters are made when a window is
archived, and lazily for a window that a call reads to its end in a process writing the
session (a session written before, or by the TypeScript extension, has none), and kept in
``<session file>.tree-search``. Making a window's filters costs several times reading it, so
lazy making is paid for by reading (:meth:`SearchCache.make_lazily`): a process spends on it
at most the time its searches spent reading windows to their end, plus
:data:`FREE_MAKING_S`. The first search of an older session is then at most about twice as
slow as it was without the cache, and the filters arrive over its searches and resumes,
not all at once.

The file is derived data, never authoritative: the session file decides. Each filter names
what it covers (the archive's manifest entry id, and the newest ``count`` entries of the
archived path, the first of them ``first_id``) and the session file it was made from (the
header's session id, the file's device and inode, and a size the file had reached), and is
used only when all of that still holds: a filter covering fewer entries than the archive's
bounds now keep, a session file replaced (a new file in its place) or cut short, or a
filter from another session is ignored, and the window is read as if there were none. A
record's description carries a CRC-32, and so does every page of its bitmap, so a damaged
or torn record is ignored too. A filter that fails to apply costs a read, never a hit. (A
session file edited in place, the same file and no shorter, is not noticed: sessions are
only appended to.)

Cost. Opening the cache reads each record's description, not its bitmaps; a search reads
and checks only the bitmap pages its query's bits fall in (usually one per window, as most
windows rule a missing query out on its first gram, and one per block of a window that lets
the query pass). So a search costs the same whatever the windows' length.

Only a process that holds the session open for writing writes the cache, so the session's
write lock keeps writers apart; a filter is appended as one record with one ``write``, and a
file with records to drop is replaced whole (written beside and renamed), so a reader sees
either file complete, or a torn last record it ignores. A file that cannot be written (a
read-only directory, a full disk) leaves the filters in memory. The file is created with the
session file's permission bits, never wider, and a link in its place is not followed.

Format: the line ``ctxmodes tree search cache 3``, then records: ``b"\\0rec"``, the lengths
of the description and of the rest and the description's CRC-32 (little-endian 32-bit
each), the description (a JSON object, :class:`FilterRecord`), the CRC-32 of each page of
the bitmaps that the window's bitmap does not touch (little-endian 32-bit each; the
description holds the others'), then the bitmaps: the window's, then each block's, newest
first. (A file of an earlier version, whose records have no blocks, is ignored, and
replaced by the next process that writes the session.)
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes import SessionView
from ctxmodes.session import codec
from ctxmodes_tree.gram_filter import BYTE_ORDER, GRAM_BYTES, query_bits
from ctxmodes_tree.traversal import VerifiedArchive
from ctxmodes_tree.window_filter import SearchFilter, WindowFilter

#: Seconds of lazy filter making a process may spend before its reading has paid for any:
#: a small session gets all its filters on its first search.
FREE_MAKING_S: Final = 0.05
#: Appended to the session file's name.
CACHE_SUFFIX: Final = ".tree-search"
_MAGIC: Final = b"ctxmodes tree search cache 3\n"
_MARKER: Final = b"\x00rec"
_FRAME: Final = struct.Struct("<4sIII")
#: Bytes of bitmap checked by one CRC-32, and read at a time.
PAGE_BYTES: Final = 1024
#: Bytes read after a record's header, in the hope that they hold its whole description.
_DESCRIPTION_GUESS: Final = 2048
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)

_Id = Annotated[str, Field(min_length=1)]


class FilterRecord(BaseModel):
    """The description of one persisted filter: what it covers, the session file it was
    made from, and its bitmaps' shape (the window's ``bits``, then each block's, newest
    first) and page checksums."""

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
    block_entries: Annotated[int, Field(gt=0)]
    block_bits: list[Annotated[int, Field(gt=0)]]
    page_bytes: Annotated[int, Field(ge=PAGE_BYTES, le=PAGE_BYTES)]
    #: The checksums of the pages the window's bitmap touches.
    pages: list[int]
    #: The checksum of the table of the other pages' checksums (the blocks'), kept in binary
    #: before the bitmaps, so that the description stays short whatever the window's length.
    block_pages: int


class _FileIdentity:
    """The session file as it is now: which file, and how long."""

    __slots__ = ("device", "inode", "size")

    def __init__(self, device: int, inode: int, size: int) -> None:
        self.device, self.inode, self.size = device, inode, size

    def matches(self, record: FilterRecord) -> bool:
        return (
            record.device == self.device and record.inode == self.inode and record.size <= self.size
        )


class _StoredFilter:
    """A filter whose bitmaps stay in the cache file: each page is read and checked the
    first time a query needs one of its bits. A page that fails its check makes the filter
    answer "may contain" from then on."""

    __slots__ = ("_bitmap_at", "_blocks", "_cache", "_pages", "_read", "broken", "record")

    def __init__(self, cache: SearchCache, record: FilterRecord, bitmap_at: int) -> None:
        self._cache = cache
        self.record = record
        self._bitmap_at = bitmap_at
        self._read: dict[int, bytes] = {}
        # The window's pages' checksums; the blocks' are read with the first block page.
        self._pages: list[int] | tuple[int, ...] = record.pages
        # Where each block's bitmap starts, in bytes after the window's.
        starts = accumulate((bits // 8 for bits in record.block_bits), initial=record.bits // 8)
        self._blocks = list(starts)[:-1]
        self.broken = False

    @property
    def block_entries(self) -> int:
        return self.record.block_entries

    def may_contain(self, query: str) -> bool:
        return self._may_contain(query, 0, self.record.bits)

    def blocks_may_contain(self, query: str) -> list[bool]:
        return [
            self._may_contain(query, start, bits)
            for start, bits in zip(self._blocks, self.record.block_bits, strict=True)
        ]

    def _may_contain(self, query: str, start: int, size: int) -> bool:
        """Whether the bitmap of ``size`` bits from byte ``start`` lets ``query`` pass."""
        bits = query_bits(query, size)
        if bits is None or self.broken:
            return True
        for bit in bits:
            byte = start + (bit >> 3)
            page = self._page(byte // PAGE_BYTES)
            if page is None:
                return True
            if not page[byte % PAGE_BYTES] >> (bit & 7) & 1:
                return False
        return True

    def _page(self, number: int) -> bytes | None:
        page = self._read.get(number)
        if page is None:
            if number >= len(self._pages) and not self._read_block_checksums():
                return None
            length = min(PAGE_BYTES, _bitmap_bytes(self.record) - number * PAGE_BYTES)
            page = self._cache.read_at(self._bitmap_at + number * PAGE_BYTES, length)
            if page is None:
                return None  # unreadable (the cache was let go of): not damaged
            if len(page) != length or zlib.crc32(page) != self._pages[number]:
                self._break()
                return None
            self._read[number] = page
        return page

    def _read_block_checksums(self) -> bool:
        """Read and check the table of the blocks' pages' checksums, which lies just before
        the bitmaps (``False`` when it cannot be read or fails its check)."""
        count = _page_count(self.record) - len(self.record.pages)
        table = self._cache.read_at(self._bitmap_at - 4 * count, 4 * count)
        if table is None:
            return False
        if len(table) != 4 * count or zlib.crc32(table) != self.record.block_pages:
            self._break()
            return False
        self._pages = (*self.record.pages, *struct.unpack(f"<{count}I", table))
        return True

    def _break(self) -> None:
        self.broken = True
        self._cache.damaged = True

    def bitmap(self) -> bytes | None:
        """The whole bitmap (the window's and the blocks'), every page checked (``None``
        when one fails)."""
        pages = [self._page(number) for number in range(_page_count(self.record))]
        if any(page is None for page in pages):
            return None
        return b"".join(page for page in pages if page is not None)


class SearchCache:
    """The gram filters of one session's archived windows (see the module docstring).

    :param session: the session the archives are in; its file locates the cache, and only a
        session open for writing writes it.
    """

    __slots__ = ("_fd", "_filters", "_loaded", "_making_credit_s", "_path", "_session", "damaged")

    def __init__(self, session: SessionView) -> None:
        self._session = session
        file = session.session_file
        self._path = None if file is None else Path(f"{file}{CACHE_SUFFIX}")
        self._filters: dict[str, list[tuple[FilterRecord, SearchFilter]]] = {}
        self._loaded = False
        self._fd: int | None = None
        self._making_credit_s = FREE_MAKING_S
        #: Whether the file holds records that do not apply (a writer replaces it before it
        #: appends, so that the file does not keep them).
        self.damaged = False

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

    def make_lazily(self, reading_s: float, make: Callable[[], object]) -> None:
        """Run ``make`` (which makes the filters of a window a call has just read to its end,
        taking ``reading_s`` seconds) if this process's lazy making has not yet outspent
        its reading, this window's included."""
        self._making_credit_s += reading_s
        if self._making_credit_s <= 0:
            return
        started = time.perf_counter()
        make()
        self._making_credit_s -= time.perf_counter() - started

    def filter_for(self, archive: VerifiedArchive, kept: Sequence[str]) -> SearchFilter | None:
        """A filter covering ``kept`` (the archived entries a search reads, a suffix of the
        archive's path), or ``None`` when none is known to."""
        self._load()
        for record, found in self._filters.get(archive.manifest_entry_id, ()):
            broken = isinstance(found, _StoredFilter) and found.broken
            if not broken and _covers(record, archive.entry_ids, kept):
                return found
        return None

    def remember(self, archive: VerifiedArchive, kept: Sequence[str], found: WindowFilter) -> None:
        """Keep ``found``, the filter of the items of ``kept``, and persist it when the
        session is open for writing."""
        if not kept:
            return
        self._load()
        identity = self._identity()
        checksums = _page_checksums(found.bitmap())
        window_pages = -(-found.whole.size // 8 // PAGE_BYTES)
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
            bits=found.whole.size,
            block_entries=found.block_entries,
            block_bits=[block.size for block in found.blocks],
            page_bytes=PAGE_BYTES,
            pages=checksums[:window_pages],
            block_pages=zlib.crc32(_table(checksums[window_pages:])),
        )
        self._filters.setdefault(record.manifest, []).insert(0, (record, found))
        if identity is not None and self.persists:
            with contextlib.suppress(OSError):
                self._persist(record, found)

    def read_at(self, offset: int, length: int) -> bytes | None:
        """``length`` bytes of the cache file from ``offset`` (fewer at its end), or
        ``None`` when it cannot be read."""
        if self._fd is None:
            return None
        try:
            return _pread(self._fd, length, offset)
        except OSError:
            return None

    def close(self) -> None:
        """Let go of the cache file (filters already read stay usable)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

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
        if identity is None:
            return
        self._fd = _open_regular(self._path)
        if self._fd is None:
            return
        try:
            length = os.fstat(self._fd).st_size
        except OSError:
            return
        if self.read_at(0, len(_MAGIC)) != _MAGIC:
            self.damaged = length > 0
            return
        session_id = self._session.session_id
        offset = len(_MAGIC)
        while offset < length:
            parsed = self._record_at(offset, length)
            if parsed is None:
                # Nothing after an undelimited record can be found: the file ends here.
                self.damaged = True
                return
            record, next_offset = parsed
            offset = next_offset
            if record is None or record.session != session_id or not identity.matches(record):
                self.damaged = True
                continue
            stored = _StoredFilter(self, record, next_offset - _bitmap_bytes(record))
            self._filters.setdefault(record.manifest, []).append((record, stored))

    def _record_at(self, offset: int, length: int) -> tuple[FilterRecord | None, int] | None:
        """The record at ``offset`` (``None`` in it when its description is damaged) and
        where the next begins; ``None`` when the record cannot be delimited."""
        # The header and, usually, the whole description in one read.
        head = self.read_at(offset, _FRAME.size + _DESCRIPTION_GUESS)
        if head is None or len(head) < _FRAME.size:
            return None
        marker, meta_length, rest_length, checksum = _FRAME.unpack_from(head)
        end = offset + _FRAME.size + meta_length + rest_length
        if marker != _MARKER or end > length:
            return None
        meta: bytes | None = head[_FRAME.size : _FRAME.size + meta_length]
        if meta is not None and len(meta) < meta_length:
            meta = self.read_at(offset + _FRAME.size, meta_length)
        if meta is None or len(meta) < meta_length or zlib.crc32(meta) != checksum:
            return None, end
        try:
            record = FilterRecord.model_validate(codec.loads(meta))
        except ValueError:
            return None, end
        sizes = [record.bits, *record.block_bits]
        block_pages = _page_count(record) - len(record.pages)
        if (
            record.byte_order != BYTE_ORDER
            or any(size % 64 for size in sizes)
            or len(record.pages) != -(-record.bits // 8 // PAGE_BYTES)
            or _bitmap_bytes(record) + 4 * block_pages != rest_length
            or len(record.block_bits) not in (0, -(-record.count // record.block_entries))
        ):
            return None, end
        return record, end

    def _persist(self, record: FilterRecord, found: WindowFilter) -> None:
        assert self._path is not None
        if self.damaged:
            self._replace()
            return
        allowed = self._mode()
        fd = os.open(
            self._path,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK,
            allowed,
        )
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                return
            bits = stat.S_IMODE(status.st_mode)
            if bits & ~allowed:
                # Made while the session was readable by more people than it is now: the
                # cache may tell no one more than the session does, so it is narrowed first,
                # and left unwritten when it cannot be.
                try:
                    os.fchmod(fd, bits & allowed)
                except OSError:
                    return
            os.write(fd, (b"" if status.st_size else _MAGIC) + _frame(record, found.bitmap()))
        finally:
            os.close(fd)

    def _replace(self) -> None:
        """Write every filter this process holds for the session that still checks out to a
        new file, in place of the old one."""
        assert self._path is not None
        frames = []
        for kept in self._filters.values():
            for record, found in reversed(kept):
                bitmap = _bitmap_of(found)
                if bitmap is not None and (record.device or record.inode):
                    frames.append(_frame(record, bitmap))
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
        self.damaged = False

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


def _bitmap_of(found: SearchFilter) -> bytes | None:
    """A filter's bitmaps, checked (``None`` when they no longer check out)."""
    assert isinstance(found, _StoredFilter | WindowFilter)
    return found.bitmap()


def _bitmap_bytes(record: FilterRecord) -> int:
    """The bytes of a record's bitmaps: the window's, then the blocks'."""
    return (record.bits + sum(record.block_bits)) // 8


def _page_count(record: FilterRecord) -> int:
    return -(-_bitmap_bytes(record) // PAGE_BYTES)


def _table(checksums: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(checksums)}I", *checksums)


def _page_checksums(bitmap: bytes | memoryview) -> list[int]:
    starts = range(0, len(bitmap), PAGE_BYTES)
    return [zlib.crc32(bitmap[start : start + PAGE_BYTES]) for start in starts]


def _frame(record: FilterRecord, bitmap: bytes) -> bytes:
    """A record: its header, description, the blocks' pages' checksums, then the bitmaps."""
    meta = codec.dumps(record.model_dump())
    rest = _table(_page_checksums(bitmap)[len(record.pages) :]) + bitmap
    return _FRAME.pack(_MARKER, len(meta), len(rest), zlib.crc32(meta)) + meta + rest


def _open_regular(path: Path | None) -> int | None:
    """A descriptor to read the file when it is a regular file (never following a link or
    blocking on a FIFO), else ``None``."""
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _seek_and_read(fd: int, length: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


#: One system call per read where there is ``pread`` (not on Windows).
_pread: Callable[[int, int, int], bytes] = getattr(os, "pread", _seek_and_read)
