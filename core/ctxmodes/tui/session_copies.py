"""The terminal's commands that continue in another session file: ``/clone`` copies the
current one, ``/import FILE`` a session file from elsewhere, as Pi's interactive ``/clone``
and ``/import`` do.

Each goes through the host's own session replacement (the one RPC's ``clone`` takes), so
plugins are asked first (``ctx_session_before_fork``, ``ctx_session_before_switch``) and
keeping the current session leaves
it as it was (``/clone`` says nothing then, ``/import`` says it was cancelled, as Pi does).

``/clone`` (and the ``/fork`` selector's choice) may be used while the agent works, as in
Pi: see :func:`change_session_soon`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError, SessionCwdMissingError
from ctxmodes.host.errors import SessionChangeCancelled
from ctxmodes.session.paths import resolve_path
from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

#: Pi's status lines.
NOTHING_TO_CLONE: Final = "Nothing to clone yet"
CLONED: Final = "Cloned to new session"
IMPORT_USAGE: Final = "Usage: /import <path.jsonl>"
IMPORT_CANCELLED: Final = "Import cancelled"


def change_session_soon(session: TerminalSession, job: Callable[[], None]) -> None:
    """Run ``job``, a fork or clone, without blocking the editor: on the agent's worker when
    it is idle; while it works, at once on a thread of its own, as Pi's fork runs beside the
    turn in progress. The host asks the plugins first (one that keeps the session leaves the
    run going), writes the new file from what the current one holds, and only then aborts
    the run and waits for it to settle, so the aborted reply is appended to the file being
    left, after everything else. A :class:`CtxmodesError` ``job`` raises is shown as an
    error."""
    if not session.busy():
        session.agent.run_soon(job)
        return

    def beside_the_run() -> None:
        try:
            job()
        except CtxmodesError as error:
            message = str(error)
            session.call_soon(lambda: session.notify(message, "error"))

    threading.Thread(target=beside_the_run, name="ctxmodes-fork", daemon=True).start()


def clone(session: TerminalSession, args: str) -> None:
    """``/clone``: continue in a new session file holding the current branch up to the leaf
    as it is now (the header names the file it came from); while the agent works, its run is
    aborted and the reply it was writing stays in the file left behind, as in Pi. Refused
    with Pi's words when the leaf is before the first entry, or when the session has no file
    yet (before the first reply)."""
    agent = session.agent
    leaf = agent.session_manager.get_leaf_id()
    if leaf is None:
        session.notify(NOTHING_TO_CLONE)
        return

    def job() -> None:
        try:
            agent.fork(leaf, "at")
        except SessionChangeCancelled:
            return
        agent.session.ui.notify(CLONED)

    change_session_soon(session, job)


def path_argument(args: str) -> str | None:
    """The path a command's arguments name, as Pi reads it: quoted (``"a b.jsonl"`` or
    ``'a b.jsonl'``, ``None`` when the quote is not closed), else up to the first blank."""
    text = args.lstrip()
    if not text:
        return None
    if text[0] in "\"'":
        closing = text.find(text[0], 1)
        return text[1:closing] if closing > 0 else None
    return text.split(maxsplit=1)[0]


def import_session(session: TerminalSession, args: str) -> None:
    """``/import FILE``: after a confirmation, continue in a copy of the session file FILE
    made in this session's directory (:meth:`~ctxmodes.sdk.Agent.import_session`)."""
    path = path_argument(args)
    if path is None:
        session.notify(IMPORT_USAGE, "error")
        return
    agent = session.agent

    def job(cwd: Path | None = None) -> None:
        from ctxmodes.tui.missing_cwd import ask_to_continue_here
        from ctxmodes.tui.project_settings import decide_trust

        decide_trust(session, Path(resolve_path(path)), cwd)
        try:
            agent.import_session(path, cwd=cwd)
        except SessionChangeCancelled:
            agent.session.ui.notify(IMPORT_CANCELLED)
            return
        except SessionCwdMissingError as missing:
            ask_to_continue_here(
                session, missing, lambda here: agent.run_soon(partial(job, here)), IMPORT_CANCELLED
            )
            return
        except CtxmodesError as error:
            agent.session.ui.notify(f"Failed to import session: {error}", "error")
            return
        agent.session.ui.notify(f"Session imported from: {path}")

    def chosen(item: PickerItem) -> None:
        if item.key == "import":
            agent.run_soon(job)
        else:
            session.notify(IMPORT_CANCELLED)

    rows = [
        PickerItem("import", "import", [("", "Import, replacing this session")]),
        PickerItem("keep", "keep", [("", "Keep this session")]),
    ]
    session.open_picker(
        Picker(
            f"Import session: replace current session with {path}?",
            lambda query: [row for row in rows if query.lower() in row.text],
            chosen,
            on_cancel=lambda: session.notify(IMPORT_CANCELLED),
            hint=selector_hint(session.keymap, "select"),
            counted=False,
        )
    )
