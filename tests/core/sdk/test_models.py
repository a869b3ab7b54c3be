"""``resolve_model`` finds a model as ``ctxmodes run --model`` does, for programs that serve
or proxy one (``ctxmodes serve`` among them): the configured endpoints, and the configured
way of sending requests (``retry.provider``). Real loopback HTTP, the real Chat Completions
transport."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.wire_server import WireServer, overloaded_then

from ctxmodes.abort import AbortController
from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.base import ModelRequest, StreamDone, StreamError, TextContent
from ctxmodes.sdk import resolve_model
from ctxmodes.session.models import UserMessage

API = "openai-completions"


def _configure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, retries: int
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        f"[retry.provider]\nmax_retries = {retries}\n[providers.loop]\n"
        f'api = "{API}"\nbase_url = "{base_url}/v1"\napi_key = "sk-loopback-key"\n'
        'models = [{ id = "m" }]\n'
    )
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(config))


def _answer(spec: str, cwd: Path) -> StreamDone | StreamError:
    provider = resolve_model(spec, cwd=cwd)
    request = ModelRequest(system_prompt="", messages=[UserMessage(content="hi", timestamp=1)])
    try:
        *_, last = provider.stream(request, AbortController().signal)
    finally:
        provider.close()
    assert isinstance(last, StreamDone | StreamError)
    return last


@pytest.mark.parametrize("retries", [0, 1])
def test_a_resolved_model_sends_its_requests_as_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retries: int
) -> None:
    with WireServer(overloaded_then(API, "Recovered")) as server:
        _configure(tmp_path, monkeypatch, server.base_url, retries)
        answer = _answer("loop/m", tmp_path)
    if retries:
        assert isinstance(answer, StreamDone)
        assert answer.message.content == [TextContent(text="Recovered")]
        assert len(server.requests) == 2
    else:
        assert isinstance(answer, StreamError)
        assert len(server.requests) == 1


def test_an_unknown_model_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(tmp_path, monkeypatch, "http://127.0.0.1:9", 0)
    with pytest.raises(CtxmodesError, match="loop/nope"):
        resolve_model("loop/nope", cwd=tmp_path)
