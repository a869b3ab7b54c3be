"""Tree's search cache: searches answer the same with and without it, a search it rules out
reads nothing after a resume, and a cache that does not apply is ignored."""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import string
import struct
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.session.manager import SessionManager
from ctxmodes.windows.retrieval import answer_history
from ctxmodes_tree import window_filter
from ctxmodes_tree.search_cache import CACHE_SUFFIX, PAGE_BYTES, SearchCache
from ctxmodes_tree.state import TreeState
from ctxmodes_tree.traversal import ArchiveLimits

EMPTY_SNAPSHOT = {"protocol": 1, "timestamp": 1, "files": []}
NOWHERE = "found-nowhere"

#: Texts that differ from the queries below only in what a literal, case-sensitive
#: substring search must tell apart.
DECOY_WINDOWS: list[list[str]] = [
    ["Secret alpha-omega", "tail-A", "head-B", "SECRET in capitals"],
    ["café composed", "cafe\u0301 decomposed", "smile 😀 here", "lone x\ud83dy surrogate"],
    ["日本語のテキスト", "a\x00b with a NUL", "tabs\tand\nnewlines", "Summary-like text"],
]
QUERIES = [
    "Secret",
    "secret",
    "SECRET",
    "alpha-omega",
    "tail-Ahead-B",  # the end of one item and the start of the next
    "tail-A\nhead-B",
    "tail-A\x00head-B",  # the filter's own joint between texts
    "café",
    "cafe\u0301",
    "caf",
    "é",
    "😀",
    "\ud83d\ude00",  # a surrogate pair, not the astral character
    "\ud83d",
    "x\ud83dy",
    "日本",
    "本語のテ",
    "a\x00b",
    "and\nnew",
    "a",
    "ab",
    "abc",
    "Summary of window",
    "Summary",
    "output 7",
    "request",
    NOWHERE,
    "Secret alpha-omegaX",
]


def history(state: TreeState, action: str, **arguments: Any) -> dict[str, Any]:
    result = answer_history(state.reader(), action, arguments)
    assert not result.is_error, result.text
    decoded: dict[str, Any] = json.loads(result.text)
    return decoded


def build_decoys(script) -> Path:
    """Windows of decoys and filler, archived as Tree archives them; returns the file."""
    for window, texts in enumerate(DECOY_WINDOWS):
        for n in range(8):
            script.exchange(n, detail=f"filler {window}-{n}")
        script.user(texts[0])
        script.assistant(texts[1])
        script.user(texts[2])
        script.tool_result("bash", texts[3])
        script.rollover(f"Summary of window {window}", EMPTY_SNAPSHOT)
    script.exchange(99, detail="current window")
    script.manager.flush()
    file: Path = script.manager.session_file
    return file


@pytest.fixture
def decoys(manager, script) -> Path:
    """The file of :func:`build_decoys`, closed."""
    file = build_decoys(script)
    manager.close()
    return file


def cache_of(file: Path) -> Path:
    return Path(f"{file}{CACHE_SUFFIX}")


@contextmanager
def resumed(
    file: Path, *, read_only: bool = True, limits: ArchiveLimits | None = None
) -> Iterator[TreeState]:
    manager = SessionManager.open(file, read_only=read_only)
    state = TreeState(manager, limits) if limits is not None else TreeState(manager)
    try:
        yield state
    finally:
        state.close()
        manager.close()


def index_every_window(file: Path, limits: ArchiveLimits | None = None) -> None:
    """What a writing process leaves behind: every archive's filter in the cache."""
    with resumed(file, read_only=False, limits=limits) as state:
        for window in state.archive_history.windows():
            window.index_contents()


def counting_reads(state: TreeState, monkeypatch) -> list[str]:
    read: list[str] = []
    manager = state.manager
    reading = manager.read_entries_json

    def counted(entry_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        read.extend(entry_ids)
        return reading(entry_ids)

    monkeypatch.setattr(manager, "read_entries_json", counted)
    return read


def answers(file: Path, limits: ArchiveLimits | None = None) -> dict[tuple[Any, ...], Any]:
    """Every decoy query's first answer after a resume, each on a fresh state."""
    found = {}
    for query in QUERIES:
        for recent_first in (False, True):
            for options in ({"limit": 25}, {"limit": 1}, {"limit": 25, "role": "user"}):
                with resumed(file, limits=limits) as state:
                    found[(query, recent_first, *options.items())] = history(
                        state,
                        "search_contents",
                        query=query,
                        recent_first=recent_first,
                        **options,
                    )
    return found


@pytest.mark.slow  # every query, with and without the cache
@pytest.mark.parametrize("limits", [None, ArchiveLimits(max_items=12)])
def test_searches_answer_the_same_with_and_without_the_cache(decoys, limits, monkeypatch) -> None:
    file = decoys
    read: list[str] = []
    reading = SessionManager.read_entries_json

    def counted(manager, entry_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        read.extend(entry_ids)
        return reading(manager, entry_ids)

    monkeypatch.setattr(SessionManager, "read_entries_json", counted)
    without = answers(file, limits)
    read_without = len(read)
    assert not cache_of(file).exists()  # a reading process writes nothing
    index_every_window(file, limits)
    assert cache_of(file).exists()
    read.clear()
    assert answers(file, limits) == without
    # The cache was used: most of the reading was spared.
    assert len(read) < read_without // 2
    # The decoys tell apart what they should (the comparison above is not vacuous).
    hits = {query: len(without[(query, False, ("limit", 25))]["items"]) for query in QUERIES}
    assert hits["Secret"] == 1
    assert hits["SECRET"] == 1
    assert hits["secret"] == 0
    assert hits["tail-Ahead-B"] == 0
    assert hits["café"] == 1
    assert hits["😀"] == 1
    assert hits["\ud83d\ude00"] == 0
    assert hits["x\ud83dy"] == 1
    assert hits[NOWHERE] == 0


def _blocks_kept(file: Path) -> list[int]:
    """How many block filters the cache holds for each archived window."""
    with resumed(file) as state:
        cache = SearchCache(state.manager)
        try:
            kept = [
                cache.filter_for(window, window.entry_ids[-1:])
                for window in state.archives.archives
            ]
            return [len(found.blocks_may_contain(NOWHERE)) if found else -1 for found in kept]
        finally:
            cache.close()


@pytest.mark.slow  # every query, for each way of cutting the windows into blocks
@pytest.mark.parametrize(
    ("block_entries", "indexed", "searched"),
    [
        # Every entry its own block: each decoy text alone.
        (1, None, None),
        # "tail-A" and "head-B" in different blocks; searched with narrower bounds, the
        # oldest block kept is cut short.
        (2, None, ArchiveLimits(max_items=7)),
        # Blocks of three cut across the filler and the decoys, within the bounds.
        (3, ArchiveLimits(max_items=12), ArchiveLimits(max_items=12)),
    ],
)
def test_searches_answer_the_same_wherever_blocks_cut_a_window(
    decoys, monkeypatch, block_entries, indexed, searched
) -> None:
    file = decoys
    monkeypatch.setattr(window_filter, "BLOCK_ENTRIES", block_entries)
    without = answers(file, searched)
    index_every_window(file, indexed)
    limit = (indexed or ArchiveLimits()).max_items
    expected = [-(-min(limit, size) // block_entries) for size in _window_sizes(file)]
    assert _blocks_kept(file) == expected
    assert answers(file, searched) == without
    hits = {query: len(without[(query, False, ("limit", 25))]["items"]) for query in QUERIES}
    # Found within one block each; a query that spans two items is no hit, whether the
    # items share a block or not.
    assert hits["Secret"] == hits["x\ud83dy"] == hits["café"] == 1
    assert hits["tail-Ahead-B"] == hits["tail-A\x00head-B"] == 0


def build_named(manager, script) -> tuple[Path, list[str]]:
    """One archived window of 60 exchanges, each with a name of its own (as a function or a
    file name is) among words that every block shares, indexed in blocks of 16 entries;
    returns the file and the names."""
    rng = random.Random(5)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(300)]
    names = ["".join(rng.choices(string.ascii_uppercase, k=8)) for _ in range(60)]
    for n in range(60):
        script.exchange(n, detail=f"{names[n]} " + " ".join(rng.choices(words, k=20)))
    script.rollover("Summary of window 0", EMPTY_SNAPSHOT)
    manager.close()
    file: Path = manager.session_file
    index_every_window(file)
    return file, names


def test_a_search_with_few_hits_reads_only_the_blocks_that_may_hold_them(
    manager, script, monkeypatch
) -> None:
    monkeypatch.setattr(window_filter, "BLOCK_ENTRIES", 16)
    file, names = build_named(manager, script)
    (size,) = _window_sizes(file)
    assert _blocks_kept(file) == [-(-size // 16)]
    read_in_all = 0
    for n in (0, 3, 4, 31, 59):
        for recent_first in (False, True):
            with resumed(file) as state:
                read = counting_reads(state, monkeypatch)
                found = history(state, "search_contents", query=names[n], recent_first=recent_first)
                (hit,) = found["items"]
                assert hit["truncated_content"].startswith(f"output {n} {names[n]}")
                # The block that holds it, and the few whose filters let the query pass.
                assert 0 < len(read) <= 3 * 16
                read_in_all += len(read)
    # Without the blocks, each search would read the whole window (16 blocks).
    assert read_in_all <= 10 * 2 * 16


def test_a_search_the_cache_rules_out_reads_no_archived_entry(decoys, monkeypatch) -> None:
    file = decoys
    with resumed(file, read_only=False) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        # Without a cache, every archived entry.
        assert len(read) == sum(len(archive.entry_ids) for archive in state.archives.archives)
    # That first search, in a process writing the session, left every window's filter.
    with resumed(file) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        assert read == []
        # A search with one hit reads the one window that holds it.
        (hit,) = history(state, "search_contents", query="alpha-omega")["items"]
        assert hit["window_id"] == state.archives.archives[0].window_id
        assert set(read) <= set(state.archives.archives[0].entry_ids)


def test_a_rollover_makes_the_archived_windows_filter(harness, respond, monkeypatch) -> None:
    h = harness(
        [
            respond.call("bash", command="echo rollover-detail-one"),
            respond.call("new_context"),
            respond.text("window 1"),
        ]
    )
    h.session.prompt("start")
    (archive,) = h.mode.parts.state.archives.archives
    h.manager.flush()
    file = h.manager.session_file
    assert cache_of(file).exists()
    with resumed(file) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        assert read == []
        found = history(state, "search_contents", query="rollover-detail-one", limit=25)
        assert found["items"]
        assert {item["window_id"] for item in found["items"]} == {archive.window_id}


def test_the_cache_file_is_no_more_readable_than_the_session(decoys) -> None:
    file = decoys
    file.chmod(0o600)
    index_every_window(file)
    assert stat.S_IMODE(cache_of(file).stat().st_mode) == 0o600


def test_a_cache_made_before_the_session_was_narrowed_is_narrowed_on_its_next_write(
    decoys,
) -> None:
    """The user takes the session's read bits from others after a cache was made: the next
    filter written narrows the cache to the session's bits before anything is added."""
    file = decoys
    file.chmod(0o644)
    with resumed(file, read_only=False) as state:
        first, *others = state.archive_history.windows()
        first.index_contents()
    cache = cache_of(file)
    cache.chmod(0o644)
    assert others  # windows left to index, so the next write appends to this file
    file.chmod(0o600)
    before = cache.stat().st_size
    index_every_window(file)
    assert cache.stat().st_size > before
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600


def _first_search_reads(file: Path, monkeypatch, *, read_only: bool = True) -> int:
    """How many archived entries the first search without a hit reads after a resume."""
    with resumed(file, read_only=read_only) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        reads = len(read)
        assert len(history(state, "search_contents", query="alpha-omega")["items"]) == 1
        return reads


def _window_sizes(file: Path) -> list[int]:
    with resumed(file) as state:
        return [len(archive.entry_ids) for archive in state.archives.archives]


def _records_in(file: Path) -> int:
    return cache_of(file).read_bytes().count(b"\x00rec")


def test_a_damaged_record_is_ignored_and_rewritten(decoys, monkeypatch) -> None:
    file = decoys
    index_every_window(file)
    cache = cache_of(file)
    data = bytearray(cache.read_bytes())
    # One bit in every page of the last record's bitmap: their checksums no longer hold.
    header = data.rindex(b"\x00rec")
    _, _, bitmap_length, _ = struct.unpack_from("<4sIII", data, header)
    for page in range(len(data) - bitmap_length, len(data), PAGE_BYTES):
        data[page] ^= 0x10
    cache.write_bytes(bytes(data))
    assert _first_search_reads(file, monkeypatch) == _window_sizes(file)[-1]
    # A writing process replaces the file, without the damaged record but with a new one.
    _first_search_reads(file, monkeypatch, read_only=False)
    assert _records_in(file) == 3
    assert _first_search_reads(file, monkeypatch) == 0


def test_a_damaged_table_of_block_checksums_costs_a_read_not_a_hit(
    manager, script, monkeypatch
) -> None:
    monkeypatch.setattr(window_filter, "BLOCK_ENTRIES", 16)
    file, names = build_named(manager, script)
    cache = cache_of(file)
    data = bytearray(cache.read_bytes())
    # The record's description, then the table of its blocks' pages' checksums.
    header = data.index(b"\x00rec")
    _, meta_length, _, _ = struct.unpack_from("<4sIII", data, header)
    table = header + 16 + meta_length
    record = json.loads(data[header + 16 : table])
    assert record["block_bits"]
    assert record["block_pages"] != zlib.crc32(b"")  # the table is not empty
    data[table] ^= 0x01
    cache.write_bytes(bytes(data))
    with resumed(file) as state:
        read = counting_reads(state, monkeypatch)
        (hit,) = history(state, "search_contents", query=names[30])["items"]
        # The window's own bitmap let the query pass; its blocks could not be checked, so
        # the window was read within its bounds.
        (archive,) = state.archives.archives
        assert hit["window_id"] == archive.window_id
        assert sorted(read) == sorted(archive.entry_ids)


def test_a_torn_last_record_costs_only_that_window(decoys, monkeypatch) -> None:
    file = decoys
    index_every_window(file)
    cache = cache_of(file)
    cache.write_bytes(cache.read_bytes()[:-100])
    assert _first_search_reads(file, monkeypatch) == _window_sizes(file)[-1]


@pytest.mark.parametrize(
    "content",
    [b"", b"not a cache at all\n", b"ctxmodes tree search cache 1\n\x00rec\xff\xff\xff\xff"],
)
def test_a_cache_that_is_not_one_is_ignored(decoys, monkeypatch, content) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    assert expected == sum(_window_sizes(file))
    cache_of(file).write_bytes(content)
    assert _first_search_reads(file, monkeypatch) == expected


def test_a_cache_of_an_earlier_version_is_ignored_and_replaced(decoys, monkeypatch) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    index_every_window(file)
    cache = cache_of(file)
    current = cache.read_bytes()
    assert current.startswith(b"ctxmodes tree search cache 3\n")
    # The same records under the version-2 line (whose records had no block filters).
    cache.write_bytes(current.replace(b"cache 3\n", b"cache 2\n", 1))
    assert _first_search_reads(file, monkeypatch) == expected
    # A writing process replaces it, with the records it made.
    _first_search_reads(file, monkeypatch, read_only=False)
    assert cache.read_bytes().startswith(b"ctxmodes tree search cache 3\n")
    assert _first_search_reads(file, monkeypatch) == 0


def test_another_sessions_cache_is_ignored(tmp_path, decoys, monkeypatch) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    # A session with the same windows but its own id (a copy with a new header).
    other = tmp_path / "other.jsonl"
    lines = file.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["id"] = "another-session-id"
    other.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    index_every_window(other)
    shutil.copyfile(cache_of(other), cache_of(file))
    assert _first_search_reads(file, monkeypatch) == expected


def test_a_replaced_or_shortened_session_file_voids_the_cache(decoys, monkeypatch) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    index_every_window(file)
    # The same bytes in a new file (a copy put in place, a rewrite by an editor).
    replacement = file.with_suffix(".new")
    shutil.copyfile(file, replacement)
    os.replace(replacement, file)
    assert _first_search_reads(file, monkeypatch) == expected
    index_every_window(file)
    assert _first_search_reads(file, monkeypatch) == 0
    # The same file cut short and written again in place: shorter than the cache knew it.
    data = file.read_bytes()
    with file.open("r+b") as rewritten:
        rewritten.truncate(len(data) - 1)
    assert _first_search_reads(file, monkeypatch) == expected


def test_a_filter_covering_fewer_entries_than_now_kept_is_not_used(decoys, monkeypatch) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    index_every_window(file, ArchiveLimits(max_items=12))
    # Default bounds keep more of each window than those filters saw.
    assert _first_search_reads(file, monkeypatch) == expected
    # A writing process adds filters that cover them; the narrower ones stay usable too.
    _first_search_reads(file, monkeypatch, read_only=False)
    assert _records_in(file) == 6
    assert _first_search_reads(file, monkeypatch) == 0


def test_a_link_in_place_of_the_cache_is_neither_read_nor_written(
    tmp_path, decoys, monkeypatch
) -> None:
    file = decoys
    elsewhere = tmp_path / "elsewhere"
    index_every_window(file)
    cache_of(file).rename(elsewhere)
    cache_of(file).symlink_to(elsewhere)
    expected_bytes = elsewhere.read_bytes()
    with resumed(file) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        assert read  # the linked filters were not used
    cache_of(file).unlink()
    cache_of(file).symlink_to(tmp_path / "not-there")
    index_every_window(file)
    assert not (tmp_path / "not-there").exists()
    assert elsewhere.read_bytes() == expected_bytes


def test_a_cache_that_cannot_be_written_leaves_the_search_as_it_was(decoys, monkeypatch) -> None:
    file = decoys
    expected = _first_search_reads(file, monkeypatch)
    cache_of(file).mkdir()  # in the way of the file, as a read-only directory would be
    assert _first_search_reads(file, monkeypatch, read_only=False) == expected
    assert _first_search_reads(file, monkeypatch) == expected


def test_a_search_reads_a_few_pages_of_each_filter(manager, script, monkeypatch) -> None:
    rng = random.Random(3)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(3000)]
    for window in range(3):
        for n in range(60):
            script.exchange(n, detail=" ".join(rng.choices(words, k=40)))
        script.rollover(f"Summary of window {window}", EMPTY_SNAPSHOT)
    manager.close()
    file = manager.session_file
    index_every_window(file)
    read: list[int] = []
    reading = SearchCache.read_at

    def counted(cache: SearchCache, offset: int, length: int) -> bytes | None:
        read.append(length)
        return reading(cache, offset, length)

    monkeypatch.setattr(SearchCache, "read_at", counted)
    with resumed(file) as state:
        # The first search reads each record's description (a query of three bytes reads
        # no bitmap: it cannot be judged, and the windows are read).
        assert history(state, "search_contents", query="q-z")["items"] == []
        for query in (NOWHERE, "never-found-either", "zzzz"):
            read.clear()
            assert history(state, "search_contents", query=query)["items"] == []
            # Bitmaps are read a page at a time, and most windows rule a query out with the
            # first page they read.
            # (A page already read is not read again.)
            assert all(length <= PAGE_BYTES for length in read)
            assert len(read) <= 3 * 3
            assert len(read) >= 3 or query != NOWHERE
    assert cache_of(file).stat().st_size > 3 * 10 * PAGE_BYTES


def test_a_session_the_typescript_extension_wrote_gets_its_cache_lazily(
    tmp_path, monkeypatch
) -> None:
    from support.extension_files import tree_file

    file = tree_file(tmp_path)
    original = file.read_bytes()
    queries = ["code name", "Pick a code", "AMBER", "rolling over", NOWHERE, "Changelog"]

    def searched(read_only: bool) -> tuple[list[dict[str, Any]], int]:
        with resumed(file, read_only=read_only) as state:
            read = counting_reads(state, monkeypatch)
            found = [history(state, "search_contents", query=query) for query in queries]
            return found, len(read)

    without, read_without = searched(read_only=True)
    assert read_without > 0
    assert not cache_of(file).exists()
    # The first search in a process writing the session reads the archive and makes its
    # filter; the next resume answers the same, reading only where a hit may be.
    assert searched(read_only=False)[0] == without
    assert cache_of(file).exists()
    with resumed(file) as state:
        read = counting_reads(state, monkeypatch)
        assert history(state, "search_contents", query=NOWHERE)["items"] == []
        assert read == []
    assert searched(read_only=True)[0] == without
    assert file.read_bytes() == original  # the session file itself is never touched


@pytest.mark.slow  # a long session searched many times
def test_lazy_filter_making_is_paid_for_by_reading(decoys, monkeypatch) -> None:
    """Making filters costs more than reading: an older session's first search makes only
    as many as its reading pays for, and the rest come with later searches."""
    from ctxmodes_tree import archive_history, search_cache

    monkeypatch.setattr(search_cache, "FREE_MAKING_S", 0.0)
    making = archive_history.window_filter_of

    def slow_making(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)  # far longer than reading one of these windows
        return making(*args, **kwargs)

    monkeypatch.setattr(archive_history, "window_filter_of", slow_making)
    file = decoys
    windows = len(_window_sizes(file))
    assert windows == 3
    expected = answers(file)
    made = []
    for _ in range(windows):
        _first_search_reads(file, monkeypatch, read_only=False)
        made.append(_records_in(file))
    # One window a search: the others' reading had not paid for theirs.
    assert made == [1, 2, 3]
    assert _first_search_reads(file, monkeypatch) == 0
    assert answers(file) == expected
