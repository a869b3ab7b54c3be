"""Pi's ``models.json`` and ``auth.json`` compose the same catalog here as in the real Pi:
the same models with the same limits, prices and compat flags, the same ones available, and
the same key and headers for a request."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PI_PACKAGE, require_node, require_pi_modules

from ctxmodes.providers.auth import AuthResolver, credential_sources
from ctxmodes.providers.catalog import builtin_models
from ctxmodes.providers.credentials import CredentialError
from ctxmodes.providers.models_json import catalog_with_models_json
from ctxmodes.session.codec import dumps

SCRIPT = Path(__file__).parents[2] / "support" / "pi_model_runtime.mjs"
MODELS_JSON = {
    "providers": {
        "anthropic": {
            "baseUrl": "https://proxy.example/anthropic",
            "headers": {"x-team": "$CTXT_TEAM", "x-missing": "$CTXT_UNSET"},
            "modelOverrides": {
                "claude-sonnet-4-5": {
                    "contextWindow": 500000,
                    "cost": {"input": 9},
                    "compat": {"supportsEagerToolInputStreaming": False},
                    "thinkingLevelMap": {"minimal": None},
                },
                "no-such-model": {"contextWindow": 1},
            },
        },
        "openrouter": {
            "compat": {"openRouterRouting": {"only": ["amazon-bedrock"]}},
            "modelOverrides": {
                "anthropic/claude-sonnet-4": {"compat": {"openRouterRouting": {"order": ["a"]}}}
            },
            "models": [{"id": "my/model", "contextWindow": 4096}],
        },
        "groq": {"apiKey": "$CTXT_GROQ_CONFIGURED"},
        "ollama": {
            "baseUrl": "http://127.0.0.1:11434/v1",
            "api": "openai-completions",
            "apiKey": "ollama",
            "compat": {"supportsDeveloperRole": False},
            "models": [
                {"id": "llama3", "reasoning": True, "compat": {"maxTokensField": "max_tokens"}},
                {"id": "qwen", "input": ["text", "image"], "maxTokens": 1000},
            ],
        },
        "vllm": {
            "baseUrl": "http://127.0.0.1:8000/v1",
            "api": "openai-completions",
            "models": [{"id": "served"}],
        },
    }
}
AUTH_JSON = {
    "xai": {"type": "api_key", "key": "${CTXT_XAI}-suffix"},
    "vllm": {"type": "api_key", "key": "vllm-key"},
}
ENV = {"CTXT_TEAM": "red", "CTXT_XAI": "x", "CTXT_GROQ_CONFIGURED": "from-models-json"}
REQUESTS = [
    "anthropic/claude-sonnet-4-5",
    "anthropic/claude-opus-4-5",
    "ollama/llama3",
    "groq/llama-3.3-70b-versatile",
    "xai/grok-4.5",
    "vllm/served",
]
FIELDS = ("name", "api", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens")


def _pi_view(agent_dir: Path) -> dict[str, Any]:
    node = require_node()
    modules = require_pi_modules()
    result = subprocess.run(
        [node, str(SCRIPT), str(modules / PI_PACKAGE.parent), str(agent_dir), json.dumps(REQUESTS)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, **ENV, "PI_OFFLINE": "1"},
    )
    view: dict[str, Any] = json.loads(result.stdout)
    return view


@pytest.mark.pi
def test_the_catalog_credentials_and_requests_agree_with_pi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(MODELS_JSON))
    (agent / "auth.json").write_text(json.dumps(AUTH_JSON))
    for name in os.environ:
        if name.endswith(("_API_KEY", "_TOKEN")) or name.startswith(("AWS_", "GOOGLE_")):
            monkeypatch.delenv(name)
    for name, value in {**ENV, "PI_CODING_AGENT_DIR": str(agent)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "ctxmodes"))
    pi = _pi_view(agent)
    assert pi["error"] is None

    ours = catalog_with_models_json(builtin_models())
    pi_models = {model["ref"]: model for model in pi["models"]}
    assert [m.ref for m in ours if m.provider != "radius"] == list(pi_models)
    for model in ours:
        shown = model.to_pi()
        expected = pi_models[model.ref]
        assert {f: shown.get(f) for f in FIELDS} == {f: expected[f] for f in FIELDS}, model.ref
        assert shown.get("compat") == expected["compat"], model.ref
        assert shown.get("thinkingLevelMap") == expected["thinkingLevelMap"], model.ref
        # The model object Pi shows programs: the same keys in the same order, no configured
        # header among them.
        assert dumps(model.to_pi_model()).decode() == expected["json"], model.ref

    sources = credential_sources(ours)
    assert [ref for ref, source in sources.items() if source] == pi["available"]

    resolver = AuthResolver()
    by_ref = {model.ref: model for model in ours}
    for ref in REQUESTS:
        model = by_ref[ref]
        auth = resolver.resolve(model.provider, model.api_key)
        expected = pi["requests"][ref]
        if "error" in expected:
            with pytest.raises(ValueError, match="Failed to resolve") as raised:
                model.request_headers()
            assert str(raised.value) == expected["error"]
            continue
        assert (auth.api_key if auth else None) == expected["apiKey"], ref
        assert (model.request_headers() or {}) == expected["headers"], ref


def test_a_custom_model_without_an_api_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "models.json").write_text(
        json.dumps({"providers": {"mine": {"baseUrl": "http://x", "models": [{"id": "m"}]}}})
    )
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    with pytest.raises(CredentialError, match=r'provider mine, model m: no "api" specified'):
        catalog_with_models_json(builtin_models())


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"id": "m", "api": "openai-completion"},
            r'model m: unknown "api" "openai-completion"; one of: .*openai-completions',
        ),
        (
            {"id": "m", "contextWindow": "big"},
            r"model m: contextWindow: Input should be a valid integer",
        ),
        ({"id": "m", "maxTokens": 0}, r"model m: invalid maxTokens"),
        ({"id": "m", "input": "text"}, r"model m: input: Input should be a valid list"),
    ],
)
def test_a_mistake_in_a_custom_model_names_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: dict[str, Any], expected: str
) -> None:
    """A typo in a model entry is an error saying which provider, model and field, not a
    validation traceback or a bare ``KeyError`` when the first request is sent."""
    config = {"baseUrl": "http://127.0.0.1:11434/v1", "api": "openai-completions"}
    (tmp_path / "models.json").write_text(
        json.dumps({"providers": {"ollama": {**config, "models": [entry]}}})
    )
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    with pytest.raises(CredentialError, match=f"^models.json: provider ollama, {expected}"):
        catalog_with_models_json(builtin_models())
