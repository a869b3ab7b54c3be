"""Anthropic's subscription login (Claude Pro/Max), as pi-ai's ``anthropic`` OAuth flow.

Login is a browser PKCE flow with Pi's client id and redirect (a loopback server on port
53692, path ``/callback``); the PKCE verifier doubles as the ``state``, as in Pi. On a
machine without a browser the user pastes the URL the browser ended on, or the code.
Tokens are exchanged and refreshed with JSON posts to ``platform.claude.com``'s token
endpoint; an entry's ``expires`` is five minutes before the token really expires (Pi's
margin), and refreshes happen under Pi's lock (:mod:`ctxmodes.providers.oauth`).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from ctxmodes.providers import oauth
from ctxmodes.providers.credential_store import Credential
from ctxmodes.providers.credentials import CredentialError
from ctxmodes.providers.oauth import REFRESH_TIMEOUT_S, AuthorizationFlow, Refresh, pkce_pair

if TYPE_CHECKING:
    import httpx

PROVIDER: Final = "anthropic"
CLIENT_ID: Final = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
AUTHORIZE_URL: Final = "https://claude.ai/oauth/authorize"
TOKEN_BASE_URL: Final = "https://platform.claude.com"
TOKEN_PATH: Final = "/v1/oauth/token"
CALLBACK_PORT: Final = 53692
CALLBACK_PATH: Final = "/callback"
REDIRECT_URI: Final = f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
SCOPES: Final = (
    "org:create_api_key user:profile user:inference user:sessions:claude_code "
    "user:mcp_servers user:file_upload"
)
#: Pi stores an expiry this much earlier than the token's own.
EXPIRY_MARGIN_MS: Final = 5 * 60 * 1000
#: Pi's bound on a login's token exchange.
EXCHANGE_TIMEOUT_S: Final = 30.0
#: Where tests and self-hosted identity servers move the token endpoint.
TOKEN_BASE_ENV: Final = "CTXMODES_ANTHROPIC_AUTH_BASE"


def token_base(environ: Mapping[str, str]) -> str:
    return (environ.get(TOKEN_BASE_ENV) or TOKEN_BASE_URL).rstrip("/")


def authorization_flow(redirect_uri: str = REDIRECT_URI) -> AuthorizationFlow:
    verifier, challenge = pkce_pair()
    query = {
        "code": "true",
        "client_id": CLIENT_ID,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "scope": SCOPES,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": verifier,
    }
    url = f"{AUTHORIZE_URL}?{urllib.parse.urlencode(query)}"
    return AuthorizationFlow(url, verifier, verifier, redirect_uri)


class CallbackServer(oauth.CallbackServer):
    """The loopback server Anthropic redirects the browser to (``/callback``)."""

    def __init__(self, state: str, host: str = "127.0.0.1", port: int = CALLBACK_PORT) -> None:
        super().__init__(state, path=CALLBACK_PATH, service="Anthropic", host=host, port=port)


def _post(
    client: httpx.Client, url: str, body: dict[str, str], operation: str, timeout_s: float
) -> dict[str, object]:
    import httpx

    try:
        response = client.post(
            url,
            content=json.dumps(body).encode(),
            headers={"content-type": "application/json", "accept": "application/json"},
            timeout=timeout_s,
        )
    except httpx.HTTPError as error:
        raise CredentialError(f"Anthropic token {operation} error: {error}") from None
    if not response.is_success:
        # The body names the OAuth error; it never holds a token on a refusal.
        raise CredentialError(
            f"Anthropic token {operation} failed ({response.status_code}): {response.text}"
        )
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise CredentialError(f"Anthropic token {operation} returned invalid JSON")
    return data


def _credential(data: dict[str, object], operation: str, now_ms: int) -> Credential:
    access, refresh, expires_in = (
        data.get("access_token"),
        data.get("refresh_token"),
        data.get("expires_in"),
    )
    if (
        not isinstance(access, str)
        or not isinstance(refresh, str)
        or not isinstance(expires_in, int | float)
        or isinstance(expires_in, bool)
    ):
        # Never echo what came back: it may hold a token.
        raise CredentialError(
            f"Anthropic token {operation} response missing fields: {sorted(data)}"
        )
    return {
        "type": "oauth",
        "refresh": refresh,
        "access": access,
        "expires": now_ms + int(expires_in * 1000) - EXPIRY_MARGIN_MS,
    }


def exchange_code(
    flow: AuthorizationFlow, code: str, client: httpx.Client, *, base: str, now_ms: int
) -> Credential:
    """The credential for an authorization code of ``flow``."""
    body = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": flow.state,
        "redirect_uri": flow.redirect_uri,
        "code_verifier": flow.verifier,
    }
    data = _post(client, f"{base}{TOKEN_PATH}", body, "exchange", EXCHANGE_TIMEOUT_S)
    return _credential(data, "exchange", now_ms)


def refresh_credential(
    credential: Credential, client: httpx.Client, *, base: str, now_ms: int
) -> Credential:
    """Spend the refresh token once; the new entry.

    :raises CredentialError: the endpoint refused, or answered without tokens.
    """
    body = {
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": str(credential.get("refresh", "")),
    }
    data = _post(client, f"{base}{TOKEN_PATH}", body, "refresh", REFRESH_TIMEOUT_S)
    return _credential(data, "refresh", now_ms)


def refresher(
    client: Callable[[], httpx.Client], *, base: str, now_ms: Callable[[], int]
) -> Refresh:
    """Anthropic's :data:`~ctxmodes.providers.oauth.Refresh`, sent with ``client()``."""
    return lambda credential: refresh_credential(credential, client(), base=base, now_ms=now_ms())
