"""``--session PATH|ID``: what Pi's ``--session`` takes.

An argument that looks like a path (it holds a ``/`` or ends in ``.jsonl``, as Pi decides) is
a session file, opened — or created at its first message — there. Anything else is a session
id, whole or its beginning, looked up among the sessions of the working directory, then of
every project; it never becomes a file name. Unlike Pi, which takes the first match, a
beginning several sessions share is refused with the candidates listed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError

if TYPE_CHECKING:
    from ctxmodes.session.listing import SessionInfo

#: How many candidates an ambiguous id lists.
SHOWN_CANDIDATES = 5


def looks_like_path(argument: str) -> bool:
    return "/" in argument or "\\" in argument or argument.endswith(".jsonl")


def _match(argument: str, infos: list[SessionInfo]) -> Path | None:
    exact = [info for info in infos if info.id == argument]
    if exact:
        return exact[0].path
    found = [info for info in infos if info.id.startswith(argument)]
    if len(found) > 1:
        shown = ", ".join(
            f"{info.id} ({info.first_message[:30] or 'no messages'})"
            for info in found[:SHOWN_CANDIDATES]
        )
        more = f" and {len(found) - SHOWN_CANDIDATES} more" if len(found) > SHOWN_CANDIDATES else ""
        raise CtxmodesError(
            f"session id {argument!r} is ambiguous: {shown}{more}; give more of the id"
        )
    return found[0].path if found else None


def resolve_session(argument: str, cwd: Path, session_dir: Path | None = None) -> Path:
    """The session file ``--session ARGUMENT`` means for working directory ``cwd`` (a
    relative path is taken from the current directory, as Pi does): an id is looked up among
    ``cwd``'s sessions, then every project's, in ``session_dir`` when one is configured.

    :raises CtxmodesError: an id that matches no session, or several.
    """
    from ctxmodes.session.manager import SessionManager

    if looks_like_path(argument):
        return Path(argument).expanduser().resolve()
    found = _match(argument, SessionManager.list_sessions(cwd, session_dir))
    if found is None:
        # Every project's sessions are read only when this project's hold no match.
        found = _match(argument, SessionManager.list_all(session_dir))
    if found is not None:
        return found
    raise CtxmodesError(
        f"no session matches {argument!r}: give a session id (or its beginning) or the path "
        "of a .jsonl file"
    )
