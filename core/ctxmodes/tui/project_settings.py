"""Every session that replaces the running one in the terminal (``/new``, ``/resume``,
``/fork``, ``/clone``, ``/import``) starts with the settings of the directory it runs in,
read again, as Pi's runtime, rebuilt for each such session, reads them: for a session of
another project, its ``.ctxmodes.toml`` and ``.pi/settings.json`` (as the run's trust decides
for it: a project not yet decided is asked about before the session opens, as Pi asks; see
:mod:`ctxmodes.tui.trust_question`), under the command line's values. They are taken as
``/reload`` takes settings read again (:mod:`ctxmodes.tui.reload`), what was changed this run
standing, and, since the session is new, also as Pi's new runtime takes them: its tools
(``defaultTools``), its thinking budgets and Ctrl+P's scope (``enabledModels``).
``/reload`` reads that directory's from then on. A file there that cannot be read is said in
one line, and the run's settings stay.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.errors import ConfigError
from ctxmodes.session.listing import recorded_directory
from ctxmodes.terminal_text import visible_lines
from ctxmodes.tui.cycling import take_model_scope
from ctxmodes.tui.reload import TerminalChange, take_terminal_settings

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

#: Before the reason a project's settings could not be read.
NOT_LOADED: Final = "Settings of {cwd} not loaded, this run's stay: "


def decide_trust(session: TerminalSession, path: Path, cwd: Path | None) -> None:
    """On the agent's thread, before the session at ``path`` replaces the current one (to
    run in ``cwd``, else where it records): decide whether its project is trusted, asking
    the user when the run's decisions ask, while nothing is being replaced (the question
    waits for the answer)."""
    if session.trust is None:
        return
    where = cwd if cwd is not None else recorded_directory(path)
    if where is not None:
        session.trust.is_trusted(where)


def follow_project(session: TerminalSession, cwd: Path) -> None:
    """On the agent's thread, just before a session that runs in ``cwd`` replaces the
    current one (the host's ``before_replacement``): read the settings there and give them
    to the host, which starts the new session with them; the terminal takes its own table,
    the pickers' defaults and the scope once it draws again."""
    reloadable = session.reloadable
    if reloadable is None:
        return
    try:
        after = reloadable.read_for(cwd)
        defaults = session.read_defaults(cwd) if session.read_defaults is not None else None
    except ConfigError as exc:
        message = visible_lines(NOT_LOADED.format(cwd=cwd) + str(exc))
        session.call_soon(lambda: session.notify(message, "error"))
        return
    before = reloadable.take(session.agent.host, after)

    def take() -> None:
        if defaults is not None:
            session.defaults = defaults
        take_terminal_settings(session, TerminalChange(before.terminal, after.terminal))
        take_model_scope(session, before.enabled_models, after.enabled_models)

    session.call_soon(take)
