from __future__ import annotations

import json

import pytest

from ctxmodes.abort import AbortController
from ctxmodes.providers import ProviderRegistry, ProviderSpecError, default_registry, resolve
from ctxmodes.providers.base import ModelInfo, ModelRequest, Provider, StreamDone, StreamEvent
from ctxmodes.providers.script import ScriptError
from ctxmodes.providers.scripted import ScriptedProvider


def test_resolve_scripted(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"responses": [{"text": "hi"}]}))
    provider = resolve(f"scripted:{path}")
    assert isinstance(provider, ScriptedProvider)
    assert provider.transport == "scripted"


def test_resolve_passes_factory_errors_through(tmp_path):
    with pytest.raises(ScriptError):
        resolve(f"scripted:{tmp_path / 'missing.json'}")


@pytest.mark.parametrize("spec", ["scripted", ":file", ""])
def test_malformed_specs(spec):
    with pytest.raises(ProviderSpecError, match="expected <provider>/<model-id> or <scheme>"):
        resolve(spec)


def test_unknown_scheme_lists_the_known_ones():
    with pytest.raises(ProviderSpecError, match=r"\(schemes: scripted; `ctxmodes models`"):
        resolve("codex:gpt")


def test_pi_model_specs_resolve_to_the_model_and_its_capabilities(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    chatgpt = {"type": "oauth", "access": "a", "refresh": "r", "expires": 2**50}
    (tmp_path / "auth.json").write_text(json.dumps({"openai-codex": chatgpt}))
    responses = resolve("openai/gpt-5.1")
    codex = resolve("openai-codex/gpt-5.5")
    assert (responses.info.api, responses.info.context_window) == ("openai-responses", 400000)
    assert responses.info.capabilities.namespaced_tools
    assert not responses.info.capabilities.encrypted_tool_arguments
    assert codex.info.api == "openai-codex-responses"
    assert not codex.info.capabilities.namespaced_tools
    assert codex.info.capabilities.encrypted_tool_arguments


def test_a_model_spec_ending_in_a_thinking_level_names_the_model_and_the_level(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    registry = default_registry()
    assert registry.thinking_suffix("openai/gpt-5.1:high") == ("openai/gpt-5.1", "high")
    assert registry.resolve("openai/gpt-5.1:high").info.id == "gpt-5.1"
    # A scheme's argument is whole: a file name may end in a level's name.
    assert registry.thinking_suffix("scripted:run.json:high") == ("scripted:run.json:high", None)
    with pytest.raises(ProviderSpecError, match=r"unknown model 'openai/gpt-5\.1:loud'"):
        registry.resolve("openai/gpt-5.1:loud")


def test_an_unknown_model_lists_close_matches_on_one_line():
    with pytest.raises(ProviderSpecError) as caught:
        resolve("openai/gpt-5.11")
    message = str(caught.value)
    assert "\n" not in message
    assert "did you mean openai/gpt-5.1" in message


def test_an_unknown_provider_says_how_to_add_one_and_names_the_known_ones():
    with pytest.raises(ProviderSpecError) as caught:
        resolve("ollama/llama3")
    message = str(caught.value)
    assert message.startswith(
        "unknown provider 'ollama': a server of your own is added as a [providers.ollama] "
        "table of config.toml or in Pi's models.json (known: amazon-bedrock, "
    )
    assert ", openai, " in message
    assert "\n" not in message


class _Echo(Provider):
    def __init__(self, argument: str) -> None:
        self.argument = argument

    @property
    def transport(self) -> str:
        return "echo"

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(provider="echo", api="echo", id=self.argument)

    def stream(self, request: ModelRequest, signal):  # pragma: no cover - not called
        events: list[StreamEvent] = []
        return iter(events)


def test_new_schemes_can_be_registered():
    registry = default_registry()
    registry.register("echo", _Echo)
    provider = registry.resolve("echo:model-7")
    assert isinstance(provider, _Echo)
    assert provider.argument == "model-7"
    assert registry.schemes == ["echo", "scripted"]
    # Registries are independent: the default one never learned "echo".
    with pytest.raises(ProviderSpecError):
        resolve("echo:x")


def test_duplicate_registration_needs_replace():
    registry = ProviderRegistry()
    registry.register("echo", _Echo)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("echo", _Echo)
    registry.register("echo", _Echo, replace=True)
    with pytest.raises(ValueError, match="invalid provider scheme"):
        registry.register("a:b", _Echo)


def test_complete_fails_clearly_when_a_stream_has_no_final_message():
    with pytest.raises(Exception, match="echo stream ended without a final message"):
        _Echo("m").complete(ModelRequest(system_prompt="", messages=[]), AbortController().signal)
    assert StreamDone  # the terminal event type providers must end with


def test_a_misspelled_provider_gets_the_corrected_model_name():
    with pytest.raises(ProviderSpecError) as caught:
        resolve("antropic/claude-sonnet-4-5")
    assert str(caught.value) == (
        "unknown provider 'antropic'; did you mean anthropic/claude-sonnet-4-5?"
    )


def test_a_bare_model_id_is_answered_with_the_providers_that_serve_it():
    with pytest.raises(ProviderSpecError) as caught:
        resolve("claude-sonnet-4-5")
    message = str(caught.value)
    assert message.startswith(
        "invalid model 'claude-sonnet-4-5': name its provider too; did you mean "
    )
    assert "anthropic/claude-sonnet-4-5" in message.split("did you mean ")[1]


def test_a_spec_resolves_exactly_where_a_typed_one_is_read_as_pi_s_model_option():
    """A session's recorded model and a program's switch name their model exactly: one gone
    from the catalog is not replaced by another its name is part of."""
    registry = default_registry()
    with pytest.raises(ProviderSpecError, match="anthropic/sonnet"):
        registry.resolve("anthropic/sonnet")
    spec, level = registry.read_model_option("anthropic/sonnet:high")
    assert spec.startswith("anthropic/claude-sonnet")
    assert level == "high"
    assert registry.read_model_option("anthropic/claude-sonnet-4-5:low") == (
        "anthropic/claude-sonnet-4-5",
        "low",
    )
    assert registry.read_model_option("scripted:a:b.json") == ("scripted:a:b.json", None)


@pytest.mark.parametrize("spec", ["scripted", ":file", "codex:gpt"])
def test_a_typed_spec_like_a_scheme_s_says_the_form_and_the_schemes(spec):
    with pytest.raises(ProviderSpecError) as caught:
        default_registry().read_model_option(spec)
    assert str(caught.value) == (
        f'Model "{spec}" not found. Use --list-models to see available models. '
        "A scheme's model is <scheme>:ARGUMENT (schemes: scripted)."
    )


def test_a_typed_spec_that_names_nothing_or_several_models_is_refused():
    registry = default_registry()
    with pytest.raises(ProviderSpecError, match=r'^Model "" not found'):
        registry.read_model_option("")
    with pytest.raises(ProviderSpecError) as caught:
        registry.read_model_option("claude-sonnet-4-5")
    message = str(caught.value)
    assert message.startswith('Model "claude-sonnet-4-5" is ambiguous across providers: ')
    assert "anthropic/claude-sonnet-4-5" in message
    with pytest.raises(ProviderSpecError, match="did you mean anthropic/claude-sonnet-4-5"):
        registry.read_model_option("antropic/claude-sonnet-4-5")
