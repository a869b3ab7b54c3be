"""The mode a session file is managed by, for the commands that read files offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session_mode import SessionMode


def configured_modes() -> tuple[ModeRegistry, str, dict[str, dict[str, object]]]:
    """The installed modes of the configured plugins, the configured default mode and the
    configured ``[modes.<name>]`` tables."""
    from ctxmodes.config import load_settings
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.plugins import make_configured_plugin_manager

    settings = load_settings().settings
    pm = make_configured_plugin_manager(settings)
    registry = ModeRegistry.from_plugin_manager(pm, pm.distributions())
    return registry, settings.mode, {name: dict(table) for name, table in settings.modes.items()}


def file_mode(manager: SessionManager) -> SessionMode:
    """The mode ``manager``'s session records, or the one its entries show, or the
    configured default (see :func:`ctxmodes.session_mode.session_mode`)."""
    from ctxmodes.session_mode import session_mode

    registry, default, tables = configured_modes()
    return session_mode(manager, registry, default, tables)


def mode_words(mode: SessionMode) -> str:
    """``tree``, ``tree (inferred)`` or ``off (default)``: the mode and how it is known."""
    if mode.source in ("recorded", "requested"):
        return mode.name
    return f"{mode.name} ({mode.source})"
