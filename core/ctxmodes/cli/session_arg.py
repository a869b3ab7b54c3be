"""``--session PATH|ID``: what Pi's ``--session`` takes.

An argument that looks like a path (it holds a ``/`` or ends in ``.jsonl``, as Pi decides) is
a session file, opened — or created at its first message — there. Anything else is a session
id, whole or its beginning, looked up among the sessions of the working directory, then of
every project; it never becomes a file name. Unlike Pi, which takes the first match, a
beginning several sessions share is refused with the candidates listed. An id found only
among another project's sessions is not simply continued, as in Pi: the interactive session
asks whether to fork it into the working directory, and print mode refuses, naming both
ways on (``--fork ID``, ``--session PATH``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ctxmodes.errors import CtxmodesError

if TYPE_CHECKING:
    from ctxmodes.session.listing import SessionInfo

#: How many candidates an ambiguous id lists.
SHOWN_CANDIDATES = 5


def looks_like_path(argument: str) -> bool:
    return "/" in argument or "\\" in argument or argument.endswith(".jsonl")


def _match(argument: str, infos: list[SessionInfo]) -> SessionInfo | None:
    exact = [info for info in infos if info.id == argument]
    if exact:
        return exact[0]
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
    return found[0] if found else None


class FoundSession(NamedTuple):
    """The session file ``--session`` names, and the working directory of the other
    project whose sessions alone hold the id (``None``: a path, or this project's id)."""

    path: Path
    elsewhere: str | None = None


def find_session(argument: str, cwd: Path, session_dir: Path | None = None) -> FoundSession:
    """The session file ``--session ARGUMENT`` means for working directory ``cwd`` (a
    relative path is taken from the current directory, as Pi does): an id is looked up among
    ``cwd``'s sessions, then every project's, in ``session_dir`` when one is configured.

    :raises CtxmodesError: an id that matches no session, or several.
    """
    from ctxmodes.session.manager import SessionManager

    if looks_like_path(argument):
        return FoundSession(Path(argument).expanduser().resolve())
    found = _match(argument, SessionManager.list_sessions(cwd, session_dir))
    if found is not None:
        return FoundSession(found.path)
    # Every project's sessions are read only when this project's hold no match.
    found = _match(argument, SessionManager.list_all(session_dir))
    if found is not None:
        return FoundSession(found.path, found.cwd)
    raise CtxmodesError(
        f"no session matches {argument!r}: give a session id (or its beginning) or the path "
        "of a .jsonl file"
    )


def resolve_session(argument: str, cwd: Path, session_dir: Path | None = None) -> Path:
    """The session file of :func:`find_session`, wherever its project is."""
    return find_session(argument, cwd, session_dir).path


def refuse_another_projects(argument: str, found: FoundSession) -> None:
    """Print mode's answer to an id only another project has (no terminal to ask on).

    :raises CtxmodesError: ``found`` is another project's session.
    """
    if found.elsewhere is not None:
        raise CtxmodesError(
            f"session {argument!r} belongs to another project ({found.elsewhere}): fork it "
            f"into this one with --fork {argument}, or continue it there with --session "
            f"{found.path}"
        )
