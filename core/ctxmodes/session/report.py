"""Human- and machine-readable views of a session, for the command line.

:func:`context_report` returns the same JSON the Pi oracle script ``check_open.mjs`` prints for
a position (``leafId``, ``branchIds``, ``contextEntryIds``, ``context``), so the two can be
compared directly; :func:`write_context_report` writes it as one JSON line without holding it
in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any, Final, Literal

import orjson

from ctxmodes.forked_work import map_in_turns
from ctxmodes.session import codec
from ctxmodes.session.context import SessionContext
from ctxmodes.session.convert import convert_message_json, convert_to_llm_json
from ctxmodes.session.index_arrays import IndexRuns
from ctxmodes.session.manager import PositionIndexes, SessionManager

__all__ = ["NULL_POSITION", "context_report", "write_context_report"]

# Messages (and ids) encoded per call while a report is written: few calls, bounded memory.
_WRITE_BLOCK: Final = 256
_ID_BLOCK: Final = 4096
# Messages encoded in one turn when a long context is encoded by two processes in turns:
# fewer turns cost less handing over, shorter ones hold less at once.
_TURN: Final = 1024

#: ``at`` value for the position before the first entry (Pi's ``resetLeaf()``).
NULL_POSITION: Final = "null"


def _position(manager: SessionManager, at: str | None) -> PositionIndexes:
    if at is None:
        return manager.current_position_indexes()
    return manager.position_indexes_at(None if at == NULL_POSITION else at)


def context_report(
    manager: SessionManager, at: str | Literal["null"] | None = None, *, llm: bool = False
) -> dict[str, Any]:
    """``{leafId, branchIds, contextEntryIds, context}`` at the leaf, at entry ``at``, or
    (``at="null"``) before the first entry; with ``llm`` also ``llm``, the messages after
    ``convertToLlm``.

    :raises EntryNotFoundError: if ``at`` names no entry.
    """
    position = _position(manager, at).position()
    context = position.context.to_json()
    report: dict[str, Any] = {
        "leafId": position.leaf_id,
        "branchIds": position.branch_ids,
        "contextEntryIds": position.context_entry_ids,
        "context": context,
    }
    if llm:
        report["llm"] = convert_to_llm_json(context["messages"])
    return report


def write_context_report(
    manager: SessionManager,
    write: Callable[[bytes], object],
    at: str | Literal["null"] | None = None,
    *,
    llm: bool = False,
) -> None:
    """:func:`context_report` as one JSON line (``JSON.stringify`` bytes and ``\\n``), handed
    to ``write`` in pieces.

    The messages are read from the session and encoded a block at a time, so the report is
    never held in memory, neither as objects nor as text, and each message is encoded on its
    own: a message the store accepted always encodes, however deep the report wraps it.

    :raises EntryNotFoundError: if ``at`` names no entry.
    """
    position = _position(manager, at)
    context = position.context
    write(b'{"leafId":' + codec.dumps(position.leaf_id) + b',"branchIds":')
    _write_ids(write, position.ids, position.branch)
    write(b',"contextEntryIds":')
    _write_ids(write, position.ids, position.context_entries)
    write(b',"context":{"messages":')
    _write_blocks(write, _stringified_messages(context))
    write(b"," + codec.dumps(context.settings_json())[1:])
    if llm:
        converted = map(convert_message_json, context.message_json)
        write(b',"llm":')
        _write_array(write, (message for message in converted if message is not None))
    write(b"}\n")


def _stringified_messages(context: SessionContext) -> Iterable[bytes | bytearray]:
    """The context's messages encoded a block at a time; a long context's by this process and
    a forked copy of it in turns (encoding is most of the time a report of a long context
    takes, and the two processes' blocks come out in order, whole, without any held long)."""
    count = len(context.message_json)
    if count < 2 * _TURN:
        return context.stringified_messages()

    def turn(number: int) -> bytes:
        start = number * _TURN
        return b",".join(context.stringified_messages(start, start + _TURN))

    return map_in_turns(turn, -(-count // _TURN))


def _write_ids(write: Callable[[bytes], object], ids: list[str], indexes: IndexRuns) -> None:
    """The ids of the entries at ``indexes`` as a JSON array, a block at a time (a list of a
    million ids would cost more than the index of the whole session): each run's ids are a
    slice of the list."""
    blocks = (
        ids[start : min(start + _ID_BLOCK, run.stop)]
        for run in indexes.runs
        for start in range(run.start, run.stop, _ID_BLOCK)
    )
    _write_blocks(write, map(_encode_ids, blocks))


def _encode_ids(ids: list[str]) -> bytes:
    try:
        return orjson.dumps(ids)[1:-1]
    except orjson.JSONEncodeError:  # a lone surrogate, which JSON.parse lets ids hold
        return codec.dumps(ids)[1:-1]


def _write_array(write: Callable[[bytes], object], items: Iterable[Any]) -> None:
    iterator: Iterator[Any] = iter(items)
    blocks = iter(lambda: list(islice(iterator, _WRITE_BLOCK)), [])
    _write_blocks(write, map(codec.dumps_items, blocks))


def _write_blocks(write: Callable[[bytes], object], blocks: Iterable[bytes | bytearray]) -> None:
    """A JSON array, from its members encoded a block at a time (without the brackets)."""
    separator = b"["
    for block in blocks:
        write(separator + block)
        separator = b","
    write(b"]" if separator == b"," else b"[]")
