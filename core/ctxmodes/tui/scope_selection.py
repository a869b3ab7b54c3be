"""The list ``/scoped-models`` edits: which models Ctrl+P cycles through and in which order,
changed as Pi's scoped-models selector changes it (``toggle``, ``enableAll``, ``clearAll``,
``move``), so that every key leaves the same list Pi's would.

``enabled`` is ``None`` while every model is in the scope (Pi's ``null``), else the enabled
models' ``provider/id`` in cycling order; it may name models that have no credentials (a
pattern of the configured scope that found nothing), which are shown as unavailable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxmodes.fuzzy_filter import fuzzy_filter

if TYPE_CHECKING:
    from ctxmodes.model_scope import ScopedModel
    from ctxmodes.providers.catalog import ModelSpec


@dataclass
class ScopeSelection:
    """The models with credentials (by ``provider/id``, in the catalog's order) and the
    enabled list; ``changed`` once a key changed it (Pi's ``(unsaved)``)."""

    models: Mapping[str, ModelSpec]
    enabled: list[str] | None
    changed: bool = field(default=False)

    @property
    def all_ids(self) -> list[str]:
        return list(self.models)

    def is_enabled(self, model_id: str) -> bool:
        return self.enabled is None or model_id in self.enabled

    def ordered_ids(self) -> list[str]:
        """The rows' order: the enabled models in cycling order, then the others."""
        if self.enabled is None:
            return self.all_ids
        enabled = set(self.enabled)
        return [*self.enabled, *(model_id for model_id in self.models if model_id not in enabled)]

    def search(self, query: str) -> list[str]:
        """The rows a typed ``query`` keeps, best match first (Pi's fuzzy search over a
        model's id, provider and name)."""
        if not query:
            return self.ordered_ids()
        return fuzzy_filter(self.ordered_ids(), query, self._search_text)

    def _search_text(self, model_id: str) -> str:
        model = self.models.get(model_id)
        if model is None:
            return model_id
        name = f" {model.name}" if model.name else ""
        return f"{model.id} {model.provider} {model.ref} {model.provider} {model.id}{name}"

    def toggle(self, model_id: str) -> None:
        if self.enabled is None:
            self._set([other for other in self.models if other != model_id])
        elif model_id in self.enabled:
            self._set([other for other in self.enabled if other != model_id])
        else:
            self._set(self._all_or([*self.enabled, model_id]))

    def enable_all(self, targets: Iterable[str] | None = None) -> None:
        """Enable ``targets`` (every model when ``None``), after those enabled already."""
        if self.enabled is None:
            self._set(None)
            return
        result = list(self.enabled)
        for model_id in self.all_ids if targets is None else targets:
            if model_id not in result:
                result.append(model_id)
        self._set(self._all_or(result))

    def clear_all(self, targets: Iterable[str] | None = None) -> None:
        """Disable ``targets`` (every enabled model when ``None``)."""
        if self.enabled is None:
            if targets is None:
                self._set([])
            else:
                cleared = set(targets)
                self._set([model_id for model_id in self.models if model_id not in cleared])
            return
        cleared = set(self.enabled if targets is None else targets)
        self._set([model_id for model_id in self.enabled if model_id not in cleared])

    def toggle_provider(self, model_id: str) -> bool:
        """Disable every model of ``model_id``'s provider when all are enabled, else enable
        them all; ``False`` (nothing done) for a model without credentials."""
        model = self.models.get(model_id)
        if model is None:
            return False
        provider_ids = [
            other for other, spec in self.models.items() if spec.provider == model.provider
        ]
        if all(self.is_enabled(other) for other in provider_ids):
            self.clear_all(provider_ids)
        else:
            self.enable_all(provider_ids)
        return True

    def move(self, model_id: str, delta: int) -> bool:
        """Move an enabled model ``delta`` places in the cycling order; ``False`` when it
        cannot move (every model enabled, the model not enabled, or at an end)."""
        if self.enabled is None or model_id not in self.enabled:
            return False
        at = self.enabled.index(model_id)
        to = at + delta
        if not 0 <= to < len(self.enabled):
            return False
        moved = list(self.enabled)
        moved[at], moved[to] = moved[to], moved[at]
        self._set(moved)
        return True

    def count_text(self) -> str:
        """Pi's count: ``all enabled``, or ``2/5 enabled``, ``· 1 unavailable`` added."""
        if self.enabled is None:
            return "all enabled"
        usable = sum(1 for model_id in self.enabled if model_id in self.models)
        missing = len(self.enabled) - usable
        unavailable = f" · {missing} unavailable" if missing else ""
        return f"{usable}/{len(self.models)} enabled{unavailable}"

    def _all_or(self, result: list[str]) -> list[str] | None:
        """``None`` for a list that holds every model (Pi's ``normalizeEnabled``)."""
        every = len(result) == len(self.models) and all(item in self.models for item in result)
        return None if every else result

    def _set(self, enabled: list[str] | None) -> None:
        self.enabled = enabled
        self.changed = True


def starting_ids(
    scope: Sequence[ScopedModel], patterns: Sequence[str], available: Sequence[ModelSpec]
) -> list[str] | None:
    """The enabled list the selector opens with, as Pi computes it: the running scope's
    models; without one, the configured patterns' models, then each pattern that found
    nothing (shown as unavailable); ``None`` (all) without patterns."""
    from ctxmodes.model_scope import resolve_model_scope

    if scope:
        return [scoped.model.ref for scoped in scope]
    if not patterns:
        return None
    ids = [scoped.model.ref for scoped in resolve_model_scope(patterns, available).models]
    for pattern in patterns:
        if not resolve_model_scope([pattern], available).models and pattern not in ids:
            ids.append(pattern)
    return ids


def session_scope(
    enabled: Sequence[str] | None, available: Sequence[ModelSpec]
) -> tuple[ScopedModel, ...]:
    """The scope Ctrl+P cycles through after a change, as Pi sets it: the enabled models
    with credentials, in order; none (every model) when no enabled model has credentials
    or every model with credentials is enabled."""
    from ctxmodes.model_scope import resolve_model_scope

    if enabled is None:
        return ()
    refs = {model.ref for model in available}
    if not refs & set(enabled) or refs <= set(enabled):
        return ()
    return resolve_model_scope(list(enabled), available).models
