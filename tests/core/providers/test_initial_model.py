"""The model a session starts on when nothing names one: Pi's preference among the models
with credentials (``findInitialModel``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxmodes.providers.catalog import ModelSpec, builtin_models, default_models
from ctxmodes.providers.initial_model import initial_model


@pytest.fixture(autouse=True)
def no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))


def test_without_credentials_there_is_no_model_to_start_on() -> None:
    assert initial_model(builtin_models()) is None


def test_a_providers_key_starts_on_its_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "g")
    picked = initial_model(builtin_models())
    assert picked is not None
    assert picked.ref == f"groq/{default_models()['groq']}"


def test_of_several_providers_pis_order_of_preference_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Keys for Groq and Anthropic: Anthropic comes first in Pi's table, whatever the order
    of the catalog or of the environment."""
    monkeypatch.setenv("GROQ_API_KEY", "g")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a")
    order = list(default_models())
    assert order.index("anthropic") < order.index("groq")
    picked = initial_model(reversed(builtin_models()))
    assert picked is not None
    assert picked.ref == f"anthropic/{default_models()['anthropic']}"


def test_a_provider_without_a_default_model_here_gives_its_first_model() -> None:
    """A configured endpoint with a key (no entry in Pi's table): the first model with
    credentials, in the order given."""
    mine = [
        ModelSpec.model_validate(
            {
                "id": name,
                "provider": "mine",
                "api": "openai-completions",
                "baseUrl": "http://127.0.0.1:9/v1",
                "apiKey": "k",
            }
        )
        for name in ("first", "second")
    ]
    picked = initial_model([*builtin_models(), *mine])
    assert picked is not None
    assert picked.ref == "mine/first"


def test_a_default_model_missing_from_the_models_falls_back_to_the_first_available(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "g")
    default = f"groq/{default_models()['groq']}"
    groq = [model for model in builtin_models() if model.provider == "groq"]
    others = [model for model in groq if model.ref != default]
    picked = initial_model(others)
    assert picked is not None
    assert picked.ref == others[0].ref
