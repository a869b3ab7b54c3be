"""A local server as its users configure one: no key needed, and a server that is not running
is named once, with the address that was tried."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.abort import AbortController
from ctxmodes.config import ProviderSettings
from ctxmodes.host.retry_classify import is_transient_error
from ctxmodes.providers.base import ModelRequest, ProviderError, StreamDone, StreamError
from ctxmodes.providers.builtin import configured_models, default_model_provider
from ctxmodes.providers.catalog import builtin_models
from ctxmodes.session.models import UserMessage

pytestmark = pytest.mark.slow  # each test runs ctxmodes as a process, end to end

API = "openai-completions"


def configure(tmp_path: Path, base_url: str) -> None:
    """The configuration the documentation gives for Ollama, as written."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "config.toml").write_text(
        "[providers.ollama]\n"
        f'api = "{API}"\n'
        f'base_url = "{base_url}"\n'
        'api_key_env = "OLLAMA_API_KEY"\n'
        'models = [{ id = "qwen3", context_window = 32768, max_tokens = 8192, '
        "compat = { supportsDeveloperRole = false } }]\n"
    )


def run(tmp_path: Path, *prompts: str, **env: str):
    environment = {"CTXMODES_CONFIG_DIR": str(tmp_path / "config"), "OLLAMA_API_KEY": ""}
    environment.update(env)
    return run_ctxmodes(tmp_path, "run", "--model", "ollama/qwen3", *prompts, env=environment)


def test_a_keyless_server_gets_no_authorization_header(tmp_path: Path) -> None:
    with WireServer([Reply(text_stream(API, "Hello from the local model"))]) as server:
        configure(tmp_path, f"{server.base_url}/v1")
        result = run(tmp_path, "hi")
    assert result.returncode == 0, result.stderr
    assert "Hello from the local model" in result.stdout
    (request,) = server.requests
    assert "authorization" not in {name.lower() for name in request["headers"]}


def test_a_key_when_one_is_set_is_sent(tmp_path: Path) -> None:
    with WireServer([Reply(text_stream(API, "ok"))]) as server:
        configure(tmp_path, f"{server.base_url}/v1")
        result = run(tmp_path, "hi", OLLAMA_API_KEY="local-secret-key")
    assert result.returncode == 0, result.stderr
    headers = {name.lower(): value for name, value in server.requests[0]["headers"].items()}
    assert headers["authorization"] == "Bearer local-secret-key"


def test_pi_ai_providers_still_need_a_key() -> None:
    model = next(m for m in builtin_models() if m.provider == "openai")
    provider = default_model_provider(model)
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    try:
        with pytest.raises(ProviderError, match="No API key for provider: openai"):
            list(provider.stream(request, AbortController().signal))
    finally:
        provider.close()


def test_a_stopped_server_is_named_once(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    configure(tmp_path, url)
    result = run(tmp_path, "hi")
    assert result.returncode == 1
    expected = f"Could not connect to {url}/chat/completions: connection refused"
    assert result.stdout.count(expected) == 1, result.stdout
    assert "retry" not in result.stdout
    assert "Connection error." not in result.stdout + result.stderr
    assert result.stderr.count(expected) == 1
    assert "Traceback" not in result.stderr


def test_configured_endpoints_are_keyless_and_builtin_ones_are_not() -> None:
    failure = _failed_stream("http://127.0.0.1:1/v1")
    assert "Could not connect to http://127.0.0.1:1/v1/chat/completions" in str(
        failure.message.error_message
    )
    assert not is_transient_error(failure.message, 32_768)


def test_other_connection_failures_name_the_address_and_stay_retryable() -> None:
    error = _failed_stream("http://no-such-host.invalid/v1")
    message = str(error.message.error_message)
    assert message.startswith(
        "Connection error: could not reach http://no-such-host.invalid/v1/chat/completions"
    )
    assert is_transient_error(error.message, 32_768)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _failed_stream(base_url: str) -> StreamError:
    """The end of a request to a configured keyless endpoint that must fail."""
    settings = ProviderSettings.model_validate(
        {"api": API, "base_url": base_url, "models": [{"id": "m"}]}
    )
    (model,) = configured_models({"box": settings})
    provider = default_model_provider(model)
    try:
        request = ModelRequest(system_prompt="s", messages=[UserMessage(content="x", timestamp=1)])
        events = list(provider.stream(request, AbortController().signal))
    finally:
        provider.close()
    assert not any(isinstance(event, StreamDone) for event in events)
    assert isinstance(events[-1], StreamError)
    return events[-1]


def _first_error(base_url: str) -> str:
    return str(_failed_stream(base_url).message.error_message)


def test_a_proxy_that_refuses_is_named_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server is not the one to blame when the proxy in ``HTTPS_PROXY`` is down."""
    port = _closed_port()
    for name in ("HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"http://me:proxy-secret@127.0.0.1:{port}")
    message = _first_error("https://models.example.test/v1")
    assert message == (
        f"Could not connect to the proxy http://127.0.0.1:{port} for "
        "https://models.example.test/v1/chat/completions: connection refused "
        "(check HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY)"
    )
    # A loopback server over http:// is reached directly, past the HTTPS proxy.
    direct = f"http://127.0.0.1:{_closed_port()}/v1"
    assert _first_error(direct) == (
        f"Could not connect to {direct}/chat/completions: connection refused "
        "(is the server running?)"
    )
