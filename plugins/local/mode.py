"""The per-session object of the Local mode.

Local is the same-branch window lifecycle of the kit (:mod:`ctxmodes.windows.same_branch`)
with everything kept in the session file: windows one after another on the active branch,
the model seeing the latest one, ``new_context`` appending the next marker at once (marked
for the one-time trim), threshold compaction cancelled except for that trim, ``/compact``
and overflow writing the fixed no-summary compaction and opening a fresh window. History is
read from the branch and notes are entries of the file; each new window's thread hint is
built from them.
"""

from __future__ import annotations

from ctxmodes.windows.same_branch import SameBranchMode


class LocalMode(SameBranchMode):
    """Local mode for one session (built by the mode registry when the session starts)."""
