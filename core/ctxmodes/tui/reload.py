"""``/reload``: what Pi's ``/reload`` reads again that this terminal has: the key bindings
(``keybindings.json``), then the session's skills, prompt templates, context files and
system prompt files, the system prompt rebuilt from them
(:meth:`~ctxmodes.host.runtime.AgentHost.reload_resources`).

Pi also loads its extensions and themes again. A plugin here is a Python entry point, loaded
once with the process: its state is left alone, and only its tools and commands are
collected again. The terminal has no themes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.tui import render
from ctxmodes.tui.keymap import KeyMap, keybindings_path

if TYPE_CHECKING:
    from ctxmodes.resources import LoadedResources
    from ctxmodes.tui.app import TerminalSession

#: Pi's refusals, word for word.
WHILE_STREAMING: Final = "Wait for the current response to finish before reloading."
WHILE_COMPACTING: Final = "Wait for compaction to finish before reloading."
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

    def job() -> None:
        resources = agent.host.reload_resources()
        session.call_soon(lambda: _reloaded(session, resources))

    agent.run_soon(job)


def _reloaded(session: TerminalSession, resources: LoadedResources) -> None:
    """Bind the keys as ``keybindings.json`` says now (the application's bindings follow
    the session's keymap), then say what is loaded (only its
    problems with ``quiet_startup``, as Pi shows them), the key bindings' problems, and
    that the reload is done."""
    from ctxmodes.resources.summary import loaded_text

    keymap = session.keymap
    session.keymap = KeyMap.load(keymap.source if keymap.source else keybindings_path())
    cwd = session.agent.session.cwd
    loaded = loaded_text(resources, cwd, quiet=session.settings.quiet_startup).lstrip("\n")
    width = session.width
    blocks = [render.styled(loaded, "dim", width)] if loaded else []
    blocks += [render.notice(problem, "warning", width) for problem in session.keymap.problems]
    blocks.append(render.notice(RELOADED, "info", width))
    session.print_blocks(blocks)
