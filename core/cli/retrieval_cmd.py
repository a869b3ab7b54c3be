"""``ctxmodes history FILE ACTION`` and ``ctxmodes notes FILE ACTION``: the read-only history and
notes operations, offline, on any session file (ours or one written by the TypeScript
extension), answered by the configured managed mode exactly as the model would get them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ctxmodes.cli.options import add_mode_option, cli_overrides
from ctxmodes.errors import CtxmodesError

READ_ACTIONS = {
    "history": ("list_windows", "list_items", "read_item", "search_contents"),
    "notes": ("list_files_by_prefix", "read_file", "search_contents"),
}


def register(subparsers: Any) -> None:
    for family, actions in READ_ACTIONS.items():
        parser: argparse.ArgumentParser = subparsers.add_parser(
            family,
            help=f"run a read-only {family} operation on a session file",
            description=(
                f"Run a {family} operation offline. Arguments are NAME=VALUE pairs with the "
                "tool's parameter names; a VALUE that parses as JSON is taken as JSON "
                "(limit=5, recent_first=true), anything else as a string."
            ),
        )
        parser.add_argument("file", type=Path, help="the session .jsonl file")
        parser.add_argument("action", choices=actions)
        parser.add_argument("arguments", nargs="*", metavar="NAME=VALUE")
        add_mode_option(parser)
        parser.set_defaults(handler=run, family=family)


def parse_arguments(pairs: list[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CtxmodesError(f"argument {pair!r} is not NAME=VALUE")
        try:
            parsed[name] = json.loads(value)
        except json.JSONDecodeError:
            parsed[name] = value
    return parsed


def run(args: argparse.Namespace) -> int:
    from ctxmodes.config import load_settings
    from ctxmodes.events import RetrievalRequest
    from ctxmodes.hooks import HookRelay
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.offline import OfflineSession
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.session.manager import SessionManager

    settings = load_settings(cli=cli_overrides(args)).settings
    arguments = parse_arguments(args.arguments)
    pm = make_configured_plugin_manager(settings)
    registry = ModeRegistry.from_plugin_manager(pm, pm.distributions())
    registry.get(settings.mode)  # an unknown mode fails before the file is opened
    manager = SessionManager.open(args.file, read_only=True)
    session = OfflineSession(manager, mode_name=settings.mode)
    registry.activate(pm, settings.mode, session)
    relay = HookRelay(pm, session)
    relay.session_start("resume")
    try:
        request = RetrievalRequest(family=args.family, action=args.action, arguments=arguments)
        result = relay.retrieve(request)
    finally:
        relay.session_shutdown("quit")
    if result is None:
        raise CtxmodesError(
            f"mode {settings.mode!r} keeps no {args.family}; choose a managed mode with --mode"
        )
    if result.is_error:
        raise CtxmodesError(result.text)
    try:
        print(json.dumps(json.loads(result.text), indent=2, ensure_ascii=False))
    except json.JSONDecodeError:
        print(result.text)
    return 0
