"""A loopback OAuth token endpoint that rotates refresh tokens, as OpenAI's and Anthropic's do
(form posts or JSON bodies).

Each refresh token works once: the answer carries a new access token (an unsigned JWT with
the account claim) and the next refresh token; spending a token twice is refused with
``refresh_token_reused``. Authorization codes are exchanged once too.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
import urllib.parse
from typing import Any

from support.wire_server import fake_jwt


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class TokenServer:
    def __init__(self, first_refresh: str = "rt-1", *, delay_s: float = 0.0) -> None:
        self.current = first_refresh
        self.codes: dict[str, str] = {}  # code -> expected code_verifier
        self.challenges: dict[str, str] = {}  # code -> expected S256 code_challenge
        self.forms: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.issued = 0
        self.delay = threading.Event()
        self._delay_s = delay_s
        self._lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length).decode()
                if self.headers.get("content-type", "").startswith("application/json"):
                    form = {k: str(v) for k, v in json.loads(raw).items()}  # Anthropic's
                else:
                    form = dict(urllib.parse.parse_qsl(raw))
                owner.paths.append(self.path)
                status, body = owner._answer(form)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                return None

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _tokens(self) -> dict[str, Any]:
        self.issued += 1
        self.current = f"rt-{self.issued + 1}"
        return {
            "access_token": fake_jwt(f"acct-{self.issued}"),
            "refresh_token": self.current,
            "id_token": "id",
            "expires_in": 3600,
            "token_type": "Bearer",
        }

    def _answer(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if self._delay_s:
            # Widens the window in which another process could race for the same token.
            self.delay.wait(self._delay_s)
        with self._lock:
            self.forms.append(form)
            if form.get("grant_type") == "refresh_token":
                if form.get("refresh_token") != self.current:
                    return 400, {
                        "error": "invalid_grant",
                        "error_description": "refresh_token_reused",
                    }
                return 200, self._tokens()
            if form.get("grant_type") == "authorization_code":
                code, verifier = form.get("code", ""), form.get("code_verifier", "")
                expected = self.codes.pop(code, None)
                challenge = self.challenges.pop(code, None)
                if expected is not None and expected == verifier:
                    return 200, self._tokens()
                if challenge is not None and challenge == _s256(verifier):
                    return 200, self._tokens()
                return 400, {"error": "invalid_grant"}
            return 400, {"error": "unsupported_grant_type"}

    def __enter__(self) -> TokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.delay.set()
        self._httpd.shutdown()
        self._httpd.server_close()
