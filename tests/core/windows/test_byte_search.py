import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodes.windows import byte_search
from ctxmodes.windows.byte_search import SearchableBytes

data = st.binary(max_size=64) | st.text(alphabet="ab\x00é", max_size=40).map(str.encode)
SEARCHES = pytest.mark.parametrize("c_library", [True, False], ids=["memmem", "bytes.find"])


def searchable(haystack, c_library, monkeypatch):
    if not c_library:
        monkeypatch.setattr(byte_search, "_MEMMEM", None)
    return SearchableBytes(haystack)


@SEARCHES
@settings(max_examples=300)
@given(data, st.binary(min_size=1, max_size=4), st.data())
def test_find_agrees_with_bytes_find(c_library, haystack, needle, bounds):
    start = bounds.draw(st.integers(0, len(haystack)))
    end = bounds.draw(st.integers(0, len(haystack)))
    if bounds.draw(st.booleans()):
        needle = haystack[start : start + len(needle)] or needle
    with pytest.MonkeyPatch.context() as monkeypatch:
        buffer = searchable(haystack, c_library, monkeypatch)
        assert buffer.find(needle, start, end) == haystack.find(needle, start, end)


@SEARCHES
def test_an_empty_buffer_finds_nothing(c_library, monkeypatch):
    assert searchable(b"", c_library, monkeypatch).find(b"a", 0, 0) == -1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc or musl only")
def test_linux_searches_with_the_c_library():
    assert byte_search._MEMMEM is not None
