"""The model ``--model`` names, with ``--provider`` or without, as Pi's command line finds it
(its ``resolveCliModel``), so that what works with ``pi`` works with ``ctxmodes``.

``--model`` takes ``provider/id``, a bare id, or a pattern: part of an id or a name
(``sonnet``), an undated alias before a dated version, each with an optional
``:<level>``. Every known model counts, with credentials or not (``--api-key`` may give
them). A ``provider/`` prefix that names a known provider narrows the search to it; one
that does not is taken as part of the id (OpenRouter's ``openai/gpt-4o``). A bare id that
several providers serve is the one whose provider has credentials, if only one has; else
it is refused, naming them.

Where Pi makes up a model for an id its catalog does not know under a known provider,
ctxmodes refuses it (its catalog, Pi's ``models.json`` and ``config.toml`` add models).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxmodes.errors import CtxmodesError
from ctxmodes.model_scope import parse_model_pattern
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.session.jsvalues import js_locale_sort_key


class ModelNotFoundError(CtxmodesError):
    """The pattern names no model (of the provider, when one is given)."""


@dataclass(frozen=True, slots=True)
class CliModel:
    """The model found, and the thinking level the pattern gave."""

    model: ModelSpec
    thinking_level: str | None = None

    @property
    def spec(self) -> str:
        """``provider/id``, with ``:<level>`` when the pattern gave one."""
        level = f":{self.thinking_level}" if self.thinking_level else ""
        return f"{self.model.ref}{level}"


def resolve_cli_model(
    pattern: str,
    models: Sequence[ModelSpec],
    has_credentials: Callable[[str], bool],
    provider: str | None = None,
) -> CliModel:
    """The model ``--model PATTERN`` (and ``--provider PROVIDER``) names among ``models``;
    ``has_credentials(provider)`` says whether a provider can be used as it is.

    :raises ModelNotFoundError: the pattern names no model (in Pi's words).
    :raises CtxmodesError: an unknown provider, or an id several providers serve.
    """
    if not pattern.strip():
        # Pi takes an empty --model as none given; a spec that says nothing is refused.
        raise _not_found(pattern)
    providers = {model.provider.lower(): model.provider for model in models}
    chosen = providers.get(provider.lower()) if provider else None
    if provider and chosen is None:
        raise CtxmodesError(
            f'Unknown provider "{provider}". Use --list-models to see available providers/models.'
        )
    searched = pattern
    inferred = False
    if chosen is None:
        prefix, slash, rest = pattern.partition("/")
        if slash and prefix.lower() in providers:
            chosen, searched, inferred = providers[prefix.lower()], rest, True
    if chosen is None:
        exact = _exact(pattern, models)
        if len(exact) == 1:
            return CliModel(exact[0])
        if exact:
            return CliModel(_the_usable_one(pattern, exact, has_credentials))
    if provider and chosen is not None and pattern.lower().startswith(f"{chosen.lower()}/"):
        searched = pattern[len(chosen) + 1 :]
    candidates = [m for m in models if m.provider == chosen] if chosen else list(models)
    # Strict, as Pi reads --model: a pattern that names a model says nothing to warn of.
    found, level, _ = parse_model_pattern(searched, candidates, strict=True)
    if found is not None:
        if inferred and not has_credentials(found.provider):
            # An id that begins with a provider's name: one such model that can be used
            # goes before the provider's that cannot.
            raw = [m for m in models if m.id.lower() == pattern.lower() and m.ref != found.ref]
            usable = [m for m in raw if has_credentials(m.provider)]
            if raw and len(usable) == 1:
                return CliModel(usable[0])
        return CliModel(found, level)
    if inferred:
        # The whole of it may be an id after all (OpenRouter's ``openai/gpt-4o:extended``).
        exact = _exact(pattern, models)
        if exact:
            return CliModel(exact[0])
        found, level, _ = parse_model_pattern(pattern, models, strict=True)
        if found is not None:
            return CliModel(found, level)
    raise _not_found(f"{chosen}/{searched}" if chosen else pattern)


def _not_found(shown: str) -> ModelNotFoundError:
    return ModelNotFoundError(
        f'Model "{shown}" not found. Use --list-models to see available models.'
    )


def _exact(pattern: str, models: Sequence[ModelSpec]) -> list[ModelSpec]:
    wanted = pattern.lower()
    return [m for m in models if wanted in (m.id.lower(), m.ref.lower())]


def _the_usable_one(
    pattern: str, matches: Sequence[ModelSpec], has_credentials: Callable[[str], bool]
) -> ModelSpec:
    usable = [m for m in matches if has_credentials(m.provider)]
    if len(usable) == 1:
        return usable[0]
    named = ", ".join(sorted((m.ref for m in matches), key=js_locale_sort_key))
    why = (
        "No matching provider is authenticated."
        if not usable
        else "More than one matching provider is authenticated."
    )
    raise CtxmodesError(
        f'Model "{pattern}" is ambiguous across providers: {named}. {why} '
        "Use --provider or provider/model."
    )
