"""``ctxmodes login`` and ``ctxmodes logout``: what Pi's ``/login`` offers, from the shell.

``ctxmodes login`` lists the providers and how each can log in; ``ctxmodes login
anthropic`` or ``openai-codex`` runs the subscription login in the browser (or by pasting
the URL it ends on); ``--api-key`` (and every other provider) stores an API key read from
the terminal without echo, or from standard input. Credentials go to ctxmodes' own
credential file; Pi's and the Codex CLI's logins are used too, but never changed here.
"""

from __future__ import annotations

import argparse
from typing import Any

from ctxmodes.cli.core_commands import add_command_parser


def register(subparsers: Any) -> None:
    login = add_command_parser(subparsers, "login")
    login.add_argument(
        "provider", nargs="?", help="the provider (without one: list them and their logins)"
    )
    login.add_argument(
        "--api-key",
        action="store_true",
        help="store an API key even where a subscription login exists",
    )
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="print the sign-in URL instead of opening a browser",
    )
    login.set_defaults(handler=run_login)
    logout = add_command_parser(subparsers, "logout")
    logout.add_argument("provider")
    logout.set_defaults(handler=run_logout)


def _custom_providers() -> list[str]:
    from ctxmodes.providers.models_json import pi_models_json

    return list(pi_models_json())


def _list() -> int:
    from ctxmodes.providers.auth import AuthResolver, environment_names
    from ctxmodes.providers.login import login_choices

    resolver = AuthResolver()
    rows = [("PROVIDER", "LOGIN", "CREDENTIALS", "OR SET")]
    for choice in login_choices(_custom_providers()):
        ways = [f"subscription ({choice.subscription})"] if choice.subscription else []
        if choice.api_key:
            ways.append("API key")
        if choice.pi_only_login:
            ways.append(f"{choice.pi_only_login}: log in with Pi")
        variables = ", ".join(environment_names(choice.provider))
        if choice.provider == "openai-codex":
            variables = "(the Codex CLI's login)"
        status = resolver.status(choice.provider) or ""
        rows.append((choice.provider, ", ".join(ways), status, variables))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[3]]).rstrip())
    return 0


def _read_secret(prompt: str) -> str:
    import getpass
    import sys

    from ctxmodes.cli.terminals import is_terminal

    if is_terminal(sys.stdin):
        return getpass.getpass(f"{prompt}: ")
    print(f"{prompt} (reading standard input):", file=sys.stderr)
    return _input_line()


def _read_text(prompt: str) -> str:
    import sys

    print(f"{prompt}: ", end="", file=sys.stderr, flush=True)
    return _input_line()


def _input_line() -> str:
    """A line of standard input, trimmed (nothing when the process has none)."""
    import sys

    return sys.stdin.readline().strip() if sys.stdin is not None else ""


def _login_with_key(provider: str) -> int:
    from ctxmodes.providers.login import EXTRA_SETTINGS, save_api_key

    key = _read_secret(f"API key for {provider}")
    settings = {name: _read_text(name) for name in EXTRA_SETTINGS.get(provider, ())}
    path = save_api_key(provider, key, {k: v for k, v in settings.items() if v})
    print(f"Stored an API key for {provider} in {path}")
    return 0


def _login_in_browser(provider: str, no_browser: bool) -> int:
    import sys
    import webbrowser

    import httpx

    from ctxmodes.providers.login import SUBSCRIPTIONS, start_browser_login

    login = start_browser_login(provider)
    if login.server_error is not None:
        print(f"{login.server_error}; paste the URL the browser ends on instead.", file=sys.stderr)
    print(f"Sign in to {SUBSCRIPTIONS[provider]} in your browser:", file=sys.stderr)
    print(login.url, file=sys.stderr)
    if not no_browser:
        webbrowser.open(login.url)
    print(
        "Waiting for the browser... or paste the URL it was redirected to and press Enter:",
        file=sys.stderr,
    )
    with httpx.Client() as client:
        credential = login.finish(lambda: sys.stdin.readline() or None, client)
    account = f" (account {credential['accountId']})" if credential.get("accountId") else ""
    from ctxmodes.providers.credentials import ctxmodes_credentials_path

    print(f"Logged in to {provider}{account}; saved to {ctxmodes_credentials_path()}")
    return 0


def run_login(args: argparse.Namespace) -> int:
    from ctxmodes.providers.credentials import CredentialError
    from ctxmodes.providers.login import login_choice

    if args.provider is None:
        return _list()
    choice = login_choice(args.provider, _custom_providers())
    if choice.subscription and not args.api_key:
        return _login_in_browser(choice.provider, args.no_browser)
    if not choice.api_key:
        raise CredentialError(
            f"{choice.provider} has no API key login; its login is a subscription"
        )
    return _login_with_key(choice.provider)


def run_logout(args: argparse.Namespace) -> int:
    from ctxmodes.providers.login import forget

    removed, path = forget(args.provider)
    if removed:
        print(f"Logged out of {args.provider} (removed from {path})")
    else:
        print(f"Not logged in to {args.provider} with ctxmodes ({path} has no entry)")
    return 0
