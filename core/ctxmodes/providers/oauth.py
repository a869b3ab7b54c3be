"""OAuth tokens as pi-ai keeps them: refreshed once, under the credential file's lock.

pi-ai's ``resolveStoredOAuth``: a token with less than five minutes left is refreshed under
the lock of the file that holds it, after re-reading the entry there; if another process
refreshed meanwhile its token is used, and a spent refresh token is never sent again. The
rotated credential is written before the lock is released. Each provider brings its own
:data:`Refresh` (ChatGPT's in :mod:`.codex_oauth`, Anthropic's in :mod:`.anthropic_oauth`),
and PKCE login helpers shared by both live here too.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import queue
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ctxmodes.providers.credential_store import Credential, CredentialStore
from ctxmodes.providers.credentials import CredentialError

#: Pi refreshes a token that has less than this left.
MINIMUM_VALIDITY_MS: Final = 5 * 60 * 1000
#: Pi's bound on one refresh request.
REFRESH_TIMEOUT_S: Final = 15.0

#: Renews an OAuth credential (spends its refresh token once); the new entry.
Refresh = Callable[[Credential], Credential]


def expires_soon(
    credential: Credential, now_ms: int, validity_ms: int = MINIMUM_VALIDITY_MS
) -> bool:
    """Whether ``credential`` expires within ``validity_ms`` of ``now_ms``."""
    expires = credential.get("expires")
    if not isinstance(expires, int | float):
        return True
    return now_ms + validity_ms >= expires


def current_access_token(
    store: CredentialStore,
    provider: str,
    refresh: Refresh,
    *,
    now_ms: Callable[[], int],
    validity_ms: int = MINIMUM_VALIDITY_MS,
) -> str | None:
    """``provider``'s access token in ``store``, refreshed first when it expires within
    ``validity_ms`` (five minutes, Pi's margin for a request); ``None`` when ``store`` holds
    no OAuth entry for it.

    :raises CredentialError: the refresh failed (``OAuth refresh failed for <provider>:
        …``); the stored entry is left as it was.
    """
    stored = store.read(provider)
    if stored is None or stored.get("type") != "oauth" or not isinstance(stored.get("access"), str):
        return None
    if not expires_soon(stored, now_ms(), validity_ms):
        return str(stored["access"])

    def renew(current: Credential | None) -> Credential | None:
        if current is None or current.get("type") != "oauth":
            return None  # logged out meanwhile
        if not expires_soon(current, now_ms(), validity_ms):
            return None  # another process refreshed while we waited for the lock
        try:
            return refresh(current)
        except CredentialError as error:
            raise CredentialError(f"OAuth refresh failed for {provider}: {error}") from None

    after = store.modify(provider, renew)
    if after is None or after.get("type") != "oauth":
        return None
    return str(after["access"])


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def pkce_pair() -> tuple[str, str]:
    """A PKCE ``(verifier, S256 challenge)``, as pi-ai's ``generatePKCE`` makes them."""
    verifier = b64url(secrets.token_bytes(32))
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


def first_value(query: dict[str, list[str]], name: str) -> str | None:
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
        return first_value(query, "code"), first_value(query, "state")
    if "#" in value:
        code, state = value.split("#", 1)
        return code, state
    if "code=" in value:
        query = urllib.parse.parse_qs(value)
        return first_value(query, "code"), first_value(query, "state")
    return value, None


@dataclass(frozen=True)
class AuthorizationFlow:
    """One login attempt: the URL to open and what proves the answer belongs to it."""

    url: str
    verifier: str
    state: str
    redirect_uri: str


class CallbackServer:
    """The loopback server the browser is redirected to (``path``), which takes the code of
    the login whose ``state`` it was given."""

    def __init__(
        self, state: str, *, path: str, service: str, host: str = "127.0.0.1", port: int
    ) -> None:
        #: The codes browsers brought, in order.
        self.codes: queue.Queue[str] = queue.Queue()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if url.path != path:
                    self._page(404, "Callback route not found.")
                elif first_value(query, "state") != state:
                    self._page(400, "State mismatch.")
                elif not query.get("code"):
                    self._page(400, "Missing authorization code.")
                else:
                    self._page(
                        200, f"{service} authentication completed. You can close this window."
                    )
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
