"""The models Ctrl+P cycles through: Pi's ``--models`` patterns (its ``enabledModels``
setting), each resolved against the models that have credentials as Pi's
``resolveModelScopeFromModels`` resolves them.

A pattern with ``*``, ``?`` or ``[`` is a glob, matched without regard to case against
``provider/id`` and against the id alone (minimatch's rules: ``*`` stops at ``/``, braces
and ``**`` expand); any other pattern names one model: an exact ``provider/id`` or id, else
the model whose id or name contains it, an undated alias before a dated version. A trailing
``:<level>`` gives the thinking level that model is switched to with. A model found twice is
kept where it was first found; a pattern that finds nothing is a warning.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.resources.globs import glob_matches
from ctxmodes.session.jsvalues import js_locale_sort_key, js_trim
from ctxmodes.thinking_levels import THINKING_LEVELS

__all__ = [
    "ModelScope",
    "ScopedModel",
    "exact_model_match",
    "parse_model_pattern",
    "resolve_model_scope",
]

_DATED = re.compile(r"-\d{8}$")


@dataclass(frozen=True, slots=True)
class ScopedModel:
    model: ModelSpec
    #: The level its pattern's ``:<level>`` asks for; ``None``: the usual choice.
    thinking_level: str | None = None


@dataclass(frozen=True, slots=True)
class ModelScope:
    models: tuple[ScopedModel, ...]
    #: One line for each pattern that found nothing or named no thinking level.
    warnings: tuple[str, ...]


def resolve_model_scope(patterns: Sequence[str], models: Sequence[ModelSpec]) -> ModelScope:
    """The models ``patterns`` name among ``models``, in the patterns' order."""
    found: list[ScopedModel] = []
    warnings: list[str] = []

    def keep(model: ModelSpec, level: str | None) -> None:
        if not any(_same(scoped.model, model) for scoped in found):
            found.append(ScopedModel(model, level))

    for pattern in patterns:
        if any(char in pattern for char in "*?["):
            matched = _glob_matches(pattern, models)
            if matched is None:
                warnings.append(_no_match(pattern))
            for model, level in matched or ():
                keep(model, level)
            continue
        named, level, warning = parse_model_pattern(pattern, models)
        if warning is not None:
            warnings.append(warning)
        if named is None:
            warnings.append(_no_match(pattern))
        else:
            keep(named, level)
    return ModelScope(tuple(found), tuple(warnings))


def _no_match(pattern: str) -> str:
    return f'No models match pattern "{pattern}"'


def _same(one: ModelSpec, other: ModelSpec) -> bool:
    return one.provider == other.provider and one.id == other.id


def _glob_matches(
    pattern: str, models: Sequence[ModelSpec]
) -> list[tuple[ModelSpec, str | None]] | None:
    """The models a glob pattern names, each with its ``:<level>``; ``None`` for none."""
    body, colon, suffix = pattern.rpartition(":")
    level: str | None = suffix if colon and suffix in THINKING_LEVELS else None
    if level is None:
        body = pattern
    exact = exact_model_match(body, models)
    if exact is not None:
        return [(exact, level)]
    matched = [
        (model, level)
        for model in models
        if glob_matches(model.ref, body, ignore_case=True)
        or glob_matches(model.id, body, ignore_case=True)
    ]
    return matched or None


def parse_model_pattern(
    pattern: str, models: Sequence[ModelSpec], *, strict: bool = False
) -> tuple[ModelSpec | None, str | None, str | None]:
    """The model a plain pattern names, its ``:<level>`` and a warning (Pi's
    ``parseModelPattern``): a pattern that names a model as it stands is that model, even
    with colons in its id; otherwise the last ``:`` part is a level, or a warning when it is
    no level but the rest names a model (``strict``, as for ``--model``: no model then)."""
    model = _match(pattern, models)
    if model is not None:
        return model, None, None
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon or (strict and suffix not in THINKING_LEVELS):
        return None, None, None
    # The outermost level wins: the one the inner pattern named is dropped.
    model, _, warning = parse_model_pattern(prefix, models, strict=strict)
    if model is None:
        return None, None, None
    if suffix in THINKING_LEVELS:
        return model, None if warning else suffix, warning
    return (
        model,
        None,
        f'Invalid thinking level "{suffix}" in pattern "{pattern}". Using default instead.',
    )


def _match(pattern: str, models: Sequence[ModelSpec]) -> ModelSpec | None:
    """An exact reference, else the model whose id or name holds ``pattern``: the highest
    undated alias, else the latest dated version."""
    exact = exact_model_match(pattern, models)
    if exact is not None:
        return exact
    needle = pattern.lower()
    candidates = [m for m in models if needle in m.id.lower() or needle in m.name.lower()]
    if not candidates:
        return None
    aliases = [m for m in candidates if _is_alias(m.id)]
    ranked = aliases or candidates
    return sorted(ranked, key=lambda m: js_locale_sort_key(m.id), reverse=True)[0]


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not _DATED.search(model_id)


def exact_model_match(reference: str, models: Sequence[ModelSpec]) -> ModelSpec | None:
    """The one model ``reference`` names exactly, ignoring case: ``provider/id``, else a
    provider and an id around the first ``/``, else a bare id; ``None`` when none or several
    do (Pi's ``findExactModelReferenceMatch``, which ``/model TEXT`` uses too)."""
    reference = js_trim(reference)
    if not reference:
        return None
    wanted = reference.lower()
    canonical = [m for m in models if m.ref.lower() == wanted]
    if canonical:
        return canonical[0] if len(canonical) == 1 else None
    provider, slash, model_id = reference.partition("/")
    provider, model_id = js_trim(provider).lower(), js_trim(model_id).lower()
    if slash and provider and model_id:
        split = [m for m in models if m.provider.lower() == provider and m.id.lower() == model_id]
        if split:
            return split[0] if len(split) == 1 else None
    by_id = [m for m in models if m.id.lower() == wanted]
    return by_id[0] if len(by_id) == 1 else None
