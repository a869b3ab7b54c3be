"""``ctxmodes modes``: the installed modes, where they come from, which one is active."""

from __future__ import annotations

import argparse
from typing import Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import add_mode_option, add_trust_options, command_startup_settings


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "modes")
    add_mode_option(parser)
    add_trust_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.plugins import PluginSelection, make_plugin_manager

    active, settings = command_startup_settings(args)
    selection = PluginSelection.from_env(allow=settings.allow, block=settings.block)
    # Modes come from entry points: the core's default plugins (tools, slash commands,
    # models) declare none, so they are not built.
    pm = make_plugin_manager(selection=selection, default_plugins=())
    registry = ModeRegistry.from_plugin_manager(pm, pm.distributions())
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
        (record.name, record.status, record.distribution or "-", "(not loaded)")
        for record in pm.entry_point_records
        if record.status != "loaded"
    ]
    header = ("MODE", "STATUS", "DISTRIBUTION", "DESCRIPTION")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])
    # List first, then fail: the listing is what helps fix an unknown configured mode.
    registry.get(active)
    return 0
