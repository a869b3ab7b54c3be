"""ChatGPT (Codex) OAuth: refreshing tokens as Pi does, and logging in.

Refresh (pi-ai's ``resolveStoredOAuth``): a token with less than five minutes left is
refreshed under the credential file's lock, after re-reading the entry there — if another
process refreshed meanwhile, its token is used and the spent refresh token is never sent
again. The request is Pi's: ``POST https://auth.openai.com/oauth/token``, a form with
``grant_type=refresh_token``, the refresh token and Pi's client id; the answer's tokens and
``expires_in`` become the new entry (``accountId`` from the new token's claims).

Login is the browser PKCE flow Pi and the Codex CLI use, with Pi's redirect URI: a loopback
server on port 1455 receives the callback; on a machine without a browser the user pastes
the URL the browser was sent to.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import queue
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ctxmodes.providers.credential_store import Credential, CredentialStore
from ctxmodes.providers.credentials import CredentialError

if TYPE_CHECKING:
    import httpx

PROVIDER: Final = "openai-codex"
CLIENT_ID: Final = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE_URL: Final = "https://auth.openai.com"
REDIRECT_URI: Final = "http://localhost:1455/auth/callback"
CALLBACK_PORT: Final = 1455
SCOPE: Final = "openid profile email offline_access"
JWT_CLAIM: Final = "https://api.openai.com/auth"
#: Pi refreshes a token that has less than this left.
MINIMUM_VALIDITY_MS: Final = 5 * 60 * 1000
REFRESH_TIMEOUT_S: Final = 15.0
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


def expires_soon(credential: Credential, now_ms: int) -> bool:
    expires = credential.get("expires")
    if not isinstance(expires, int | float):
        return True
    return now_ms + MINIMUM_VALIDITY_MS >= expires


def current_access_token(
    store: CredentialStore,
    client: httpx.Client,
    *,
    base: str = AUTH_BASE_URL,
    now_ms: Callable[[], int],
    user_agent: str,
) -> str | None:
    """The access token in ``store``, refreshed first when it expires within five minutes.

    :raises CredentialError: the refresh failed (``OAuth refresh failed for openai-codex:
        …``); the stored entry is left as it was.
    """
    stored = store.read(PROVIDER)
    if stored is None or stored.get("type") != "oauth" or not isinstance(stored.get("access"), str):
        return None
    if not expires_soon(stored, now_ms()):
        return str(stored["access"])

    def refresh(current: Credential | None) -> Credential | None:
        if current is None or current.get("type") != "oauth":
            return None  # logged out meanwhile
        if not expires_soon(current, now_ms()):
            return None  # another process refreshed while we waited for the lock
        try:
            return refresh_credential(
                current, client, base=base, now_ms=now_ms(), user_agent=user_agent
            )
        except CredentialError as error:
            raise CredentialError(f"OAuth refresh failed for {PROVIDER}: {error}") from None

    after = store.modify(PROVIDER, refresh)
    if after is None or after.get("type") != "oauth":
        return None
    return str(after["access"])


# ---------------------------------------------------------------- login


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass(frozen=True)
class AuthorizationFlow:
    """One login attempt: the URL to open and what proves the answer belongs to it."""

    url: str
    verifier: str
    state: str
    redirect_uri: str


def authorization_flow(base: str, redirect_uri: str = REDIRECT_URI) -> AuthorizationFlow:
    verifier = _b64url(secrets.token_bytes(32))
    challenge = _b64url(hashlib.sha256(verifier.encode()).digest())
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


def _first(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def parse_pasted(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from a pasted redirect URL, ``code#state``, a query, or a code."""
    value = text.strip()
    if not value:
        return None, None
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme and parsed.netloc:
        query = urllib.parse.parse_qs(parsed.query)
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, state = value.split("#", 1)
        return code, state
    if "code=" in value:
        query = urllib.parse.parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


class CallbackServer:
    """The loopback server the browser is redirected to (``/auth/callback``)."""

    def __init__(self, state: str, host: str = "127.0.0.1", port: int = CALLBACK_PORT) -> None:
        #: The codes browsers brought, in order.
        self.codes: queue.Queue[str] = queue.Queue()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if url.path != "/auth/callback":
                    self._page(404, "Callback route not found.")
                elif _first(query, "state") != state:
                    self._page(400, "State mismatch.")
                elif not query.get("code"):
                    self._page(400, "Missing authorization code.")
                else:
                    self._page(200, "OpenAI authentication completed. You can close this window.")
                    owner.codes.put(query["code"][0])

            def _page(self, status: int, text: str) -> None:
                body = f"<!doctype html><title>ctxmodes</title><p>{text}</p>".encode()
                self.send_response(status)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self._server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


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


def wait_for_code(
    flow: AuthorizationFlow,
    server: CallbackServer | None,
    read_pasted: Callable[[], str | None],
    *,
    timeout_s: float = 300.0,
) -> str:
    """The authorization code: from the callback, or from what the user pastes, whichever
    comes first (``read_pasted`` returns ``None`` once input is closed).

    :raises CredentialError: nothing came in time, or what was pasted belongs to another
        attempt or holds no code.
    """
    answers: queue.Queue[tuple[str, str | None]] = queue.Queue()
    if server is not None:
        codes = server.codes
        threading.Thread(
            target=lambda: answers.put(("callback", codes.get())), name="login-wait", daemon=True
        ).start()
    threading.Thread(
        target=lambda: answers.put(("paste", read_pasted())), name="login-paste", daemon=True
    ).start()
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            source, text = answers.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise CredentialError("login timed out: no answer from the browser") from None
        if source == "callback" and text:
            return text
        if text is None:
            if server is None:
                raise CredentialError("login cancelled: no redirect URL was pasted")
            continue  # input closed: only the browser can still answer
        code, state = parse_pasted(text)
        if state is not None and state != flow.state:
            raise CredentialError("the pasted URL belongs to another login (state mismatch)")
        if not code:
            raise CredentialError("no authorization code in what was pasted")
        return code


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

    def stores(self) -> list[CredentialStore]:
        from ctxmodes.providers.credential_store import FileCredentialStore
        from ctxmodes.providers.credentials import ctxmodes_credentials_path, pi_agent_dir

        return [
            FileCredentialStore(ctxmodes_credentials_path(self._environ)),
            FileCredentialStore(pi_agent_dir(self._environ) / "auth.json"),
        ]

    def __call__(self) -> str | None:
        from ctxmodes.providers.credentials import codex_cli_token

        for store in self.stores():
            token = current_access_token(
                store,
                self._client(),
                base=auth_base(self._environ),
                now_ms=self._now_ms,
                user_agent=self._user_agent,
            )
            if token is not None:
                return token
        return codex_cli_token(self._environ)
