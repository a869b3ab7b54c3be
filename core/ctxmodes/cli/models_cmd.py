"""``ctxmodes models``: every known model with its provider, api, limits and prices."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "models", help="list the models ctxmodes can use (provider/model-id)"
    )
    parser.add_argument("--provider", help="only this provider's models")
    parser.set_defaults(handler=run)


def _price(value: float) -> str:
    return f"{value:g}"


def run(args: argparse.Namespace) -> int:
    from ctxmodes.config import load_settings
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.registry import registry_from_plugin_manager

    settings = load_settings().settings
    registry = registry_from_plugin_manager(make_configured_plugin_manager(settings))
    header = ("MODEL", "API", "CONTEXT", "MAX OUT", "$/M IN", "OUT", "CACHE R", "CACHE W")
    rows = [
        (
            model.ref,
            model.api,
            str(model.context_window),
            str(model.max_tokens),
            _price(model.cost.input),
            _price(model.cost.output),
            _price(model.cost.cache_read),
            _price(model.cost.cache_write),
        )
        for model in registry.models
        if args.provider is None or model.provider == args.provider
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    return 0
