"""Failures of the compaction and branch-summary functions."""

from __future__ import annotations

from ctxmodes.errors import CtxmodesError


class CompactionError(CtxmodesError):
    """Base class for the failures raised by :mod:`ctxmodes.compaction`."""


class MalformedMessageError(CompactionError):
    """A message lacks a field the computation reads (e.g. ``content`` is null).

    Pi's functions throw a ``TypeError`` on the same records; the session store keeps such
    records readable, and only the computations that need the field refuse them.
    """


class SummarizationError(CompactionError):
    """A summarization call failed; the message reads ``<what> failed: <reason>`` as in Pi."""
