"""Searching in helper processes: a history search's candidates, each opened and tested for
the literal substring, and the texts of a notes search. A search whose blind-index tokens
many items share opens many of them, and a search of big notes goes through every character
of them, all CPU work; big pages of candidates and big notes searches are done in helper
processes at a lower priority, so they neither hold the interpreter the event loop and every
other call share nor take the cores from them.

A helper process is given, per page, the account's data key and the sealed values with their
associated data, or, per notes search, the texts to go through; it keeps nothing, and
answers what matches.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ctxmodes.session import codec
from ctxmodes.windows import LineMatch, matching_texts
from ctxmodes_remote.service.sealing import open_sealed
from ctxmodes_remote.service.workers import on_worker, wait_serving, yield_turn

#: Candidates a page must hold to be checked in a helper process: a smaller one costs less
#: to check here than to send there.
PROCESS_MIN_CANDIDATES = 64
#: Characters a notes search must go through to be done in a helper process. Going through
#: them here holds the interpreter about a microsecond per thousand, in one stretch per note;
#: sending them there holds it far less (most of the cost is the pipe's, outside it) but costs
#: more in all, so small searches stay here.
PROCESS_MIN_CHARACTERS = 256 * 1024
#: How much lower the helper processes' priority is (``nice``).
PROCESS_NICENESS = 10

_T = TypeVar("_T")


def encoded_query(query: str) -> bytes | None:
    """``query`` as it reads inside a sealed item's JSON, ``None`` when it holds a surrogate.

    JSON escapes each character on its own, so the JSON of any text holding ``query``
    holds this: an item without it cannot match, and is passed over before its JSON is
    read. Surrogates are the exception (a pair of them is written as one character)."""
    if any("\ud800" <= char <= "\udfff" for char in query):
        return None
    return codec.dumps(query)[1:-1]


def matching(
    aead: AESGCM, sealed: Sequence[bytes], places: Sequence[bytes], query: str, limit: int
) -> list[tuple[int, str]]:
    """The first ``limit`` candidates whose content holds ``query``: ``(index, content)``.

    :raises SealedValueError: a candidate does not open (damaged or moved)."""
    encoded = encoded_query(query)
    found: list[tuple[int, str]] = []
    for index, (value, place) in enumerate(zip(sealed, places, strict=True)):
        yield_turn()
        opened = open_sealed(aead, value, place)
        if encoded is not None and encoded not in opened:
            continue
        content = codec.loads(opened)["content"]
        if query in content:
            found.append((index, content))
            if len(found) == limit:
                break
    return found


def _matching_with_key(
    data_key: bytes, sealed: list[bytes], places: list[bytes], query: str, limit: int
) -> list[tuple[int, str]]:
    return matching(AESGCM(data_key), sealed, places, query, limit)


def _lower_priority() -> None:
    os.nice(PROCESS_NICENESS)


class CandidateChecker:
    """Checks pages of history candidates and goes through notes for their searches: small
    ones in this thread, big ones in up to ``processes`` helper processes (none: all here)."""

    def __init__(self, processes: int = 0) -> None:
        self._processes = processes
        self._pool = self._new_pool() if processes > 0 else None
        self._replacing = threading.Lock()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self._processes,
            # Not forked: the service's threads hold locks a fork would copy held.
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_lower_priority,
        )

    def check(
        self,
        data_key: bytes,
        aead: AESGCM,
        sealed: list[bytes],
        places: list[bytes],
        query: str,
        limit: int,
    ) -> list[tuple[int, str]]:
        """See :func:`matching`. On a worker thread, a page of at least
        :data:`PROCESS_MIN_CANDIDATES` is checked in a helper process, and other accounts'
        calls run on the thread meanwhile."""
        if not self._sends(len(sealed) >= PROCESS_MIN_CANDIDATES):
            return matching(aead, sealed, places, query, limit)
        return self._in_helper(_matching_with_key, data_key, sealed, places, query, limit)

    def matching_texts(
        self, texts: Sequence[str], query: str, match_limit: int, text_limit: int
    ) -> list[tuple[int, list[LineMatch]]]:
        """See :func:`ctxmodes.windows.notes.matching_texts`. On a worker thread, a search
        through at least :data:`PROCESS_MIN_CHARACTERS` is done in a helper process, and
        other accounts' calls run on the thread meanwhile."""
        if not self._sends(sum(map(len, texts)) >= PROCESS_MIN_CHARACTERS):
            return matching_texts(texts, query, match_limit, text_limit)
        return self._in_helper(matching_texts, texts, query, match_limit, text_limit)

    def _sends(self, big: bool) -> bool:
        """Whether work that is ``big`` goes to a helper process: there are helpers, and
        this thread is a worker's, which serves other calls while it waits (any other
        thread would only be held up)."""
        return big and self._pool is not None and on_worker()

    def _in_helper(self, function: Callable[..., _T], *arguments: Any) -> _T:
        """``function(*arguments)`` in a helper process. A pool that lost a process (killed
        by the system, say) takes no more work: it is replaced, and the work, which keeps
        nothing, is done once more in the new one."""
        for attempt in (1, 2):
            pool = self._pool
            assert pool is not None
            try:
                return wait_serving(pool.submit(function, *arguments))
            except BrokenProcessPool:
                if attempt == 2:
                    raise
                with self._replacing:
                    if self._pool is pool:
                        pool.shutdown(wait=False, cancel_futures=True)
                        self._pool = self._new_pool()
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
