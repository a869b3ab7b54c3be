"""A session of another project, taken up in the terminal (``/resume``, ``/import``), runs
with that project's settings, as Pi's runtime, rebuilt for the session's directory, reads
them: its ``.ctxmodes.toml`` and ``.pi/settings.json`` (as the run's trust decides for it:
a project not yet decided is asked about before the session opens, as Pi asks; see
:mod:`ctxmodes.tui.trust_question`) under the command line's values, taken as ``/reload``
takes settings read again (:mod:`ctxmodes.tui.reload`): what was changed this run stands.
``/reload`` reads that project's from then on. A file there that cannot be read is said in
one line, and the run's settings stay.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.errors import ConfigError
from ctxmodes.session.listing import recorded_directory
from ctxmodes.terminal_text import visible_lines
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


def follow_project(session: TerminalSession) -> None:
    """On the agent's thread, once a session has replaced the current one: when it runs in
    another directory than the settings were read for, read that directory's and take them.
    """
    reloadable = session.reloadable
    if reloadable is None:
        return
    agent = session.agent
    cwd = Path(agent.session.cwd)
    try:
        after = reloadable.read_for(cwd)
        if after is None:
            return
        defaults = session.read_defaults(cwd) if session.read_defaults is not None else None
    except ConfigError as exc:
        agent.session.ui.notify(visible_lines(NOT_LOADED.format(cwd=cwd) + str(exc)), "error")
        return
    terminal = TerminalChange(reloadable.take(agent.host, after).terminal, after.terminal)

    def take() -> None:
        if defaults is not None:
            session.defaults = defaults
        take_terminal_settings(session, terminal)

    session.call_soon(take)
