"""``/reload``: what Pi's ``/reload`` reads again that this terminal has: the configuration
(ctxmodes' files and Pi's ``settings.json``, layered as at start-up, the command line's values
over them; :mod:`ctxmodes.config_reload`), the key bindings (``keybindings.json``), then the
session's skills, prompt templates, context files and system prompt files, the system prompt
rebuilt from them (:meth:`~ctxmodes.host.runtime.AgentHost.reload_resources`).

The running session takes again the settings Pi's running session takes again: message
delivery, compaction, branch summaries, retries and request timeouts, the thinking levels a
model switch takes, images, the shell, and the terminal's own (thinking shown or collapsed,
the start-up list, completion rows, skill commands, the ``/tree`` filter, the external
editor); the thinking budgets go to the sessions started after it, as in Pi. The defaults
the ``/model`` and ``/thinking`` pickers mark are read again too, as Pi's settings manager
reads them. A value changed this run (``/settings``, ``/thinking``, Ctrl+T) is kept. A
configuration that can no longer be read is said in one line and nothing is reloaded.

Pi also loads its extensions and themes again. A plugin here is a Python entry point, loaded
once with the process: its state is left alone, and only its tools and commands are
collected again (the plugins' commands a built-in shadows are said again, as Pi says them).
The terminal has no themes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from ctxmodes.config_reload import kept_or_reloaded
from ctxmodes.errors import ConfigError
from ctxmodes.terminal_text import visible_lines
from ctxmodes.tui import render
from ctxmodes.tui.keymap import KeyMap, keybindings_path

if TYPE_CHECKING:
    from ctxmodes.config import TerminalSettings
    from ctxmodes.resources import LoadedResources
    from ctxmodes.tui.app import TerminalSession

#: Pi's refusals, word for word.
WHILE_STREAMING: Final = "Wait for the current response to finish before reloading."
WHILE_COMPACTING: Final = "Wait for compaction to finish before reloading."
#: Pi's words before the reason of a reload that failed; the reason is the configuration's
#: error, in the words it stops a start with.
FAILED: Final = "Reload failed: "
#: Pi's status line, naming what is read again here.
RELOADED: Final = "Reloaded keybindings, skills, prompts, and context files"


def reload(session: TerminalSession, args: str) -> None:
    agent = session.agent
    if agent.session.is_compacting():
        session.notify(WHILE_COMPACTING, "warning")
        return
    if session.busy():
        session.notify(WHILE_STREAMING, "warning")
        return

    reloadable = session.reloadable

    def job() -> None:
        after = None
        if reloadable is not None:
            try:
                after = reloadable.read_again()
                if session.read_defaults is not None:
                    session.defaults = session.read_defaults(reloadable.cwd)
            except ConfigError as exc:
                message = FAILED + visible_lines(str(exc))
                session.call_soon(lambda: session.notify(message, "error"))
                return
        resources = agent.host.reload_resources()
        if reloadable is None or after is None:
            session.call_soon(lambda: _reloaded(session, resources))
            return
        terminal = TerminalChange(reloadable.take(agent.host, after).terminal, after.terminal)
        session.call_soon(lambda: _reloaded(session, resources, terminal))

    agent.run_soon(job)


def _reloaded(
    session: TerminalSession, resources: LoadedResources, terminal: TerminalChange | None = None
) -> None:
    """Take the terminal's settings read again (``terminal``, ``None`` when none were), bind
    the keys as ``keybindings.json`` says now (the application's bindings follow the
    session's keymap), then say what is loaded (only its problems with ``quiet_startup``, as
    Pi shows them), the plugins' shadowed commands, the key bindings' problems, and that
    the reload is done."""
    from ctxmodes.resources.summary import loaded_text

    if terminal is not None:
        take_terminal_settings(session, terminal)
    keymap = session.keymap
    session.keymap = KeyMap.load(keymap.source if keymap.source else keybindings_path())
    cwd = session.agent.session.cwd
    loaded = loaded_text(resources, cwd, quiet=session.settings.quiet_startup).lstrip("\n")
    width = session.width
    blocks = [render.styled(loaded, "dim", width)] if loaded else []
    blocks += session.command_conflicts()
    blocks += [render.notice(problem, "warning", width) for problem in session.keymap.problems]
    blocks.append(render.notice(RELOADED, "info", width))
    session.print_blocks(blocks)


class TerminalChange(NamedTuple):
    """The terminal's own table as the run's settings had it, and as read again (or as
    another project's settings have it)."""

    before: TerminalSettings
    after: TerminalSettings


def take_terminal_settings(session: TerminalSession, change: TerminalChange) -> None:
    """UI thread: run the terminal with ``change.after``, keeping what was changed this
    run."""
    # Ctrl+T and /settings change what the live region shows, not the settings object.
    current = session.settings.model_copy(update={"hide_thinking": not session.live.show_thinking})
    session.apply_terminal_settings(kept_or_reloaded(current, change.before, change.after))
