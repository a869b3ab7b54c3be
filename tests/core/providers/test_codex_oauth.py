"""Codex OAuth: refresh as Pi does against a loopback token endpoint, under Pi's lock, once
across processes; corrupt files; the login flow."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import httpx
import pytest
from support.login_process import login_by_pasting
from support.token_server import TokenServer
from support.wire_server import fake_jwt

from ctxmodes.providers import codex_oauth
from ctxmodes.providers.codex_oauth import (
    CLIENT_ID,
    CallbackServer,
    CodexTokenSource,
    authorization_flow,
    current_access_token,
    exchange_code,
    parse_pasted,
    wait_for_code,
)
from ctxmodes.providers.credential_store import (
    FileCredentialStore,
    MemoryCredentialStore,
    pi_lock,
)
from ctxmodes.providers.credentials import CredentialError

NOW = 1_767_225_600_000


def _expired(refresh: str = "rt-1") -> dict[str, object]:
    return {
        "type": "oauth",
        "access": fake_jwt("acct-0"),
        "refresh": refresh,
        "expires": NOW - 1,
        "accountId": "acct-0",
    }


def _token(store, server: TokenServer, now: int = NOW) -> str | None:
    with httpx.Client() as client:
        return current_access_token(
            store, client, base=server.base_url, now_ms=lambda: now, user_agent="pi (test)"
        )


def test_an_expired_token_is_refreshed_with_pis_request_and_stored() -> None:
    store = MemoryCredentialStore({"openai-codex": _expired()})
    with TokenServer() as server:
        token = _token(store, server)
    assert server.forms == [
        {"grant_type": "refresh_token", "refresh_token": "rt-1", "client_id": CLIENT_ID}
    ]
    assert token == fake_jwt("acct-1")
    assert store.read("openai-codex") == {
        "type": "oauth",
        "access": token,
        "refresh": "rt-2",
        "expires": NOW + 3_600_000,
        "accountId": "acct-1",
    }


def test_a_token_valid_for_more_than_five_minutes_is_used_as_is() -> None:
    credential = {**_expired(), "expires": NOW + 5 * 60 * 1000 + 1}
    store = MemoryCredentialStore({"openai-codex": credential})
    with TokenServer() as server:
        assert _token(store, server) == credential["access"]
    assert server.forms == []


def test_a_refused_refresh_is_a_clear_error_and_keeps_the_entry() -> None:
    store = MemoryCredentialStore({"openai-codex": _expired("rt-stale")})
    with TokenServer() as server, pytest.raises(CredentialError) as raised:
        _token(store, server)
    assert str(raised.value).startswith(
        "OAuth refresh failed for openai-codex: OpenAI Codex token refresh failed (400):"
    )
    assert store.read("openai-codex") == _expired("rt-stale")


def test_the_file_is_rewritten_atomically_owner_only_in_pis_format(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text(
        json.dumps({"openai": {"type": "api_key", "key": "sk-x"}, "openai-codex": _expired()})
    )
    path.chmod(0o644)
    before = path.read_text()
    # A reader that opened the file before the refresh keeps reading it whole: the new
    # content is a new file put in its place, never the old one truncated and rewritten.
    with path.open() as opened_before, TokenServer() as server:
        _token(FileCredentialStore(path), server)
        assert opened_before.read() == before
    data = json.loads(path.read_text())
    assert data["openai"] == {"type": "api_key", "key": "sk-x"}  # other entries untouched
    assert data["openai-codex"]["refresh"] == "rt-2"
    assert path.read_text() == json.dumps(data, indent=2, ensure_ascii=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not (tmp_path / "auth.json.lock").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["auth.json"]


def test_a_corrupt_file_is_a_clear_error_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"openai-codex": {"type": "oauth", ')
    store = FileCredentialStore(path)
    with pytest.raises(CredentialError, match="not valid JSON"):
        store.read("openai-codex")
    with pytest.raises(CredentialError, match="not valid JSON"):
        store.modify("openai-codex", lambda current: _expired())
    assert path.read_text() == '{"openai-codex": {"type": "oauth", '


def test_a_lock_held_by_pi_is_waited_for_and_an_abandoned_one_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()  # what proper-lockfile leaves while Pi writes
    with (
        pytest.raises(CredentialError, match="locked by another process"),
        pi_lock(path, timeout_s=0.05),
    ):
        pass
    assert lock.is_dir()  # a live lock is never broken
    old = os.stat(lock).st_mtime - 60
    os.utime(lock, (old, old))
    with pi_lock(path, timeout_s=1):
        assert lock.is_dir()
    assert not lock.exists()


_REFRESH_IN_A_PROCESS = """
import sys
from ctxmodes.providers.codex_oauth import CodexTokenSource
import httpx
client = httpx.Client()
print(CodexTokenSource(lambda: client, user_agent="pi (test)")())
"""


@pytest.mark.slow  # two processes of their own
def test_two_processes_refreshing_at_once_spend_one_refresh_token(tmp_path: Path) -> None:
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "auth.json").write_text(json.dumps({"openai-codex": _expired()}))
    with TokenServer(delay_s=0.3) as server:
        env = {
            **os.environ,
            "PI_CODING_AGENT_DIR": str(pi_dir),
            "CTXMODES_CONFIG_DIR": str(tmp_path / "ctxmodes"),
            "CODEX_HOME": str(tmp_path / "codex"),
            codex_oauth.AUTH_BASE_ENV: server.base_url,
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
    tokens = {out.strip() for out, _ in outputs}
    assert tokens == {fake_jwt("acct-1")}
    refreshes = [form for form in server.forms if form["grant_type"] == "refresh_token"]
    assert refreshes == [
        {"grant_type": "refresh_token", "refresh_token": "rt-1", "client_id": CLIENT_ID}
    ]
    assert json.loads((pi_dir / "auth.json").read_text())["openai-codex"]["refresh"] == "rt-2"


def test_token_source_prefers_a_ctxmodes_login_then_pi_then_the_codex_cli(tmp_path: Path) -> None:
    env = {
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "ctxmodes"),
        "CODEX_HOME": str(tmp_path / "codex"),
    }
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "auth.json").write_text(
        json.dumps({"tokens": {"access_token": "codex-cli"}})
    )
    with httpx.Client() as client:
        source = CodexTokenSource(lambda: client, user_agent="pi", environ=env, now_ms=lambda: NOW)
        assert source() == "codex-cli"
        fresh = {**_expired(), "access": "from-pi", "expires": NOW + 10**9}
        FileCredentialStore(tmp_path / "pi" / "auth.json").modify("openai-codex", lambda _: fresh)
        assert source() == "from-pi"
        mine = {**fresh, "access": "from-login"}
        FileCredentialStore(tmp_path / "ctxmodes" / "auth.json").modify(
            "openai-codex", lambda _: mine
        )
        assert source() == "from-login"


# ---------------------------------------------------------------- login


def test_login_through_the_browser_callback() -> None:
    with TokenServer() as tokens:
        flow = authorization_flow(tokens.base_url, redirect_uri="http://localhost:0/auth/callback")
        tokens.codes["the-code"] = flow.verifier
        server = CallbackServer(flow.state, port=0)
        try:
            callback = (
                f"http://127.0.0.1:{server.port}/auth/callback?code=the-code&state={flow.state}"
            )
            # The browser follows the redirect while the user has not typed anything.
            threading.Thread(target=lambda: urllib.request.urlopen(callback).read()).start()
            blocked = threading.Event()
            code = wait_for_code(flow, server, lambda: (blocked.wait(30), None)[1])
            blocked.set()
        finally:
            server.close()
        with httpx.Client() as client:
            credential = exchange_code(
                flow, code, client, base=tokens.base_url, now_ms=NOW, user_agent="pi"
            )
    assert credential["accountId"] == "acct-1"
    assert tokens.forms[-1]["code_verifier"] == flow.verifier
    query = dict(p.split("=", 1) for p in flow.url.split("?", 1)[1].split("&"))
    assert query["code_challenge_method"] == "S256"
    assert query["client_id"] == CLIENT_ID
    assert query["originator"] == "pi"


def test_a_callback_with_another_state_is_refused() -> None:
    flow = authorization_flow("http://127.0.0.1:9")
    server = CallbackServer(flow.state, port=0)
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(
                f"http://127.0.0.1:{server.port}/auth/callback?code=x&state=other"
            )
        assert refused.value.code == 400
        assert server.codes.empty()
    finally:
        server.close()


def test_login_by_pasting_the_redirect_url() -> None:
    flow = authorization_flow("http://127.0.0.1:9")
    pasted = f"http://localhost:1455/auth/callback?code=pasted-code&state={flow.state}"
    assert wait_for_code(flow, None, lambda: pasted) == "pasted-code"
    with pytest.raises(CredentialError, match="state mismatch"):
        wait_for_code(flow, None, lambda: "http://localhost:1455/auth/callback?code=c&state=x")
    assert parse_pasted("abc#def") == ("abc", "def")
    assert parse_pasted("code=abc&state=def") == ("abc", "def")
    assert parse_pasted("abc") == ("abc", None)


@pytest.mark.slow  # runs ctxmodes in processes of its own
def test_ctxmodes_login_and_logout_with_a_pasted_redirect(tmp_path: Path) -> None:
    import re

    config = tmp_path / "config"
    with TokenServer() as tokens:
        env = {
            **os.environ,
            "CTXMODES_CONFIG_DIR": str(config),
            codex_oauth.AUTH_BASE_ENV: tokens.base_url,
            "CTXMODES_OAUTH_CALLBACK_PORT": "0",
        }
        code, out, err = login_by_pasting(
            "openai-codex",
            env,
            tokens,
            tokens.base_url,
            "http://localhost:1455/auth/callback",
        )
    assert code == 0, err
    assert re.search(r"Logged in to openai-codex \(account acct-1\)", out)
    path = config / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["openai-codex"]["refresh"] == "rt-2"
    logout = subprocess.run(
        [sys.executable, "-m", "ctxmodes", "logout", "openai-codex"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert logout.returncode == 0
    assert "Logged out of openai-codex" in logout.stdout
    assert json.loads(path.read_text()) == {}
