"""``ctxmodes history FILE ACTION`` and ``ctxmodes notes FILE ACTION``: the read-only history and
notes operations, offline, on any session file (ours or one written by the TypeScript
extension), answered exactly as the model would get them by the session's mode: the one it
records (or, for a file that records none, the one its entries show), or ``--mode``.

The file is opened read-only: it is never locked or modified, so it may belong to a running
agent. Every failure (a missing file, an unknown action, a malformed argument, a mode that
keeps no history) is one line on standard error and exit status 1.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import add_mode_option
from ctxmodes.errors import CtxmodesError
from ctxmodes.terminal_text import visible_lines

if TYPE_CHECKING:
    from ctxmodes.windows.tools import Family

READ_ACTIONS: dict[Family, tuple[str, ...]] = {
    "history": ("list_windows", "list_items", "read_item", "search_contents"),
    "notes": ("list_files_by_prefix", "read_file", "search_contents"),
}


def register(subparsers: Any) -> None:
    for family, actions in READ_ACTIONS.items():
        parser = add_command_parser(
            subparsers,
            family,
            description=(
                f"Run a {family} operation offline. Arguments are NAME=VALUE pairs with the "
                "tool's parameter names. A parameter that takes text keeps VALUE as written "
                "(path=2024.md); any other VALUE that parses as JSON is taken as JSON "
                "(limit=5, recent_first=true); a value the parameter cannot take is an error."
            ),
        )
        parser.add_argument("file", type=Path, help="the session .jsonl file")
        # Checked by ``run`` rather than by argparse ``choices``: a wrong action is then an
        # ordinary one-line error instead of a usage dump with another exit status.
        parser.add_argument("action", metavar="ACTION", help=f"one of: {', '.join(actions)}")
        parser.add_argument("arguments", nargs="*", default=[], metavar="NAME=VALUE")
        add_mode_option(parser)
        parser.set_defaults(handler=run, family=family)


def check_action(family: Family, action: str) -> None:
    """:raises CtxmodesError: ``action`` is not a read-only operation of ``family``."""
    actions = READ_ACTIONS[family]
    if action not in actions:
        raise CtxmodesError(
            f"{family} has no read-only action {action!r}; choose one of: {', '.join(actions)}"
        )


def _takes_text(schema: dict[str, Any]) -> bool:
    """Whether a parameter schema accepts a string (plain, nullable or enumerated)."""
    variants = schema.get("anyOf", [schema])
    return any(isinstance(v, dict) and v.get("type") == "string" for v in variants)


def parse_arguments(family: Family, action: str, pairs: list[str]) -> dict[str, Any]:
    """The operation's arguments from ``NAME=VALUE`` pairs.

    A parameter that takes text keeps its value verbatim, so ``path=2024.md`` or
    ``query=true`` stay strings; other values are JSON when they parse as JSON and strings
    otherwise (the operation then reads them leniently, as it does a model's arguments).
    Unknown names are passed on for the operation to reject.

    :raises CtxmodesError: a pair is not ``NAME=VALUE``, or a name is given twice.
    """
    from ctxmodes.windows.tools import OPERATIONS

    operation = OPERATIONS[family][action]
    parsed: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CtxmodesError(f"argument {pair!r} is not NAME=VALUE")
        if name in parsed:
            raise CtxmodesError(f"argument {name} is given more than once")
        if name not in operation.fields:
            parsed[name] = value  # the operation names it in its error
            continue
        schema = operation.field_schema(name)
        parsed[name] = value if _takes_text(schema) else _json_or_text(value)
        # A model's arguments are read leniently (a limit that is no number is dropped);
        # someone typing a command is told instead.
        if not any(_fits(parsed[name], variant) for variant in schema.get("anyOf", [schema])):
            shown = value if len(value) <= _SHOWN_CHARS else value[: _SHOWN_CHARS - 1] + "…"
            raise CtxmodesError(f"argument {name}={shown}: {name} takes {_expected(schema)}")
    return parsed


#: The longest argument value an error quotes whole.
_SHOWN_CHARS: Final = 40


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        # Nested too deeply to be JSON the operation could use: it stays text.
        return value


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` has the JSON Schema ``type`` (and ``minimum``, ``enum``) of
    ``schema``; a schema of another kind is left to the operation."""
    kind = schema.get("type")
    if kind == "integer":
        number = isinstance(value, int) and not isinstance(value, bool)
        return number and value >= schema.get("minimum", value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "string":
        return isinstance(value, str) and value in schema.get("enum", [value])
    return True


def _expected(schema: dict[str, Any]) -> str:
    """What a parameter takes, in words: "an integer of at least 1", "true or false". A
    parameter that keeps its value as text cannot be given null (leaving it out is)."""
    words = []
    text = _takes_text(schema)
    for variant in schema.get("anyOf", [schema]):
        kind = variant.get("type")
        if kind == "integer":
            least = variant.get("minimum")
            words.append("an integer" + (f" of at least {least}" if least is not None else ""))
        elif kind == "boolean":
            words.append("true or false")
        elif kind == "null" and not text:
            words.append("null")
        elif kind == "string" and "enum" in variant:
            words.append("one of " + ", ".join(variant["enum"]))
        elif kind == "string":
            words.append("text")
    return " or ".join(words)


def run(args: argparse.Namespace) -> int:
    from ctxmodes.cli.session_warnings import warn_about_session
    from ctxmodes.config import load_settings
    from ctxmodes.events import RetrievalRequest
    from ctxmodes.hooks import HookRelay
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.offline import OfflineSession
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session_mode import session_mode

    check_action(args.family, args.action)
    arguments = parse_arguments(args.family, args.action, args.arguments)
    settings = load_settings().settings
    pm = make_configured_plugin_manager(settings)
    registry = ModeRegistry.from_plugin_manager(pm, pm.distributions())
    if args.mode is not None:
        registry.get(args.mode)  # an unknown mode fails before the file is opened
    with SessionManager.open(args.file, read_only=True) as manager:
        warn_about_session(args.file, manager)
        own = session_mode(manager, registry, settings.mode, settings.modes)
        mode = args.mode if args.mode is not None else own.name
        session = OfflineSession(manager, mode_name=mode)
        registry.activate(
            pm, mode, session, settings.modes.get(mode) if args.mode else own.settings
        )
        relay = HookRelay(pm, session)
        relay.session_start("resume")
        try:
            request = RetrievalRequest(family=args.family, action=args.action, arguments=arguments)
            result = relay.retrieve(request)
        finally:
            relay.session_shutdown("quit")
            registry.deactivate(pm, mode)
    if result is None:
        raise CtxmodesError(
            f"mode {mode!r} keeps no {args.family}; the session is not managed by a mode that "
            "does (choose one with --mode)"
        )
    if result.is_error:
        raise CtxmodesError(result.text)
    try:
        text = json.dumps(json.loads(result.text), indent=2, ensure_ascii=False)
    except json.JSONDecodeError:
        text = result.text
    # What a window or a note holds is shown, never obeyed; in JSON text an escape stands for
    # the character it replaces.
    print(visible_lines(text))
    return 0
