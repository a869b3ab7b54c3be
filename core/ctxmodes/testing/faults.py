"""Fault injection for session writers: a disk that fails writes part-way.

:class:`FaultyDisk` replaces the system calls the session writer makes (``write``,
``ftruncate``, ``fdatasync``) for as long as it is active. When a fault is due, a ``write``
puts a random number of the requested bytes on disk and returns that short count, and the
next ``write`` fails with ``ENOSPC`` or ``EIO`` — what a filling disk does; an ``fdatasync``
can fail with ``EIO`` after the bytes were written; and a truncation can be refused, so that
both of the writer's recovery paths (truncating back, or terminating the fragment) are taken.

:func:`run_campaign` appends entries through a :class:`~ctxmodes.session.manager.SessionManager`
while faults are injected, and after every fault checks that the file reopens with every
acknowledged entry (and no refused one) in order, on an unbroken parent chain, equal to what
the manager holds in memory, and that the next append lands intact.
"""

from __future__ import annotations

import errno
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxmodes.session import writer as writer_module
from ctxmodes.session.errors import SessionWriteError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability

__all__ = ["CampaignReport", "FaultyDisk", "run_campaign"]

_FAULT_ERRNOS = (errno.ENOSPC, errno.EIO)


class FaultyDisk:
    """Write faults on demand: :meth:`arm` makes the next ``write`` short and the one after
    it fail; ``refuse_truncate`` makes the writer's truncation fail too.

    :param rng: where the cut offsets and error numbers come from.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._armed = False
        self._cut: int | None = None
        self._failing: int | None = None
        self._sync_failure = False
        self.refuse_truncate = False
        #: Faults that reached the writer, by kind.
        self.injected: dict[str, int] = {"short_write": 0, "sync": 0}

    def arm(self, *, sync: bool = False) -> None:
        """Fail the next write part-way (or, with ``sync``, the next ``fdatasync``)."""
        if sync:
            self._sync_failure = True
        else:
            self._armed = True

    def fail_after(self, count: int) -> None:
        """Make the next write put only its first ``count`` bytes on disk, then fail."""
        self._armed = True
        self._cut = count

    @property
    def pending(self) -> bool:
        return self._armed or self._failing is not None or self._sync_failure

    def write(self, fd: int, data: Any) -> int:
        if self._failing is not None:
            code, self._failing = self._failing, None
            raise OSError(code, os.strerror(code))
        if self._armed:
            self._armed = False
            self.injected["short_write"] += 1
            self._failing = self._rng.choice(_FAULT_ERRNOS)
            cut = self._cut if self._cut is not None else self._rng.randrange(len(data))
            self._cut = None
            if cut == 0:
                code, self._failing = self._failing, None
                raise OSError(code, os.strerror(code))
            return os.write(fd, bytes(data[:cut]))
        return os.write(fd, data)

    def datasync(self, fd: int) -> None:
        if self._sync_failure:
            self._sync_failure = False
            self.injected["sync"] += 1
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        os.fsync(fd)

    def truncate(self, fd: int, length: int) -> None:
        if self.refuse_truncate:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        os.ftruncate(fd, length)

    @contextmanager
    def active(self) -> Iterator[FaultyDisk]:
        """Route the session writer's system calls through this disk."""
        saved = (writer_module._write_fd, writer_module._truncate_fd, writer_module._datasync)
        writer_module._write_fd = self.write
        writer_module._truncate_fd = self.truncate
        writer_module._datasync = self.datasync
        try:
            yield self
        finally:
            writer_module._write_fd, writer_module._truncate_fd, writer_module._datasync = saved


@dataclass
class CampaignReport:
    """What :func:`run_campaign` did and found; ``problems`` is empty when nothing was lost."""

    faults: int = 0
    acknowledged: int = 0
    refused: int = 0
    kept: int = 0
    fragments_left: int = 0
    problems: list[str] = field(default_factory=list)


def _message(rng: random.Random, number: int) -> dict[str, Any]:
    text = f"entry {number} " + "x" * rng.randrange(0, 3000)
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": number}


def _check(path: Path, manager: SessionManager, acknowledged: list[str]) -> str:
    """Empty when the reopened file holds exactly the acknowledged entries, chained."""
    with SessionManager.open(path, read_only=True) as reopened:
        entries = list(reopened.get_entries())
    ids = [entry.id for entry in entries]
    if ids != acknowledged:
        lost = [i for i in acknowledged if i not in ids]
        extra = [i for i in ids if i not in acknowledged]
        return f"file holds {len(ids)} entries: lost {lost[:3]}, unexpected {extra[:3]}"
    for previous, entry in zip([None, *ids], entries, strict=False):
        if entry.parent_id != previous:
            return f"entry {entry.id} hangs off {entry.parent_id}, expected {previous}"
    in_memory = [entry.id for entry in manager.get_entries()]
    if in_memory != ids:
        return f"the manager holds {len(in_memory)} entries, the file {len(ids)}"
    return ""


def run_campaign(
    directory: Path,
    *,
    faults: int,
    seed: int,
    durability: Durability = Durability.FSYNC,
    refuse_truncate_every: int = 4,
    appends_between: Callable[[random.Random], int] = lambda rng: rng.randrange(1, 4),
) -> CampaignReport:
    """Inject ``faults`` write faults into one session file (see the module docstring).

    Every ``refuse_truncate_every``-th fault also refuses the truncation, so the writer must
    terminate the fragment instead; with ``fsync`` durability every third fault is a failed
    ``fdatasync`` rather than a short write.
    """
    rng = random.Random(seed)
    disk = FaultyDisk(rng)
    report = CampaignReport()
    acknowledged: list[str] = []
    number = 0
    path = directory / f"faults-{seed}.jsonl"
    with disk.active(), SessionManager.open(path, durability=durability) as manager:
        acknowledged.extend(entry.id for entry in manager.get_entries())
        while report.faults < faults:
            for _ in range(appends_between(rng)):
                number += 1
                acknowledged.append(manager.append_message(_message(rng, number)))
                report.acknowledged += 1
            report.faults += 1
            disk.refuse_truncate = report.faults % refuse_truncate_every == 0
            sync_fault = durability is Durability.FSYNC and report.faults % 3 == 0
            disk.arm(sync=sync_fault)
            number += 1
            before = [entry.id for entry in manager.get_entries()]
            try:
                acknowledged.append(manager.append_message(_message(rng, number)))
                report.acknowledged += 1
                report.problems.append(f"fault {report.faults} was not reported")
            except SessionWriteError as exc:
                after = [entry.id for entry in manager.get_entries()]
                if exc.line_kept:
                    # Reported as failed, yet in the file: the manager holds it too.
                    report.kept += 1
                    acknowledged.append(after[-1])
                else:
                    report.refused += 1
                    if after != before:
                        report.problems.append(f"fault {report.faults} changed the manager")
            disk.refuse_truncate = False
            if disk.pending:
                report.problems.append(f"fault {report.faults} was not reached")
            problem = _check(path, manager, acknowledged)
            if problem:
                report.problems.append(f"after fault {report.faults}: {problem}")
                break
    with SessionManager.open(path, read_only=True) as reopened:
        report.fragments_left = len(reopened.skipped_lines)
    return report
