"""The parts of the Local mode, all of them the kit's.

Local differs from the other managed modes in three decisions, each one of the kit's
strategies:

* projection: the model sees the messages from the latest window marker on (the session
  file keeps everything; only the request is cut) — :class:`LatestWindowProjection`;
* ``new_context``: the next marker is appended at once, as steering that starts the next
  turn, marked ``trimPreviousWindow`` so that Pi's next threshold compaction may cut the file's
  context at that boundary once — :class:`SameBranchRollover`;
* compaction: threshold compaction is cancelled except for that one-time trim; manual
  ``/compact`` and overflow write the fixed no-summary compaction at the latest boundary and
  then open a fresh window — :class:`TrimOnceCompaction`.

History is read from the branch and notes are entries of the file (:class:`LocalRetrieval`);
each new window's thread hint is built from them. Remote uses the same rollover and
compaction policy from the kit.
"""

from __future__ import annotations

from ctxmodes import HostSession
from ctxmodes.windows import ManagedMode, WindowStrategies


def assemble(mode: ManagedMode) -> WindowStrategies:
    """Local's parts for one session: all of them the kit's."""
    return WindowStrategies.defaults(mode)


def local_mode(session: HostSession) -> ManagedMode:
    """Local mode for one session (built by the mode registry when the session starts)."""
    return ManagedMode(session, assemble)
