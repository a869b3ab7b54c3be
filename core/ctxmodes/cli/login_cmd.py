"""``ctxmodes login openai-codex`` and ``ctxmodes logout``: ChatGPT credentials of ctxmodes'
own, in an owner-only file beside its configuration (Pi's and the Codex CLI's logins are used
too, but never changed by these commands)."""

from __future__ import annotations

import argparse
from typing import Any

PROVIDERS = ("openai-codex",)


def register(subparsers: Any) -> None:
    login = subparsers.add_parser(
        "login", help="log in to a provider (browser sign-in, or paste the redirect URL)"
    )
    login.add_argument("provider", choices=PROVIDERS)
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="print the sign-in URL instead of opening a browser",
    )
    login.set_defaults(handler=run_login)
    logout = subparsers.add_parser("logout", help="forget the credentials `ctxmodes login` stored")
    logout.add_argument("provider", choices=PROVIDERS)
    logout.set_defaults(handler=run_logout)


def run_login(args: argparse.Namespace) -> int:
    import os
    import sys
    import webbrowser

    import httpx

    from ctxmodes.providers import codex_oauth
    from ctxmodes.providers.credential_store import FileCredentialStore
    from ctxmodes.providers.credentials import CredentialError, ctxmodes_credentials_path
    from ctxmodes.providers.jsvalues import pi_user_agent
    from ctxmodes.providers.wire import wall_clock_ms

    base = codex_oauth.auth_base(os.environ)
    flow = codex_oauth.authorization_flow(base)
    host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
    # The registered redirect is port 1455; another port only serves tests and proxies.
    port = int(os.environ.get("CTXMODES_OAUTH_CALLBACK_PORT") or codex_oauth.CALLBACK_PORT)
    server: codex_oauth.CallbackServer | None
    try:
        server = codex_oauth.CallbackServer(flow.state, host=host, port=port)
    except OSError as error:
        print(f"cannot listen on {host}:{port} ({error.strerror});", file=sys.stderr)
        print("paste the URL the browser ends on instead.", file=sys.stderr)
        server = None
    try:
        print("Sign in to ChatGPT in your browser:", file=sys.stderr)
        print(flow.url, file=sys.stderr)
        if not args.no_browser:
            webbrowser.open(flow.url)
        print(
            "Waiting for the browser... or paste the URL it was redirected to and press Enter:",
            file=sys.stderr,
        )
        code = codex_oauth.wait_for_code(flow, server, lambda: sys.stdin.readline() or None)
    finally:
        if server is not None:
            server.close()
    with httpx.Client() as client:
        credential = codex_oauth.exchange_code(
            flow, code, client, base=base, now_ms=wall_clock_ms(), user_agent=pi_user_agent()
        )
    path = ctxmodes_credentials_path()
    try:
        FileCredentialStore(path).modify(codex_oauth.PROVIDER, lambda _current: credential)
    except OSError as error:
        raise CredentialError(f"cannot write {path}: {error.strerror or error}") from None
    print(
        f"Logged in to {codex_oauth.PROVIDER} (account {credential['accountId']}); saved to {path}"
    )
    return 0


def run_logout(args: argparse.Namespace) -> int:
    from ctxmodes.providers.credential_store import FileCredentialStore
    from ctxmodes.providers.credentials import ctxmodes_credentials_path

    path = ctxmodes_credentials_path()
    if FileCredentialStore(path).remove(args.provider):
        print(f"Logged out of {args.provider} (removed from {path})")
    else:
        print(f"Not logged in to {args.provider} with ctxmodes ({path} has no entry)")
    return 0
