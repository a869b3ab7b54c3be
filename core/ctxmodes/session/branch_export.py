"""The active branch written out as a session file of its own, as Pi's ``/export FILE.jsonl``
writes it (``exportSessionToJsonl``): a new header with the session's id and working
directory, then the branch's entries from the root, each one's ``parentId`` the entry before
it, so that the file holds one straight path.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError
from ctxmodes.file_replace import replacing
from ctxmodes.session import codec
from ctxmodes.session import entries as make
from ctxmodes.session.ids import PI_IDENTITY, IdentitySource

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


def write_branch(
    manager: SessionManager, target: Path, identity: IdentitySource = PI_IDENTITY
) -> None:
    """Write ``manager``'s active branch to ``target``, a new file (its folders made).

    :raises CtxmodesError: ``target`` exists (a session file is never written over, this
        session's or another's), or cannot be written.
    """
    if target.exists():
        raise CtxmodesError(f"{target} exists; export the branch to a new file")
    header = make.header(manager.cwd, manager.session_id, identity.timestamp())
    lines = [codec.dumps_line(header)]
    parent_id: object = None
    for entry in manager.read_entries_json(manager.get_branch_ids()):
        assert entry is not None  # the ids are the branch's own
        # Along a branch each parent is the entry before, but the first one's stored parent
        # may be missing from the file: Pi links them anew, and the first one to nothing.
        # Replaced in place, the key keeps its place in the line, as Pi's spread keeps it.
        linked = {**entry, "parentId": parent_id}
        lines.append(codec.dumps_line(linked))
        parent_id = entry["id"]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with replacing(target) as file:
            file.write(b"".join(lines).decode())
    except OSError as exc:
        raise CtxmodesError(f"cannot write {target}: {exc.strerror or exc}") from None
