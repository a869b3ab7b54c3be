"""Anthropic's subscription login: refresh as Pi does against a loopback token endpoint, under
Pi's lock and once across processes; the browser login."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import httpx
import pytest
from support.token_server import TokenServer
from support.wire_server import fake_jwt

from ctxmodes.providers import anthropic_oauth
from ctxmodes.providers.anthropic_oauth import (
    CLIENT_ID,
    EXPIRY_MARGIN_MS,
    TOKEN_PATH,
    CallbackServer,
    authorization_flow,
    exchange_code,
)
from ctxmodes.providers.auth import AuthResolver
from ctxmodes.providers.credential_store import FileCredentialStore
from ctxmodes.providers.credentials import CredentialError
from ctxmodes.providers.oauth import wait_for_code

NOW = 1_767_225_600_000


def _expired(refresh: str = "rt-1") -> dict[str, object]:
    return {"type": "oauth", "access": "sk-ant-oat-old", "refresh": refresh, "expires": NOW - 1}


def _resolver(tmp_path: Path, server: TokenServer, client: httpx.Client) -> AuthResolver:
    env = {
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "ctxmodes"),
    }
    renew = anthropic_oauth.refresher(lambda: client, base=server.base_url, now_ms=lambda: NOW)
    return AuthResolver(env, refreshers={"anthropic": renew}, now_ms=lambda: NOW)


def _pi_auth(tmp_path: Path, entries: dict[str, object]) -> Path:
    path = tmp_path / "pi" / "auth.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries))
    return path


def test_an_expired_token_is_refreshed_with_pis_request_and_stored(tmp_path: Path) -> None:
    path = _pi_auth(tmp_path, {"anthropic": _expired(), "openai": {"type": "api_key", "key": "k"}})
    with TokenServer() as server, httpx.Client() as client:
        auth = _resolver(tmp_path, server, client).resolve("anthropic")
    assert server.paths == [TOKEN_PATH]
    assert server.forms == [
        {"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": "rt-1"}
    ]
    assert auth is not None
    assert auth.api_key == fake_jwt("acct-1")
    stored = json.loads(path.read_text())
    assert stored["openai"] == {"type": "api_key", "key": "k"}
    assert stored["anthropic"] == {
        "type": "oauth",
        "refresh": "rt-2",
        "access": auth.api_key,
        "expires": NOW + 3_600_000 - EXPIRY_MARGIN_MS,
    }
    assert not (tmp_path / "pi" / "auth.json.lock").exists()


def test_a_valid_token_is_used_without_asking(tmp_path: Path) -> None:
    fresh = {**_expired(), "access": "current", "expires": NOW + 5 * 60 * 1000 + 1}
    _pi_auth(tmp_path, {"anthropic": fresh})
    with TokenServer() as server, httpx.Client() as client:
        auth = _resolver(tmp_path, server, client).resolve("anthropic")
    assert auth is not None
    assert auth.api_key == "current"
    assert server.forms == []


def test_a_refused_refresh_is_a_clear_error_and_keeps_the_entry(tmp_path: Path) -> None:
    path = _pi_auth(tmp_path, {"anthropic": _expired("rt-stale")})
    with (
        TokenServer() as server,
        httpx.Client() as client,
        pytest.raises(CredentialError) as raised,
    ):
        _resolver(tmp_path, server, client).resolve("anthropic")
    assert str(raised.value).startswith(
        "OAuth refresh failed for anthropic: Anthropic token refresh failed (400):"
    )
    assert json.loads(path.read_text())["anthropic"] == _expired("rt-stale")


_REFRESH_IN_A_PROCESS = """
import os, httpx
from ctxmodes.providers import anthropic_oauth
from ctxmodes.providers.auth import AuthResolver
from ctxmodes.providers.wire import wall_clock_ms
client = httpx.Client()
base = os.environ["TOKEN_BASE"]
renew = anthropic_oauth.refresher(lambda: client, base=base, now_ms=wall_clock_ms)
print(AuthResolver(refreshers={"anthropic": renew}).resolve("anthropic").api_key)
"""


@pytest.mark.slow  # two processes of their own
def test_two_processes_refreshing_at_once_spend_one_refresh_token(tmp_path: Path) -> None:
    path = _pi_auth(tmp_path, {"anthropic": _expired()})
    with TokenServer(delay_s=0.3) as server:
        env = {
            **os.environ,
            "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
            "CTXMODES_CONFIG_DIR": str(tmp_path / "ctxmodes"),
            "TOKEN_BASE": server.base_url,
        }
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", _REFRESH_IN_A_PROCESS],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [process.communicate(timeout=60) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    assert {out.strip() for out, _ in outputs} == {fake_jwt("acct-1")}
    assert [form["refresh_token"] for form in server.forms] == ["rt-1"]
    assert json.loads(path.read_text())["anthropic"]["refresh"] == "rt-2"


def test_login_through_the_browser_callback(tmp_path: Path) -> None:
    with TokenServer() as tokens:
        flow = authorization_flow(redirect_uri="http://localhost:0/callback")
        tokens.codes["the-code"] = flow.verifier
        server = CallbackServer(flow.state, port=0)
        try:
            callback = f"http://127.0.0.1:{server.port}/callback?code=the-code&state={flow.state}"
            threading.Thread(target=lambda: urllib.request.urlopen(callback).read()).start()
            blocked = threading.Event()
            code = wait_for_code(flow, server, lambda: (blocked.wait(30), None)[1])
            blocked.set()
        finally:
            server.close()
        with httpx.Client() as client:
            credential = exchange_code(flow, code, client, base=tokens.base_url, now_ms=NOW)
    exchange = tokens.forms[-1]
    assert exchange == {
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": "the-code",
        "state": flow.verifier,
        "redirect_uri": "http://localhost:0/callback",
        "code_verifier": flow.verifier,
    }
    assert credential["expires"] == NOW + 3_600_000 - EXPIRY_MARGIN_MS
    query = dict(pair.split("=", 1) for pair in flow.url.split("?", 1)[1].split("&"))
    assert query["state"] == flow.verifier  # Pi's: the verifier doubles as the state
    assert query["code_challenge_method"] == "S256"
    assert query["code"] == "true"
    store = FileCredentialStore(tmp_path / "auth.json")
    store.modify("anthropic", lambda _current: credential)
    assert store.read("anthropic") == credential
