"""A window's filters: no block cut loses a hit, and a search reads only the blocks that may
hold one, in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes_tree import window_filter
from ctxmodes_tree.window_filter import WindowFilter, entries_to_read, window_filter_of

_ALPHABET = st.sampled_from(["a", "b", "A", " ", "\x00", "é", "日本", "😀", "\ud83d"])
_TEXT = st.lists(_ALPHABET, max_size=10).map("".join)
#: A window's entries, oldest first: the text of the item each gives (``None`` for an entry
#: that gives none, such as a window marker).
_ENTRIES = st.lists(st.none() | _TEXT, min_size=1, max_size=20)


def _filter(entries: list[str | None], block_entries: int) -> WindowFilter:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(window_filter, "BLOCK_ENTRIES", block_entries)
        positioned = [(n, text) for n, text in enumerate(entries) if text is not None]
        return window_filter_of(positioned, len(entries))


@given(entries=_ENTRIES, block_entries=st.integers(1, 6), data=st.data())
def test_the_entries_read_hold_every_hit(
    entries: list[str | None], block_entries: int, data: st.DataObject
) -> None:
    found = _filter(entries, block_entries)
    # A query cut from one text, or spanning two (which no text may hold).
    first = data.draw(_TEXT)
    query = data.draw(st.sampled_from([first, *[t for t in entries if t]])) + data.draw(_TEXT)
    # The kept entries: the archive's newest, however the bounds cut them.
    kept_count = data.draw(st.integers(1, len(entries)))
    ids = [f"e{n}" for n in range(len(entries))]
    kept = ids[len(ids) - kept_count :]
    read = entries_to_read(found, query, kept)
    holding = [ids[n] for n, text in enumerate(entries) if text is not None and query in text]
    assert set(holding) & set(kept) <= set(read)
    # A subsequence of the kept entries, in their order, made of whole blocks.
    assert [entry for entry in kept if entry in set(read)] == list(read)
    if len(read) < len(kept):
        assert found.blocks
    if not found.may_contain(query):
        assert not holding


def test_a_window_of_one_block_keeps_no_block_filter() -> None:
    found = _filter(["alpha", None, "beta"], 3)
    assert found.blocks == []
    assert found.blocks_may_contain("alpha") == []
    cut = _filter(["alpha", None, "beta"], 2)
    # Newest block first: the marker and "beta", then "alpha".
    assert cut.blocks_may_contain("beta") == [True, False]
    assert cut.blocks_may_contain("alpha") == [False, True]
    kept = ["e0", "e1", "e2"]
    assert entries_to_read(cut, "alpha", kept) == ["e0"]
    assert entries_to_read(cut, "beta", kept) == ["e1", "e2"]
    assert entries_to_read(cut, "found nowhere at all", kept) == []
    assert entries_to_read(cut, "ab", kept) is kept  # too short to judge: every block
    assert entries_to_read(cut, "beta", kept[1:]) == ["e1", "e2"]
    assert entries_to_read(cut, "alpha", kept[2:]) == []
