"""``ctxmodes config show``: the effective settings and where each value came from."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ctxmodes.cli.options import add_mode_option, cli_overrides


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser("config", help="inspect settings")
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print effective settings with their sources")
    add_mode_option(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=run_show)


def run_show(args: argparse.Namespace) -> int:
    from ctxmodes.config import flatten, load_settings, user_config_path

    loaded = load_settings(cli=cli_overrides(args))
    flat = flatten(loaded.settings.model_dump())
    if args.json:
        print(json.dumps({k: {"value": v, "source": loaded.origins[k]} for k, v in flat.items()}))
        return 0
    width = max(len(key) for key in flat)
    for key, value in flat.items():
        print(f"{key.ljust(width)} = {json.dumps(value)}  # {loaded.origins[key]}")
    print(f"# user file: {user_config_path()}")
    return 0
