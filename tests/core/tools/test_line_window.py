from __future__ import annotations

import io
import itertools

from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.tools import line_window
from ctxmodes.tools.line_window import decoded_chunks, scan_window
from ctxmodes.tools.output import truncate_head, utf8_len

# Short lines, empty lines, multi-byte characters and the replacement character: what moves
# line and byte counts apart.
_TEXT = st.lists(st.sampled_from(["a", "bc", "\n", "\n\n", "é", "€", "😀", "\ufffd"])).map("".join)


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(
    text=_TEXT,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    start=st.integers(min_value=0, max_value=30),
    limit=st.none() | st.integers(min_value=1, max_value=30),
    max_lines=st.integers(min_value=1, max_value=6),
    max_bytes=st.integers(min_value=1, max_value=40),
)
def test_the_window_is_what_reading_the_whole_text_gives(
    text: str, cuts: list[int], start: int, limit: int | None, max_lines: int, max_bytes: int
) -> None:
    """However the text comes in pieces, the window's counts and its cut are those of the
    whole text split into lines, as the read tool used to compute them all at once."""
    stop = None if limit is None else start + limit
    window = scan_window(_pieces(text, cuts), start, stop, max_lines, max_bytes)
    lines = text.split("\n")
    assert window.total_lines == len(lines)
    if start >= len(lines):
        return
    end = len(lines) if stop is None else min(stop, len(lines))
    whole = "\n".join(lines[start:end])
    assert window.truncation(max_lines, max_bytes) == truncate_head(whole, max_lines, max_bytes)
    assert window.first_line_bytes == utf8_len(lines[start])


def test_what_is_kept_of_a_long_window_is_bounded() -> None:
    """A window of a million lines keeps a few more lines than the cut shows, not the
    window."""
    pieces = ("line\n" * 10_000 for _ in range(100))
    window = scan_window(pieces, 5, None, 3, 1_000)
    assert window.total_lines == 1_000_001
    assert window.window_lines == 999_995
    assert window.head == "line\nline\nline\nline\nline"
    long_line = ("x" * 10_000 for _ in range(100))
    window = scan_window(long_line, 0, None, 3, 1_000)
    assert len(window.head) == 1_001
    assert window.first_line_bytes == 1_000_000


@given(data=st.binary(max_size=200), chunk=st.integers(min_value=1, max_value=9))
def test_decoding_in_pieces_is_decoding_it_whole(data: bytes, chunk: int) -> None:
    """Invalid bytes and characters cut between reads come out as one decode of the whole
    gives them."""
    original = line_window.CHUNK_BYTES
    line_window.CHUNK_BYTES = chunk
    try:
        stream = io.BytesIO(data[chunk:])
        text = "".join(decoded_chunks(stream, data[:chunk]))
    finally:
        line_window.CHUNK_BYTES = original
    assert text == data.decode("utf-8", "replace")


def test_each_read_is_preceded_by_the_check() -> None:
    """``between`` runs before every read, so an aborted call stops within a piece."""
    calls: list[int] = []
    stream = io.BytesIO(b"x" * (3 * line_window.CHUNK_BYTES))
    pieces = decoded_chunks(stream, between=lambda: calls.append(stream.tell()))
    assert "".join(pieces) == "x" * (3 * line_window.CHUNK_BYTES)
    assert calls == [0, line_window.CHUNK_BYTES, 2 * line_window.CHUNK_BYTES, stream.tell()]


def test_every_short_text_in_two_pieces_gives_what_reading_it_whole_gives() -> None:
    """Every text of up to four characters of ``a``, a newline and a two-byte character, cut
    in two anywhere, at every start and a few limits, under small limits: the cases random
    examples reach only by chance (a size cut falling just after a newline, say)."""
    for length in range(5):
        for characters in itertools.product("a\né", repeat=length):
            text = "".join(characters)
            lines = text.split("\n")
            for cut, start, limit, max_lines, max_bytes in itertools.product(
                range(len(text) + 1), range(len(lines)), (None, 1), (1, 2), (1, 2)
            ):
                stop = None if limit is None else start + limit
                window = scan_window([text[:cut], text[cut:]], start, stop, max_lines, max_bytes)
                end = len(lines) if stop is None else min(stop, len(lines))
                whole = "\n".join(lines[start:end])
                expected = truncate_head(whole, max_lines, max_bytes)
                assert window.truncation(max_lines, max_bytes) == expected, (text, cut, start)
