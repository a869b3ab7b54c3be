from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodes.windows import text_arena
from ctxmodes.windows.text_arena import TextArena


def build(texts, block_chars, *, seal=False):
    original = text_arena.BLOCK_CHARS
    text_arena.BLOCK_CHARS = block_chars
    try:
        arena = TextArena()
        for text in texts:
            arena.append(text)
    finally:
        text_arena.BLOCK_CHARS = original
    if seal:
        arena.seal()
    return arena


# Lone surrogates (which session JSON may hold) and characters of 1 to 4 UTF-8 bytes.
ALPHABET = "ab\x00é😀\ud800\udc00"
texts = st.lists(st.text(alphabet=ALPHABET, max_size=8), max_size=30)


@settings(max_examples=200)
@given(
    texts,
    st.integers(1, 40),
    st.text(alphabet=ALPHABET, min_size=1, max_size=3),
    st.booleans(),
    st.data(),
)
def test_search_agrees_with_a_plain_scan(items, block_chars, query, seal, data):
    arena = build(items, block_chars, seal=seal)
    assert len(arena) == len(items)
    for index, text in enumerate(items):
        assert arena.text(index) == text
        assert arena.length(index) == len(text)
    lo = data.draw(st.integers(0, len(items)))
    hi = data.draw(st.integers(lo, len(items)))
    expected = [i for i in range(lo, hi) if query in items[i]]
    assert list(arena.search(query, lo, hi)) == expected
    assert list(arena.search(query, lo, hi, reverse=True)) == expected[::-1]


def test_blocks_are_sealed_and_still_searchable():
    arena = build([f"item {i} " + "x" * 50 for i in range(100)], 200)
    assert list(arena.search("item 42 ", 0, 100)) == [42]
    assert list(arena.search("item 4", 0, 100, reverse=True))[:2] == [49, 48]
    assert list(arena.search("item", 10, 12)) == [10, 11]


def test_sealing_packs_every_pending_text():
    arena = build(["one", "two"], 1_000, seal=True)
    arena.seal()
    arena.append("three")
    assert [arena.text(i) for i in range(3)] == ["one", "two", "three"]
    assert list(arena.search("t", 0, 3)) == [1, 2]


def test_search_is_lazy():
    arena = build(["hit"] * 1000, 64)
    found = arena.search("hit", 0, 1000, reverse=True)
    assert next(found) == 999
    assert next(found) == 998
