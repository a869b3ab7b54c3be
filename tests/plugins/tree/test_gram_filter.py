"""The gram filter: a "cannot contain" answer is never wrong, and it is usually given."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ctxmodes_tree.gram_filter import GRAM_BYTES, GramFilter, encoded

# Characters that make the byte view differ from the character view: multi-byte UTF-8,
# astral characters, a lone surrogate, NUL (the filter's own joint), combining marks.
_ALPHABET = st.sampled_from(
    ["a", "b", "A", " ", "\n", "\x00", "é", "e\u0301", "€", "日本", "😀", "\ud83d", "\ude00"]
)
_TEXT = st.lists(_ALPHABET, max_size=12).map("".join)


@pytest.mark.slow  # many generated texts
@given(texts=st.lists(_TEXT, max_size=6), query=_TEXT)
@example(texts=["ab", "cd"], query="abcd")  # spans two texts: may pass, must not be a hit
@example(texts=["Secret"], query="secret")
@example(texts=["\ud83d\ude00"], query="😀")  # a surrogate pair is not the astral character
def test_a_rejected_query_is_in_no_text(texts: list[str], query: str) -> None:
    found = GramFilter.of_texts(texts)
    if not found.may_contain(query):
        assert not any(query in text for text in texts)


@given(texts=st.lists(_TEXT, min_size=1, max_size=6), data=st.data())
def test_every_substring_of_a_text_passes(texts: list[str], data: st.DataObject) -> None:
    found = GramFilter.of_texts(texts)
    text = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    assert found.may_contain(text[start:end])


def test_queries_shorter_than_a_gram_always_pass() -> None:
    found = GramFilter.of_texts(["nothing alike"])
    for query in ("", "z", "zq", "zqx", "é", "€"):
        assert len(encoded(query)) < GRAM_BYTES
        assert found.may_contain(query)


def test_an_absent_query_is_almost_always_rejected() -> None:
    rng = random.Random(5)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(4000)]
    texts = [" ".join(rng.choices(words, k=120)) for _ in range(500)]  # ~350 kB
    found = GramFilter.of_texts(texts)
    absent = [f"{rng.choice(words)}-{rng.choice(words)}" for _ in range(1000)]
    assert not any(query in text for query in absent for text in texts)
    rejected = sum(not found.may_contain(query) for query in absent)
    assert rejected >= 990
    # Eight bits per distinct gram: the filter is a small fraction of the text.
    assert len(found.bitmap) < sum(map(len, texts)) // 5


def test_an_empty_window_rejects_every_query_of_a_gram_or_more() -> None:
    found = GramFilter.of_texts([])
    # Four bytes are enough to judge, whatever the characters.
    for query in ("zqxj", "anything", "😀", "é€"):
        assert not found.may_contain(query)
    assert found.may_contain("abc")


@pytest.mark.parametrize(("size", "bitmap"), [(0, b""), (64, b"\x00" * 7), (100, b"\x00" * 13)])
def test_a_bitmap_of_the_wrong_shape_is_refused(size: int, bitmap: bytes) -> None:
    with pytest.raises(ValueError, match="64-bit words"):
        GramFilter(size, bitmap)
