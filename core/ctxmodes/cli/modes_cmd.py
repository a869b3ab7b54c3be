"""``ctxmodes modes``: the installed modes, where they come from, which one is active."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import (
    add_mode_option,
    add_trust_options,
    cli_overrides,
    command_startup_settings,
    run_trust,
)

if TYPE_CHECKING:
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.plugin_selection import PluginSelection, SelectedEntryPoint


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "modes")
    add_mode_option(parser)
    add_trust_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ctxmodes.plugin_selection import LOADED, PluginSelection

    active, settings = command_startup_settings(args)
    registry, selected = installed_modes(
        PluginSelection.from_env(allow=settings.allow, block=settings.block)
    )
    if active not in registry:
        registry.get(active, where=f"{_mode_source(args)}: mode")
    rows = [
        (
            mode.spec.name,
            "active" if mode.spec.name == active else "installed",
            mode.distribution or "-",
            mode.spec.description,
        )
        for mode in registry
    ]
    rows += [
        (ep.name, status, ep.distribution or "-", "(not loaded)")
        for ep, status in selected
        if status != LOADED
    ]
    header = ("MODE", "STATUS", "DISTRIBUTION", "DESCRIPTION")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    return 0


def installed_modes(
    selection: PluginSelection,
) -> tuple[ModeRegistry, list[SelectedEntryPoint]]:
    """The modes the plugins ``selection`` lets load declare, and every installed plugin
    with whether it loads.

    Modes come from entry points: the core's default plugins (tools, slash commands, models)
    declare none. Listing them needs no plugin manager unless a plugin's hook is unusual (see
    :mod:`ctxmodes.plugin_calls`), and imports none of the tools and models; sessions
    validate the plugins.
    """
    from ctxmodes.modes import REGISTER_MODES, ModeRegistry
    from ctxmodes.plugin_calls import registration_callers
    from ctxmodes.plugin_selection import LOADED, select_entry_points

    selection.refuse_blocked_essentials()
    selected = select_entry_points(selection)
    callers = registration_callers(REGISTER_MODES, selected)
    if callers is None:
        from ctxmodes.plugins import each_plugin, make_plugin_manager

        pm = make_plugin_manager(selection=selection, default_plugins=())
        callers = sorted(each_plugin(pm, REGISTER_MODES))
    distributions = {
        ep.name: ep.distribution for ep, status in selected if status == LOADED and ep.distribution
    }
    unloaded = {ep.name: status for ep, status in selected if status != LOADED}
    return ModeRegistry.from_callers(callers, distributions, unloaded), selected


def _mode_source(args: argparse.Namespace) -> str:
    """Where the active mode was set, worded as ``ctxmodes config show`` words it: the
    settings are read in full, which only an unknown mode needs."""
    from ctxmodes.config import DEFAULT_SOURCE, load_settings

    loaded = load_settings(cli=cli_overrides(args), trust=run_trust(args).is_trusted)
    return loaded.origins.get("mode", DEFAULT_SOURCE)
