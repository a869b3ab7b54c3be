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
    from ctxmodes.cli.modes_cmd import installed_modes
    from ctxmodes.config import load_settings
    from ctxmodes.plugin_selection import PluginSelection

    settings = load_settings().settings
    plugins = settings.plugins
    selection = PluginSelection.from_env(allow=plugins.allow, block=plugins.block)
    registry, _ = installed_modes(selection)
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
