"""The SSE reader: WHATWG lines and fields, Pi's dispatch rules, the same events however the
body is cut into reads."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.providers.transport.sse import EventReader, ServerSentEvent, iter_events


def _read(pieces: list[str], *, at_end: bool = True) -> list[tuple[str, str]]:
    reader = EventReader()
    events = [event for piece in pieces for event in reader.feed(piece)]
    if at_end:
        events += reader.end()
    return [(event.event, event.data) for event in events]


def test_every_line_end_spelling_ends_a_line() -> None:
    body = "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n"
    assert _read([body]) == [("a", "1"), ("b", "2"), ("c", "3")]


def test_a_crlf_split_between_reads_is_one_line_end() -> None:
    assert _read(["data: 1\r", "\n\r", "\ndata: 2\r", "\r"]) == [("", "1"), ("", "2")]


def test_fields_as_the_whatwg_rules_read_them() -> None:
    body = (
        ": a comment\n"
        "data:no space\n"
        "data:  two spaces\n"
        "data\n"  # a field name alone: an empty value
        "Data: not a field (names are case-sensitive)\n"
        "id: 7\nretry: 10\nunknown: x\n\n"
    )
    assert _read([body]) == [("", "no space\n two spaces\n")]


def test_a_block_with_an_event_but_no_data_is_dispatched_as_pi_does() -> None:
    assert _read(["event: ping\n\nid: 3\n\n\n\ndata: x\n\n"]) == [("ping", ""), ("", "x")]


def test_the_event_name_does_not_carry_over_to_the_next_block() -> None:
    assert _read(["event: a\ndata: 1\n\ndata: 2\n\n"]) == [("a", "1"), ("", "2")]


def test_a_byte_order_mark_is_dropped_at_the_start_only() -> None:
    assert _read(["\ufeffdata: 1\n\n\ufeffdata: 2\n\n"]) == [("", "1")]
    assert _read(["\ufeff", "data: 1\n\n"]) == [("", "1")]


def test_an_event_the_stream_ends_inside_is_dispatched_only_when_asked() -> None:
    assert _read(["data: 1\n\nevent: last\ndata: 2"]) == [("", "1"), ("last", "2")]
    assert _read(["data: 1\n\nevent: last\ndata: 2"], at_end=False) == [("", "1")]
    assert _read(["data: 1\n\ndata: 2\n"]) == [("", "1"), ("", "2")]


def test_a_long_line_in_many_pieces_is_joined() -> None:
    pieces = ["data: "] + ["x"] * 5000 + ["\n\n"]
    assert _read(pieces) == [("", "x" * 5000)]


def test_iter_events_reads_a_body_of_any_content_type() -> None:
    body = b"event: a\ndata: {}\n\ndata: tail"
    response = httpx.Response(200, content=body, headers={"content-type": "text/plain"})
    assert list(iter_events(response.iter_text())) == [ServerSentEvent("a", "{}")]
    response = httpx.Response(200, content=body)
    events = list(iter_events(response.iter_text(), dispatch_at_end=True))
    assert events[-1] == ServerSentEvent("", "tail")


_values = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)))
_blocks = st.lists(
    st.tuples(st.sampled_from(["", "message_start", "ping"]), st.lists(_values, max_size=3)),
    max_size=6,
)


@given(
    blocks=_blocks,
    line_end=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_the_same_events_however_the_body_is_cut(
    blocks: list[tuple[str, list[str]]], line_end: str, cuts: list[int]
) -> None:
    body = ""
    expected = []
    for event, data in blocks:
        lines = ([f"event: {event}"] if event else []) + [f"data: {value}" for value in data]
        body += "".join(line + line_end for line in lines) + line_end
        if event or data:
            expected.append((event, "\n".join(data)))
    points = sorted({min(cut, len(body)) for cut in cuts})
    bounds = zip([0, *points], [*points, len(body)], strict=True)
    pieces = [body[start:stop] for start, stop in bounds]
    assert _read(pieces) == expected
