"""``ctxmodes auth``: Pi's ``pi auth`` — a provider's credential printed for another program,
and whether a provider is ready to be called — over the credentials ctxmodes uses.

``ctxmodes auth check --provider P`` (or ``--model M``, read as ``--model`` is) prints
``ready``, ``not_ready`` or ``invalid`` and exits 0, 1 or 2 (``--json``: Pi's JSON answer;
``--credentials``: the credential instead of ``ready``, or in the JSON; ``--no-refresh``:
no OAuth token is renewed). ``ctxmodes auth print-api-key`` and ``print-bearer-token``
print the one key or OAuth token that ``--provider`` (or the one provider with stored
credentials whose models ``--model`` names) has, the token renewed first when it expires
within ``--min-expiry`` (default 30m). See :mod:`ctxmodes.providers.credential_report`.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from ctxmodes.cli.core_commands import add_command_parser
from ctxmodes.cli.options import add_trust_options

if TYPE_CHECKING:
    from ctxmodes.providers.credential_report import CredentialReport

_DURATION = re.compile(r"^(\d+)(ms|s|m|h)$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000}


def register(subparsers: Any) -> None:
    auth = add_command_parser(
        subparsers,
        "auth",
        description="A provider's credential for another program, or whether a provider is "
        "ready, as Pi's `pi auth` reports them. Each needs --provider or --model.",
    )
    # `ctxmodes auth` alone shows what it does, as `pi auth` does.
    auth.set_defaults(handler=lambda _args: _help(auth))
    commands = auth.add_subparsers(dest="auth_command", metavar="COMMAND")
    check = commands.add_parser("check", help="print ready, not_ready or invalid (exit 0, 1 or 2)")
    check.add_argument("--json", action="store_true", help="print Pi's JSON answer")
    check.add_argument(
        "--credentials",
        action="store_true",
        help="print the credential instead of `ready` (with --json: in the answer)",
    )
    check.add_argument("--no-refresh", action="store_true", help="renew no OAuth token to find out")
    check.set_defaults(handler=run_check)
    api_key = commands.add_parser("print-api-key", help="print the provider's API key")
    api_key.set_defaults(handler=run_print, kind="api_key")
    bearer = commands.add_parser(
        "print-bearer-token", help="print the provider's OAuth access token"
    )
    bearer.add_argument(
        "--min-expiry",
        type=_duration_ms,
        metavar="DURATION",
        help="renew the token first when it expires within DURATION (such as 30m or 1h; "
        "default 30m)",
    )
    bearer.set_defaults(handler=run_print, kind="bearer_token")
    for parser in (check, api_key, bearer):
        parser.add_argument("--provider", help="the provider")
        parser.add_argument("--model", help="a model pattern, as --model reads it")
        add_trust_options(parser)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def _duration_ms(text: str) -> int:
    match = _DURATION.match(text)
    if match is None:
        raise argparse.ArgumentTypeError("--min-expiry must use a duration such as 30m or 1h")
    return int(match[1]) * _UNIT_MS[match[2].lower()]


def _report(args: argparse.Namespace) -> CredentialReport:
    from ctxmodes.cli.options import command_settings
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.builtin import auth_resolver
    from ctxmodes.providers.credential_report import CredentialReport
    from ctxmodes.providers.http import HttpSeam
    from ctxmodes.providers.registry import registry_from_plugin_manager

    settings = command_settings(args).settings
    registry = registry_from_plugin_manager(make_configured_plugin_manager(settings))
    return CredentialReport(registry, auth_resolver(HttpSeam()))


def _given(value: str | None) -> str | None:
    return value.strip() if value and value.strip() else None


def run_check(args: argparse.Namespace) -> int:
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.providers.credential_report import CHECK_EXIT, AuthCheck

    provider, model = _given(args.provider), _given(args.model)
    if not provider and not model:
        from ctxmodes.cli import print_error

        # Pi's status for a check it cannot make, not the usual 1.
        print_error(CtxmodesError("Auth checks require --provider <provider> or --model <model>"))
        return CHECK_EXIT["invalid"]
    report = _report(args)
    refresh = not args.no_refresh
    credential = None
    try:
        result = report.check(report.provider_of(provider, model), refresh=refresh)
        if args.credentials and result.status == "ready":
            credential = report.credential(result.provider, refresh=refresh)
            if not credential:
                result = AuthCheck("not_ready", result.provider, reason="credential_not_available")
    except CtxmodesError:
        result = AuthCheck("invalid", provider or model or "", reason="invalid_state")
    if args.json:
        import json

        print(json.dumps(result.as_json(credential), separators=(",", ":"), ensure_ascii=False))
    else:
        print(credential or result.status)
    return CHECK_EXIT[result.status]


def run_print(args: argparse.Namespace) -> int:
    provider, model = _given(args.provider), _given(args.model)
    validity = getattr(args, "min_expiry", None)
    print(_report(args).printed(args.kind, provider, model, validity))
    return 0
