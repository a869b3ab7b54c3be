"""``ctxmodes config show``: the effective settings and where each value came from."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import (
    add_mode_option,
    add_trust_options,
    cli_overrides,
    run_trust,
    trust_lines,
)

if TYPE_CHECKING:
    from ctxmodes.config import Settings


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "config")
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print effective settings with their sources")
    add_mode_option(show)
    add_trust_options(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=run_show)


def run_show(args: argparse.Namespace) -> int:
    from ctxmodes.config import DEFAULT_SOURCE, flatten, load_settings
    from ctxmodes.config_sources import user_config_path

    trust = run_trust(args)
    loaded = load_settings(cli=cli_overrides(args), trust=trust.is_trusted)
    notes = trust_lines(trust, loaded.skipped)
    settings = loaded.settings
    flat = flatten(settings.model_dump(exclude={"modes"}))
    flat.update(_mode_settings(settings, loaded.origins.get("mode", DEFAULT_SOURCE)))
    rows = {
        key: (_shown(key, value), loaded.origins.get(key, DEFAULT_SOURCE))
        for key, value in flat.items()
    }
    if args.json:
        print(json.dumps({k: {"value": v, "source": src} for k, (v, src) in rows.items()}))
        for line in notes:
            print(line, file=sys.stderr)
        return 0
    width = max(len(key) for key in rows)
    for key, (value, source) in rows.items():
        print(f"{key.ljust(width)} = {json.dumps(value)}  # {source}")
    print(f"# user file: {user_config_path()}")
    if loaded.skipped is not None:
        print(f"# skipped (project not trusted): {loaded.skipped}")
    for line in notes:
        print(line, file=sys.stderr)
    return 0


def _shown(key: str, value: Any) -> Any:
    """``value`` as printed: a provider's API key, and a header that carries a credential,
    are replaced (the output is pasted into bug reports; the file says where they are)."""
    from ctxmodes.providers.secrets import REDACTED, is_sensitive_header

    parts = key.split(".")
    if parts[0] != "providers" or value is None:
        return value
    if parts[-1] == "api_key" or (parts[-2:-1] == ["headers"] and is_sensitive_header(parts[-1])):
        return REDACTED
    return value


def _mode_settings(settings: Settings, mode_source: str) -> dict[str, Any]:
    """Every installed mode's effective settings as ``modes.<name>.<key>``, defaults
    included; a ``mode``, or a ``[modes.<name>]`` table, naming a mode that is not installed
    is an error (``mode_source``: where ``mode`` was set)."""
    from ctxmodes.config import MODES_TABLE
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.plugins import make_configured_plugin_manager

    registry = ModeRegistry.from_plugin_manager(make_configured_plugin_manager(settings))
    registry.get(settings.mode, where=f"{mode_source}: mode")
    for name in sorted(settings.modes):
        registry.get(name, where=f"[{MODES_TABLE}.{name}]")
    values: dict[str, Any] = {}
    for mode in registry:
        validated = mode.spec.validate_settings(settings.modes.get(mode.spec.name))
        if validated is not None:
            for key, value in validated.model_dump(mode="json").items():
                values[f"{MODES_TABLE}.{mode.spec.name}.{key}"] = value
    return values
