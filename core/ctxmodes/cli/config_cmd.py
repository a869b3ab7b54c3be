"""``ctxmodes config show`` (or ``ctxmodes config``): the effective settings and where each
value came from.

The listing is TOML, one dotted key per line with its source as a comment, so that a user
may copy it, or any of its lines, into a configuration file: a value that is not set is a
comment (TOML has no null).
"""

from __future__ import annotations

import argparse
import json
import math
import re
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
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION")
    show = actions.add_parser("show", help="print effective settings with their sources")
    # `ctxmodes config` alone is `config show`, its one action.
    for shows in (parser, show):
        add_mode_option(shows)
        add_trust_options(shows)
        shows.add_argument("--json", action="store_true", help="machine-readable output")
        shows.set_defaults(handler=run_show)


def run_show(args: argparse.Namespace) -> int:
    from ctxmodes.config import DEFAULT_SOURCE, flatten_paths, load_settings
    from ctxmodes.config_sources import user_config_path

    trust = run_trust(args)
    loaded = load_settings(cli=cli_overrides(args), trust=trust.is_trusted)
    notes = trust_lines(trust, loaded.skipped)
    settings = loaded.settings
    paths = dict(flatten_paths(settings.model_dump(exclude={"modes"})))
    paths.update(_mode_settings(settings, loaded.origins.get("mode", DEFAULT_SOURCE)))
    rows = {
        path: (_shown(path, value), loaded.origins.get(".".join(path), DEFAULT_SOURCE))
        for path, value in paths.items()
    }
    if args.json:
        listing = {".".join(path): {"value": v, "source": src} for path, (v, src) in rows.items()}
        print(json.dumps(listing))
        for line in notes:
            print(line, file=sys.stderr)
        return 0
    keys = {path: ".".join(map(_toml_key, path)) for path in rows}
    width = max(len(key) for key in keys.values())
    for path, (value, source) in rows.items():
        if value is None:
            print(f"# {keys[path]} is not set  # {source}")
        else:
            print(f"{keys[path].ljust(width)} = {toml_value(value)}  # {source}")
    print(f"# user file: {user_config_path()}")
    if not settings.model and not settings.enabled_models:
        print(_picked_model_note(settings))
    if loaded.skipped is not None:
        print(f"# skipped (project not trusted): {loaded.skipped}")
    for line in notes:
        print(line, file=sys.stderr)
    return 0


def _picked_model_note(settings: Settings) -> str:
    """What a new session starts on when no model is set: the model Pi would pick among
    those with credentials, or none."""
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.initial_model import initial_model
    from ctxmodes.providers.registry import registry_from_plugin_manager

    registry = registry_from_plugin_manager(make_configured_plugin_manager(settings))
    picked = initial_model(registry.models)
    if picked is None:
        return "# no model is set and none has credentials: see `ctxmodes login`"
    return f"# no model is set: a new session starts on {picked.ref}, the first with credentials"


def toml_value(value: Any) -> str:
    """``value`` written as TOML; inside a table or an array, a ``None`` (a setting left
    unset) is left out."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's; TOML also wants DEL escaped.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value if item is not None) + "]"
    if isinstance(value, dict):
        items = [f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _shown(parts: tuple[str, ...], value: Any) -> Any:
    """``value`` as printed: a provider's API key, and a header that carries a credential,
    are replaced (the output is pasted into bug reports; the file says where they are)."""
    from ctxmodes.providers.secrets import REDACTED, is_sensitive_header

    if parts[0] != "providers" or value is None:
        return value
    if parts[-1] == "api_key" or (parts[-2:-1] == ("headers",) and is_sensitive_header(parts[-1])):
        return REDACTED
    return value


def _mode_settings(settings: Settings, mode_source: str) -> dict[tuple[str, ...], Any]:
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
    values: dict[tuple[str, ...], Any] = {}
    for mode in registry:
        validated = mode.spec.validate_settings(settings.modes.get(mode.spec.name))
        if validated is not None:
            for key, value in validated.model_dump(mode="json").items():
                values[(MODES_TABLE, mode.spec.name, key)] = value
    return values
