"""The built-in catalog is exactly the pinned Pi's: every provider, model, limit, price and
compat flag, and the variables Pi reads each provider's key from."""

from __future__ import annotations

import json
import subprocess
from importlib import resources

import pytest
from support.pi_oracle import REPO, pi_node_modules, require_node

from ctxmodes.providers.auth import env_keys
from ctxmodes.providers.catalog import (
    ModelCatalog,
    ModelSpec,
    builtin_models,
    builtin_providers,
    pi_version,
)
from ctxmodes.session.codec import dumps


@pytest.mark.pi
def test_the_shipped_catalog_is_what_the_export_script_prints_for_the_pinned_pi() -> None:
    node = require_node()
    modules = pi_node_modules()
    if modules is None:
        import pytest

        pytest.skip("Pi 0.85 not installed: run `make pi`")
    exported = subprocess.run(
        [node, str(REPO / "tools" / "export_pi_models.mjs"), str(modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    shipped = resources.files("ctxmodes.providers").joinpath("data/pi_models.json")
    assert shipped.read_text("utf-8") == exported


def test_every_provider_of_pi_is_in_the_catalog_with_its_models() -> None:
    catalog = ModelCatalog(builtin_models())
    providers = builtin_providers()
    assert pi_version() == "0.85.0"
    assert set(catalog.providers()) == {p for p in providers if p != "radius"}
    for wanted in (
        "anthropic",
        "google",
        "openrouter",
        "groq",
        "cerebras",
        "xai",
        "deepseek",
        "mistral",
        "together",
        "fireworks",
        "github-copilot",
        "huggingface",
        "zai",
        "moonshotai",
        "minimax",
        "amazon-bedrock",
        "google-vertex",
    ):
        assert wanted in providers
    sonnet = catalog.get("anthropic/claude-sonnet-4-5")
    assert (sonnet.api, sonnet.base_url) == ("anthropic-messages", "https://api.anthropic.com")
    assert sonnet.context_window > 0
    assert sonnet.max_tokens > 0
    assert sonnet.cost.output > 0
    assert catalog.get("groq/llama-3.3-70b-versatile").api == "openai-completions"


def test_key_variables_are_pis_in_pis_order() -> None:
    assert env_keys("anthropic") == [
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_API_KEY",
    ]
    assert env_keys("google") == ["GEMINI_API_KEY"]
    assert env_keys("huggingface") == ["HF_TOKEN"]
    assert env_keys("github-copilot") == ["COPILOT_GITHUB_TOKEN"]
    assert env_keys("amazon-bedrock") == []
    anthropic = builtin_providers()["anthropic"]
    assert anthropic.oauth is not None
    assert anthropic.oauth.subscription


def test_every_model_is_written_as_the_pinned_pi_writes_it() -> None:
    # The shipped file holds Pi's model objects as JSON.stringify writes them: the same
    # bytes, keys in Pi's order (which differs between models), the catalog's headers kept.
    shipped = json.loads(
        resources.files("ctxmodes.providers").joinpath("data/pi_models.json").read_text("utf-8")
    )
    pi_models = [model for provider in shipped["providers"] for model in provider["models"]]
    ours = builtin_models()
    assert [model.ref for model in ours] == [f"{m['provider']}/{m['id']}" for m in pi_models]
    orders = set()
    for model, expected in zip(ours, pi_models, strict=True):
        assert dumps(model.to_pi()) == dumps(expected), model.ref
        assert dumps(model.to_pi_model()) == dumps(expected), model.ref
        orders.add(tuple(expected))
    assert len(orders) > 1


def test_a_configured_header_is_never_part_of_the_model_pi_shows() -> None:
    copilot = next(model for model in builtin_models() if model.headers)
    secret = {"Authorization": "Bearer sk-secret", **(copilot.headers or {})}
    configured = copilot.model_copy(update={"headers": secret})
    shown = configured.to_pi_model()
    assert shown["headers"] == copilot.headers
    assert list(shown) == list(copilot.to_pi())
    custom = ModelSpec.model_validate(
        {"id": "m", "api": "openai-completions", "provider": "mine", "baseUrl": "http://x"}
        | {"headers": {"x-api-key": "sk-secret"}, "apiKey": "sk-other"}
    )
    assert "sk-" not in dumps(custom.to_pi_model()).decode()
