"""Mutated real session files for fuzz tests, and a hard time bound per example.

The seeds are real lines: a Tree session written by ``ctxmodes demo`` (window markers,
notes, archives, branch summaries) and sessions Pi itself wrote (the oracle corpus). A
mutation is what a hostile user or a damaged disk does to such a file: flip bits, cut a line
short, give two entries one id, tie parent links into a cycle, nest a value deeply (beside
the message or inside it, up to and just past the reader's limit), make an entry's type a
list, put a lone surrogate escape (which Pi writes) or invalid UTF-8 in, drop or repeat lines.

Hypothesis' own ``deadline`` only judges an example after it returns, so a hang would hang
the suite; :func:`bounded` runs the example in a thread and fails once it takes too long.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from support import timebox

T = TypeVar("T")

#: Generous on a loaded machine, far below what a hang takes.
EXAMPLE_SECONDS = 20.0


def fuzz_settings(max_examples: int) -> settings:
    """Deterministic runs (the same examples each time), a deadline per example, and no
    health check against slow data generation (the seed files are real and a few KB long)."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=timedelta(seconds=EXAMPLE_SECONDS),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        database=None,
    )


def bounded(call: Callable[[], T], seconds: float = EXAMPLE_SECONDS) -> T:
    """``call()``'s result, failing instead of hanging after ``seconds``."""
    return timebox.bounded(call, seconds)


class SeedSessions:
    """The seed files' lines, with a short repr (Hypothesis prints its arguments)."""

    def __init__(self, lines: list[list[bytes]]) -> None:
        self.lines = lines

    def __repr__(self) -> str:
        return f"SeedSessions({len(self.lines)} files)"


def seed_sessions(directory: Path, oracle_cases: Path) -> list[list[bytes]]:
    """The lines of each seed session (see the module docstring)."""
    from ctxmodes.cli import main

    demo = directory / "demo.jsonl"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["demo", "--session", str(demo)]) == 0
    files = [demo] + [
        oracle_cases / f"{name}.jsonl"
        for name in ("linear_thinking_tools", "agent_compact", "branch_simple")
    ]
    return [path.read_bytes().splitlines() for path in files]


def _with_field(line: bytes, name: str, value: Any, *, raw: bool = False) -> bytes:
    """``line`` with field ``name`` set to ``value`` (JSON text already, with ``raw``)."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    if not isinstance(record, dict) or not record:
        return line
    try:
        if not raw:
            record[name] = value
            return orjson.dumps(record)
        record.pop(name, None)
        return orjson.dumps(record)[:-1] + b',"' + name.encode() + b'":' + value + b"}"
    except orjson.JSONEncodeError:  # an earlier mutation nested it past orjson's limit
        return line


def _with_deep_message(line: bytes, depth: int) -> bytes:
    """``line`` with its message's content one text block holding ``depth`` nested arrays."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    if not isinstance(record, dict) or not isinstance(record.get("message"), dict):
        return line
    nested: Any = 0
    for _ in range(depth):
        nested = [nested]
    block = {"type": "text", "text": "deep", "nested": nested}
    try:
        return orjson.dumps({**record, "message": {**record["message"], "content": [block]}})
    except orjson.JSONEncodeError:  # an earlier mutation nested it past orjson's limit
        return line


@st.composite
def mutated_session(draw: st.DrawFn, seeds: list[list[bytes]]) -> bytes:
    """The bytes of a seed session after a few random mutations."""
    lines = list(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                [
                    "flip",
                    "truncate",
                    "duplicate_id",
                    "cycle",
                    "deep",
                    "deep_message",
                    "type_list",
                    "surrogate",
                    "utf8",
                    "drop",
                    "repeat",
                ]
            )
        )
        at = draw(st.integers(0, len(lines) - 1))
        line = lines[at]
        if kind == "flip" and line:
            position = draw(st.integers(0, len(line) - 1))
            bit = 1 << draw(st.integers(0, 7))
            lines[at] = line[:position] + bytes([line[position] ^ bit]) + line[position + 1 :]
        elif kind == "truncate":
            lines[at] = line[: draw(st.integers(0, len(line)))]
        elif kind in ("duplicate_id", "cycle"):
            other = lines[draw(st.integers(0, len(lines) - 1))]
            try:
                other_id = orjson.loads(other).get("id")
            except (orjson.JSONDecodeError, AttributeError):
                continue
            field = "id" if kind == "duplicate_id" else "parentId"
            lines[at] = _with_field(line, field, other_id)
        elif kind == "deep":
            depth = draw(st.sampled_from([150, 199, 200, 201, 253, 256, 600, 1100, 5000]))
            nested = b"[" * depth + b"0" + b"]" * depth
            lines[at] = _with_field(line, "deep", nested, raw=True)
        elif kind == "deep_message":
            # entry > message > content > block > the nested arrays: the whole line nests
            # 4 + depth levels, around MAX_NESTING (200).
            depth = draw(st.sampled_from([150, 195, 196, 197]))
            lines[at] = _with_deep_message(line, depth)
        elif kind == "type_list":
            try:
                entry_type = orjson.loads(line).get("type")
            except (orjson.JSONDecodeError, AttributeError):
                continue
            lines[at] = _with_field(line, "type", [entry_type])
        elif kind == "surrogate":
            escape = draw(st.sampled_from([b"\\ud800", b"\\udfff", b"\\udcff"]))
            lines[at] = line.replace(b'":"', b'":"' + escape, draw(st.integers(1, 3)))
        elif kind == "utf8":
            position = draw(st.integers(0, len(line)))
            junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xe2\x80"]))
            lines[at] = line[:position] + junk + line[position:]
        elif kind == "drop" and len(lines) > 1:
            del lines[at]
        elif kind == "repeat":
            lines.insert(at, line)
    ending = draw(st.sampled_from([b"\n", b""]))
    return b"\n".join(lines) + ending
