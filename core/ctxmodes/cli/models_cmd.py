"""``ctxmodes models``: every known model with its limits and prices, those whose provider
has credentials first (where they come from is shown; no command is run to find out).
``--search`` keeps the models Pi's fuzzy search keeps, best first; ``--pi-list`` prints Pi's
``--list-models`` table instead (:mod:`ctxmodes.cli.pi_model_list`), which a bare
``ctxmodes --list-models [SEARCH]`` means."""

from __future__ import annotations

import argparse
from typing import Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import add_trust_options, command_settings


def register(subparsers: Any) -> None:
    parser = add_command_parser(subparsers, "models")
    parser.add_argument("--provider", help="only this provider's models")
    parser.add_argument(
        "--available", action="store_true", help="only models whose provider has credentials"
    )
    parser.add_argument(
        "--search",
        metavar="TEXT",
        help="only models whose `provider id` matches TEXT as Pi's fuzzy search does (its "
        "characters in order, any case; words separated by spaces or / must all match), "
        "best match first",
    )
    parser.add_argument(
        "--pi-list",
        action="store_true",
        help="print Pi's `--list-models` table instead: the models with credentials, by "
        "provider and id, with context window, output limit, thinking and images "
        "(`ctxmodes --list-models [SEARCH]`)",
    )
    add_trust_options(parser)
    parser.set_defaults(handler=run)


def _price(value: float) -> str:
    return f"{value:g}"


def run(args: argparse.Namespace) -> int:
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.auth import credential_sources
    from ctxmodes.providers.registry import registry_from_plugin_manager

    settings = command_settings(args).settings
    registry = registry_from_plugin_manager(make_configured_plugin_manager(settings))
    models = [m for m in registry.models if args.provider is None or m.provider == args.provider]
    if not models and args.provider is not None:
        from ctxmodes.errors import CtxmodesError
        from ctxmodes.providers.catalog import builtin_providers

        if args.provider in builtin_providers():
            # Pi knows it, but its models come from a live gateway catalog (Radius'
            # `pi-messages`), which ctxmodes does not read.
            raise CtxmodesError(
                f"{args.provider} has no models here: Pi fetches its catalog from the "
                "provider's gateway, which ctxmodes does not support"
            )
        known = ", ".join(sorted({model.provider for model in registry.models}))
        raise CtxmodesError(f"no provider is named {args.provider!r}; known providers: {known}")
    sources = credential_sources(models)
    if args.pi_list:
        from ctxmodes.cli.pi_model_list import pi_model_list

        available = [model for model in models if sources[model.ref]]
        print("\n".join(pi_model_list(available, args.search)))
        return 0
    shown = [m for m in models if sources[m.ref]] if args.available else models
    if args.search:
        from ctxmodes.fuzzy_filter import fuzzy_filter

        shown = fuzzy_filter(shown, args.search, lambda model: f"{model.provider} {model.id}")
        if not shown:
            print(f'No models matching "{args.search}"')
            return 0
    ordered = [m for m in shown if sources[m.ref]] + [m for m in shown if not sources[m.ref]]
    header = ("MODEL", "API", "CONTEXT", "MAX OUT", "$/M IN", "OUT", "CACHE R", "CACHE W", "KEY")
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
            sources[model.ref] or "-",
        )
        for model in ordered
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    import sys

    with_key = sum(1 for model in models if sources[model.ref])
    print(
        f"{with_key} of {len(models)} models have credentials; `ctxmodes login` adds some",
        file=sys.stderr,
    )
    return 0
