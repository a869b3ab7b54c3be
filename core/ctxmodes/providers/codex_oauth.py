"""ChatGPT (Codex) OAuth: refreshing tokens as Pi does, and logging in.

Refresh follows pi-ai's ``resolveStoredOAuth`` (:mod:`ctxmodes.providers.oauth`); the
request is Pi's: ``POST https://auth.openai.com/oauth/token``, a form with
``grant_type=refresh_token``, the refresh token and Pi's client id; the answer's tokens and
``expires_in`` become the new entry (``accountId`` from the new token's claims).

Login is the browser PKCE flow Pi and the Codex CLI use, with Pi's redirect URI: a loopback
server on port 1455 receives the callback; on a machine without a browser the user pastes
the URL the browser was sent to.
"""

from __future__ import annotations

import base64
import json
import secrets
import urllib.parse
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from ctxmodes.providers import oauth
from ctxmodes.providers.auth import AuthResolver
from ctxmodes.providers.credential_store import Credential, CredentialStore
from ctxmodes.providers.credentials import CredentialError
from ctxmodes.providers.oauth import (
    REFRESH_TIMEOUT_S,
    AuthorizationFlow,
    Refresh,
    pkce_pair,
)
from ctxmodes.providers.oauth import parse_pasted as parse_pasted
from ctxmodes.providers.oauth import wait_for_code as wait_for_code

if TYPE_CHECKING:
    import httpx

PROVIDER: Final = "openai-codex"
CLIENT_ID: Final = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE_URL: Final = "https://auth.openai.com"
REDIRECT_URI: Final = "http://localhost:1455/auth/callback"
CALLBACK_PORT: Final = 1455
SCOPE: Final = "openid profile email offline_access"
JWT_CLAIM: Final = "https://api.openai.com/auth"
#: Where tests and self-hosted identity servers move the token endpoint.
AUTH_BASE_ENV: Final = "CTXMODES_OPENAI_AUTH_BASE"


def auth_base(environ: Mapping[str, str]) -> str:
    return (environ.get(AUTH_BASE_ENV) or AUTH_BASE_URL).rstrip("/")


def token_account_id(token: str) -> str | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        found = claims[JWT_CLAIM]["chatgpt_account_id"]
    except (ValueError, KeyError, TypeError):
        return None
    return found if isinstance(found, str) and found else None


def _token_answer(response: httpx.Response, operation: str, now_ms: int) -> Credential:
    if not response.is_success:
        text = response.text or response.reason_phrase
        raise CredentialError(
            f"OpenAI Codex token {operation} failed ({response.status_code}): {text}"
        )
    try:
        data = response.json()
    except ValueError:
        data = None
    if (
        not isinstance(data, dict)
        or not data.get("access_token")
        or not data.get("refresh_token")
        or not isinstance(data.get("expires_in"), int | float)
        or isinstance(data.get("expires_in"), bool)
    ):
        # Never echo what came back: it may hold a token.
        fields = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise CredentialError(f"OpenAI Codex token {operation} response missing fields: {fields}")
    access = str(data["access_token"])
    account = token_account_id(access)
    if account is None:
        raise CredentialError("Failed to extract accountId from token")
    return {
        "type": "oauth",
        "access": access,
        "refresh": str(data["refresh_token"]),
        "expires": now_ms + int(data["expires_in"] * 1000),
        "accountId": account,
    }


def _post_form(
    client: httpx.Client, url: str, form: dict[str, str], user_agent: str
) -> httpx.Response:
    import httpx

    try:
        return client.post(
            url,
            content=urllib.parse.urlencode(form).encode(),
            headers={
                "content-type": "application/x-www-form-urlencoded",
                "accept": "*/*",
                "user-agent": user_agent,
            },
            timeout=REFRESH_TIMEOUT_S,
        )
    except httpx.HTTPError as error:
        raise CredentialError(f"OpenAI Codex token refresh error: {error}") from None


def refresh_credential(
    credential: Credential, client: httpx.Client, *, base: str, now_ms: int, user_agent: str
) -> Credential:
    """Spend the refresh token once; the new entry.

    :raises CredentialError: the endpoint refused, or answered without tokens.
    """
    form = {
        "grant_type": "refresh_token",
        "refresh_token": str(credential.get("refresh", "")),
        "client_id": CLIENT_ID,
    }
    response = _post_form(client, f"{base}/oauth/token", form, user_agent)
    return _token_answer(response, "refresh", now_ms)


def refresher(
    client: Callable[[], httpx.Client], *, base: str, now_ms: Callable[[], int], user_agent: str
) -> Refresh:
    """ChatGPT's :data:`~ctxmodes.providers.oauth.Refresh`, sent with ``client()``."""
    return lambda credential: refresh_credential(
        credential, client(), base=base, now_ms=now_ms(), user_agent=user_agent
    )


def current_access_token(
    store: CredentialStore,
    client: httpx.Client,
    *,
    base: str = AUTH_BASE_URL,
    now_ms: Callable[[], int],
    user_agent: str,
) -> str | None:
    """The ChatGPT access token in ``store``, refreshed first when it expires within five
    minutes (:func:`ctxmodes.providers.oauth.current_access_token`).

    :raises CredentialError: the refresh failed; the stored entry is left as it was.
    """
    renew = refresher(lambda: client, base=base, now_ms=now_ms, user_agent=user_agent)
    return oauth.current_access_token(store, PROVIDER, renew, now_ms=now_ms)


# ---------------------------------------------------------------- login


def authorization_flow(base: str, redirect_uri: str = REDIRECT_URI) -> AuthorizationFlow:
    verifier, challenge = pkce_pair()
    state = secrets.token_hex(16)
    query = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": redirect_uri,
        "scope": SCOPE,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
        "id_token_add_organizations": "true",
        "codex_cli_simplified_flow": "true",
        "originator": "pi",
    }
    url = f"{base}/oauth/authorize?{urllib.parse.urlencode(query)}"
    return AuthorizationFlow(url, verifier, state, redirect_uri)


class CallbackServer(oauth.CallbackServer):
    """The loopback server the browser is redirected to (``/auth/callback``)."""

    def __init__(self, state: str, host: str = "127.0.0.1", port: int = CALLBACK_PORT) -> None:
        super().__init__(state, path="/auth/callback", service="OpenAI", host=host, port=port)


def exchange_code(
    flow: AuthorizationFlow,
    code: str,
    client: httpx.Client,
    *,
    base: str,
    now_ms: int,
    user_agent: str,
) -> Credential:
    """The credential for an authorization code of ``flow``."""
    form = {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "code_verifier": flow.verifier,
        "redirect_uri": flow.redirect_uri,
    }
    return _token_answer(
        _post_form(client, f"{base}/oauth/token", form, user_agent), "exchange", now_ms
    )


class CodexTokenSource:
    """The ChatGPT access token for each request: ctxmodes' own login, then Pi's
    ``auth.json`` (both refreshed when due, under the file lock), then the Codex CLI's.

    :param client: returns the HTTP client refreshes are sent with (the provider's seam).
    """

    def __init__(
        self,
        client: Callable[[], httpx.Client],
        *,
        user_agent: str,
        environ: Mapping[str, str] | None = None,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        import os

        from ctxmodes.providers.wire import wall_clock_ms

        self._client = client
        self._user_agent = user_agent
        self._environ = os.environ if environ is None else environ
        self._now_ms = now_ms or wall_clock_ms

    def __call__(self) -> str | None:
        renew = refresher(
            self._client,
            base=auth_base(self._environ),
            now_ms=self._now_ms,
            user_agent=self._user_agent,
        )
        resolver = AuthResolver(self._environ, refreshers={PROVIDER: renew}, now_ms=self._now_ms)
        auth = resolver.resolve(PROVIDER)
        return auth.api_key if auth is not None else None
