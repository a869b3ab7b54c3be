"""The terminal's commands that continue in another session file: ``/clone`` copies the
current one, as Pi's interactive ``/clone`` does.

Each goes through the host's own session replacement (the one RPC's ``clone`` takes), so
plugins are asked first (``ctx_session_before_fork``) and keeping the current session leaves
it as it was, without a word, as Pi says nothing then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.host.errors import SessionChangeCancelled

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

#: Pi's status lines.
NOTHING_TO_CLONE: Final = "Nothing to clone yet"
CLONED: Final = "Cloned to new session"


def clone(session: TerminalSession, args: str) -> None:
    """``/clone``: continue in a new session file holding the current branch up to the leaf
    (the header names the file it came from). Refused with Pi's words when the leaf is before
    the first entry, or when the session has no file yet (before the first reply)."""
    agent = session.agent
    if agent.session_manager.get_leaf_id() is None:
        session.notify(NOTHING_TO_CLONE)
        return

    def job() -> None:
        try:
            agent.fork(None)
        except SessionChangeCancelled:
            return
        agent.session.ui.notify(CLONED)

    agent.run_soon(job)
