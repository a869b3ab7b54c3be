"""Ctrl+P, Shift+Ctrl+P (Alt+P) and Shift+Tab: the next or previous model, the next
thinking level, said in one line as Pi says it. While the agent works the change is made at
once and its run's next request uses it, as in Pi (and as ``/model`` and ``/thinking``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxmodes.config_reload import kept_or_reloaded
from ctxmodes.sdk.model_cycling import Direction, ModelCycler, model_cycler

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession


def scope_line(cycler: ModelCycler, keys: str) -> str | None:
    """Pi's start-up line naming the models of the scope and ``keys``, those that cycle
    them as Pi names them there (``Ctrl+P``, :meth:`~ctxmodes.tui.keymap.KeyMap.display`);
    ``None`` without a scope."""
    if not cycler.scope:
        return None
    names = ", ".join(
        scoped.model.id + (f":{scoped.thinking_level}" if scoped.thinking_level else "")
        for scoped in cycler.scope
    )
    hint = f" ({keys} to cycle)" if keys else ""
    return f"Model scope: {names}{hint}"


def cycle_model(session: TerminalSession, direction: Direction) -> None:
    agent = session.agent
    cycler = session.cycler

    def job() -> None:
        switched = cycler.cycle_model(direction)
        if switched is None:
            kind = "in scope" if cycler.scope else "available"
            agent.session.ui.notify(f"Only one model {kind}")
            return
        model, level = switched.model, switched.thinking_level
        thinking = f" (thinking: {level})" if model.reasoning and level != "off" else ""
        agent.session.ui.notify(f"Switched to {model.name or model.id}{thinking}")

    agent.change_soon(job)


def cycle_thinking(session: TerminalSession) -> None:
    agent = session.agent
    cycler = session.cycler

    def job() -> None:
        level = cycler.cycle_thinking_level()
        if level is None:
            agent.session.ui.notify("Current model does not support thinking")
        else:
            agent.session.ui.notify(f"Thinking level: {level}")

    agent.change_soon(job)


def take_model_scope(session: TerminalSession, before: Sequence[str], after: Sequence[str]) -> None:
    """UI thread: cycle through the scope the patterns ``after`` name (``enabledModels`` read
    again for a new session, or another project's) where the run's were ``before``, unless
    this run chose its scope (``/scoped-models``) or set other patterns: that choice stands.
    A pattern that finds nothing is a warning, as at start-up."""
    current = session.model_patterns
    patterns = kept_or_reloaded(current, tuple(before), tuple(after))
    if session.scope_chosen or patterns == current:
        return
    session.model_patterns = patterns
    session.cycler, warnings = model_cycler(session.agent, patterns)
    for warning in warnings:
        session.notify(warning, "warning")
