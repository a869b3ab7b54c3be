"""RPC framing: records split on LF only, output lines whole and in a client's order."""

from __future__ import annotations

import io
import json
import threading

from ctxmodes.rpc.framing import OutputLines, input_records


class _Trickle(io.RawIOBase):
    """A stream handing out its bytes a few at a time, as a pipe may."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data, self._size = data, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        piece, self._data = self._data[: self._size], self._data[self._size :]
        buffer[: len(piece)] = piece
        return len(piece)


def test_records_end_at_lf_only_whatever_the_chunks() -> None:
    data = '{"a": "x\u2028y\u2029z"}\r\n\n{"b": "é"}\nlast without end'.encode()
    for size in (1, 2, 3, 7, len(data)):
        records = list(input_records(io.BufferedReader(_Trickle(data, size), 4)))
        assert records == ['{"a": "x\u2028y\u2029z"}', "", '{"b": "é"}', "last without end"]


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    assert list(input_records(io.BytesIO(b'{"a": "\xff"}\n'))) == ['{"a": "\ufffd"}']


def test_events_of_other_threads_wait_for_the_response_being_made() -> None:
    out = io.BytesIO()
    lines = OutputLines(out)
    with lines.responding():
        lines.write_event({"type": "mine"})  # the responding thread's own: at once
        other = threading.Thread(target=lines.write_event, args=({"type": "theirs"},))
        other.start()
        other.join()
        lines.write({"type": "response"})
    lines.write_event({"type": "after"})
    written = [json.loads(line)["type"] for line in out.getvalue().splitlines()]
    assert written == ["mine", "response", "theirs", "after"]


def test_a_closed_client_end_stops_the_output_quietly() -> None:
    class Closed(io.BytesIO):
        def write(self, data: bytes) -> int:  # type: ignore[override]
            raise BrokenPipeError

    lines = OutputLines(Closed())
    lines.write({"type": "response"})
    lines.write_event({"type": "event"})  # nothing raised, nothing written
