from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodes.tools.output import (
    TailBuffer,
    format_size,
    split_lines,
    truncate_head,
    truncate_tail,
)


def test_split_lines_ignores_trailing_newline():
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]


def test_format_size():
    assert format_size(512) == "512B"
    assert format_size(50 * 1024) == "50.0KB"
    assert format_size(3 * 1024 * 1024 // 2) == "1.5MB"


def test_small_text_is_untouched():
    for truncate in (truncate_head, truncate_tail):
        result = truncate("one\ntwo\n")
        assert not result.truncated
        assert result.content == "one\ntwo\n"
        assert result.total_lines == result.output_lines == 2


def test_head_keeps_first_lines_by_line_limit():
    result = truncate_head("\n".join(str(i) for i in range(10)), max_lines=3)
    assert result.content == "0\n1\n2"
    assert (result.truncated_by, result.output_lines, result.total_lines) == ("lines", 3, 10)


def test_head_reports_an_oversized_first_line():
    result = truncate_head("x" * 20 + "\nshort", max_bytes=10)
    assert result.first_line_exceeds_limit
    assert result.content == ""


def test_tail_keeps_last_lines_by_byte_limit():
    text = "aaaa\nbbbb\ncccc\n"
    result = truncate_tail(text, max_bytes=9)
    assert result.content == "bbbb\ncccc"
    assert result.truncated_by == "bytes"


def test_tail_of_a_single_huge_line_is_partial_and_utf8_safe():
    text = "é" * 30  # 60 bytes
    result = truncate_tail(text, max_bytes=11)
    assert result.last_line_partial
    assert result.content == "é" * 5
    assert result.output_bytes == 10


def _tail_buffer_result(chunks, max_lines, max_bytes):
    buffer = TailBuffer(max_lines=max_lines, max_bytes=max_bytes)
    for chunk in chunks:
        buffer.append(chunk)
    snapshot = buffer.snapshot()
    buffer.close()
    return snapshot


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet="ab\né", max_size=40), max_size=12),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=4, max_value=24),
)
def test_tail_buffer_matches_truncate_tail_on_the_whole_stream(parts, max_lines, max_bytes):
    chunks = [part.encode() for part in parts]
    snapshot = _tail_buffer_result(chunks, max_lines, max_bytes)
    whole = "".join(parts)
    expected = truncate_tail(whole, max_lines=max_lines, max_bytes=max_bytes)
    assert snapshot.truncation == expected
    lines = split_lines(whole)
    assert snapshot.last_line_bytes == (len(lines[-1].encode()) if lines else 0)
    if expected.truncated:
        assert snapshot.full_output_path is not None
        assert Path(snapshot.full_output_path).read_text() == "".join(parts)
        os.unlink(snapshot.full_output_path)
    else:
        assert snapshot.full_output_path is None


def test_tail_buffer_memory_stays_bounded():
    buffer = TailBuffer(max_lines=10, max_bytes=100)
    for i in range(5000):
        buffer.append(f"line {i}\n".encode())
    assert len(buffer._buffer) <= 400
    snapshot = buffer.snapshot()
    buffer.close()
    assert snapshot.truncation.total_lines == 5000
    assert snapshot.truncation.content.endswith("line 4999")
    assert snapshot.full_output_path is not None
    assert Path(snapshot.full_output_path).read_text().count("\n") == 5000
    os.unlink(snapshot.full_output_path)


@pytest.mark.pi
def test_truncation_agrees_with_pi(pi_node):
    texts = [
        "",
        "one line",
        "a\nb\nc\n",
        "\n\n\n",
        "x" * 70 + "\nshort\n",
        "é" * 40,
        "line\n" * 30,
        "αβγ\n" * 12 + "tail without newline",
        "emoji 😀😀😀\n" * 5,
    ]
    cases = [
        {"text": text, "maxLines": lines, "maxBytes": size}
        for text in texts
        for lines in (1, 3, 50)
        for size in (8, 33, 1000)
    ]
    answers = pi_node(
        "core/tools/truncate.js",
        "const limits = (c) => ({maxLines: c.maxLines, maxBytes: c.maxBytes});\n"
        "const out = input.map(c => [mod.truncateHead(c.text, limits(c)),"
        " mod.truncateTail(c.text, limits(c))]);\n"
        "process.stdout.write(JSON.stringify(out));\n",
        cases,
    )
    for case, (pi_head, pi_tail) in zip(cases, answers, strict=True):
        for ours, theirs in (
            (truncate_head(case["text"], case["maxLines"], case["maxBytes"]), pi_head),
            (truncate_tail(case["text"], case["maxLines"], case["maxBytes"]), pi_tail),
        ):
            assert {"content": ours.content, **ours.to_details()} == theirs, case
