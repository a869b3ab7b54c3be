"""``--model`` and ``--provider`` read as Pi's command line reads them, judged against Pi's
own ``resolveCliModel`` over the whole catalog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.cli_model import resolve_cli_model
from ctxmodes.providers.registry import default_registry

JUDGE = Path(__file__).parents[2] / "support" / "pi_cli_model.mjs"
#: The providers that have credentials in these tests.
AUTHENTICATED = ("anthropic", "openrouter")
ASKS: list[tuple[str | None, str]] = [
    (None, "anthropic/claude-sonnet-4-5"),
    (None, "ANTHROPIC/Claude-Sonnet-4-5:high"),
    (None, "sonnet"),
    (None, "sonnet:high"),
    (None, "sonnet:bogus"),
    (None, "opus:xhigh"),
    (None, "claude-sonnet-4-5"),  # several providers serve it: the authenticated one
    (None, "gpt-4o"),  # several providers, none authenticated or several
    (None, "openai/gpt-4o"),
    (None, "openai/gpt-4o:extended"),
    (None, "gemini"),
    (None, "haiku"),
    (None, "no-such-model"),
    (None, "nosuch/model"),
    ("anthropic", "sonnet"),
    ("Anthropic", "anthropic/opus:low"),
    ("openai", "gpt-5"),
    ("openrouter", "openai/gpt-4o"),
    ("nosuch", "sonnet"),
]


def _ours(provider: str | None, pattern: str) -> dict[str, object]:
    models = list(default_registry().models)
    try:
        found = resolve_cli_model(pattern, models, AUTHENTICATED.__contains__, provider)
    except CtxmodesError as error:
        return {"ref": None, "thinkingLevel": None, "error": str(error)}
    return {"ref": found.model.ref, "thinkingLevel": found.thinking_level, "error": None}


@pytest.mark.pi
def test_as_pi_finds_them_in_the_whole_catalog() -> None:
    models = [
        {"provider": m.provider, "id": m.id, "name": m.name} for m in default_registry().models
    ]
    asks = [{"provider": provider, "model": model} for provider, model in ASKS]
    payload = {"models": models, "authenticated": list(AUTHENTICATED), "asks": asks}
    judged = run_pi_script(JUDGE, stdin=json.dumps(payload))
    for (provider, pattern), pi in zip(ASKS, judged, strict=True):
        ours = _ours(provider, pattern)
        if pi["warning"] and "Using custom model id" in pi["warning"]:
            # Pi makes a model up for an id its catalog does not know: ctxmodes refuses.
            assert ours["ref"] is None, pattern
            assert "not found" in str(ours["error"]), pattern
            continue
        assert (ours["ref"], ours["thinkingLevel"], ours["error"]) == (
            pi["ref"],
            pi["thinkingLevel"],
            pi["error"],
        ), (provider, pattern)


def test_a_pattern_names_the_highest_alias_with_its_level() -> None:
    found = _ours("anthropic", "sonnet:high")
    assert str(found["ref"]).startswith("anthropic/claude-sonnet")
    assert found["thinkingLevel"] == "high"
    refused = _ours(None, "gpt-4o")
    assert "is ambiguous across providers" in str(refused["error"])
