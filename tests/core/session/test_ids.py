from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import UTC, datetime

import pytest

from ctxmodes.session import ids


def test_entry_ids_are_eight_hex_characters_and_avoid_existing_ones() -> None:
    taken: set[str] = set()
    for _ in range(2000):
        new = ids.new_entry_id(taken)
        assert re.fullmatch(r"[0-9a-f]{8}", new)
        assert new not in taken
        taken.add(new)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_does_not_repeat_its_parents_entry_ids() -> None:
    ids.new_entry_id(set())  # the parent holds random digits not yet handed out
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.write(writer, "".join(ids.new_entry_id(set()) for _ in range(100)).encode())
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as stream:
        childs = stream.read()
    os.waitpid(child, 0)
    parents = "".join(ids.new_entry_id(set()) for _ in range(100))
    assert len(childs) == len(parents) == 800
    assert childs != parents


def test_entry_ids_fall_back_to_a_uuid_when_everything_collides() -> None:
    class Everything:
        def __contains__(self, item: object) -> bool:
            return True

    assert re.fullmatch(r"[0-9a-f-]{36}", ids.new_entry_id(Everything()))


def test_session_ids_are_increasing_uuid_v7() -> None:
    generated = [ids.new_session_id() for _ in range(500)]
    pattern = r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    assert all(re.fullmatch(pattern, value) for value in generated)
    assert generated == sorted(generated)
    assert len(set(generated)) == len(generated)
    millis = int(generated[-1].replace("-", "")[:12], 16)
    assert abs(millis - datetime.now(UTC).timestamp() * 1000) < 60_000


@pytest.mark.parametrize("value", ["abc", "a.b-c_d", "A1", "0"])
def test_valid_custom_session_ids(value: str) -> None:
    assert ids.validate_session_id(value) == value


@pytest.mark.parametrize("value", ["", "-a", "a-", "a b", "a/b", "é"])
def test_invalid_custom_session_ids(value: str) -> None:
    with pytest.raises(ids.InvalidSessionIdError, match="Session id must be non-empty"):
        ids.validate_session_id(value)


def test_timestamps_are_iso_with_milliseconds() -> None:
    moment = datetime(2026, 1, 5, 12, 34, 56, 789999, tzinfo=UTC)
    assert ids.format_timestamp(moment) == "2026-01-05T12:34:56.789Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ids.now_timestamp())


DATES = [
    "2025-01-01T00:00:01.000Z",
    "2025-01-01T00:00:01Z",
    "2025-01-01T00:00:01.5Z",
    "2025-01-01T00:00:01.123456Z",
    "2025-01-01",
    "2025-01",
    "2025",
    "2024-02-29T23:59:59.999Z",
    "2025-02-29T00:00:00.000Z",
    "2025-01-01T24:00:00Z",
    "2025-01-01T10:00:00+02:00",
    "+010000-01-01T00:00:00Z",
    "-000001-01-01T00:00:00Z",
    "1960-06-30T12:00:00.000Z",
    "2025-13-01T00:00:00Z",
    "nonsense",
    "",
    "2025-01-01T00:60:00Z",
    "2025-04-31T00:00:00Z",
    "2025-01-01T24:00:01Z",
    "2025-00-01",
    "2025-01-00",
    "2025-01-01T10:00",
    "2025-01-01T10:00:00+0200",
    "2025-01-01T10:00:00.Z",
]


def test_timestamp_parsing_matches_javascript_date(node: str) -> None:
    script = (
        "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{"
        "process.stdout.write(JSON.stringify(JSON.parse(s).map(t=>{"
        "const v=new Date(t).getTime();return Number.isNaN(v)?null:v})))})"
    )
    result = subprocess.run(
        [node, "-e", script],
        input=json.dumps(DATES),
        capture_output=True,
        text=True,
        check=True,
    )
    assert [ids.timestamp_ms(value) for value in DATES] == json.loads(result.stdout)


def test_timestamp_parsing_of_non_strings() -> None:
    assert ids.timestamp_ms(None) is None
    assert ids.timestamp_ms(5) is None
