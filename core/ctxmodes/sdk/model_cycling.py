"""Pi's Ctrl+P and Shift+Ctrl+P, the next and previous model, and its Shift+Tab, the next
thinking level, on an :class:`~ctxmodes.sdk.Agent`.

The models cycled through are the scope's (``--models``, Pi's ``enabledModels``) in its
order, else every registered model in the catalog's order; either way only those with
credentials, as Pi cycles through its available models. A model not among them (a scripted
one, say) counts as the first. Each switch goes through :meth:`Agent.switch_model`, so it is
recorded as ``/model`` records it, at the scope's ``:<level>`` when it has one; each level
change through :meth:`Agent.set_thinking_level`, recorded as ``/thinking`` records it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ctxmodes.model_scope import ScopedModel
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.sdk.agent import Agent

Direction = Literal["forward", "backward"]


@dataclass(frozen=True, slots=True)
class ModelSwitched:
    model: ModelSpec
    #: The level the model runs at now.
    thinking_level: str


class ModelCycler:
    """The next or previous model, the next thinking level, of ``agent``.

    :param scope: the models to cycle through; empty: every model with credentials.
    """

    def __init__(self, agent: Agent, scope: Sequence[ScopedModel] = ()) -> None:
        self._agent = agent
        self.scope = tuple(scope)

    def cycle_model(self, direction: Direction = "forward") -> ModelSwitched | None:
        """Switch to the next (or previous) model, wrapping; ``None`` when there are fewer
        than two to cycle through, and nothing changes.

        :raises CtxmodesError: the switch failed (a credential file is corrupt, say).
        """
        from ctxmodes.model_scope import ScopedModel
        from ctxmodes.providers.auth import models_with_credentials

        agent = self._agent
        usable = models_with_credentials(agent.models())
        if self.scope:
            refs = {model.ref for model in usable}
            cycle = [scoped for scoped in self.scope if scoped.model.ref in refs]
        else:
            cycle = [ScopedModel(model) for model in usable]
        if len(cycle) <= 1:
            return None
        current = agent.session.model
        here = next(
            (
                index
                for index, scoped in enumerate(cycle)
                if current is not None
                and (scoped.model.provider, scoped.model.id) == (current.provider, current.id)
            ),
            0,
        )
        step = 1 if direction == "forward" else -1
        chosen = cycle[(here + step) % len(cycle)]
        agent.switch_model(chosen.model.ref, chosen.thinking_level)
        return ModelSwitched(chosen.model, agent.thinking_level)

    def cycle_thinking_level(self) -> str | None:
        """Move to the model's next thinking level, wrapping to its first; ``None`` when
        the model does not think (or there is none), and nothing changes."""
        agent = self._agent
        model = agent.session.model
        if model is None or not model.capabilities.reasoning:
            return None
        levels = model.capabilities.supported_thinking_levels()
        current = agent.thinking_level
        here = levels.index(current) if current in levels else -1
        agent.set_thinking_level(levels[(here + 1) % len(levels)])
        return agent.thinking_level


def model_cycler(agent: Agent, patterns: Sequence[str]) -> tuple[ModelCycler, list[str]]:
    """The cycler of the scope ``patterns`` name (``--models``, Pi's ``enabledModels``)
    among the models with credentials, as Pi resolves it at start-up, and a warning line for
    each pattern that found nothing (Pi prints them on standard error)."""
    from ctxmodes.errors import CtxmodesError
    from ctxmodes.model_scope import resolve_model_scope
    from ctxmodes.providers.auth import models_with_credentials

    if not patterns:
        return ModelCycler(agent), []
    try:
        available = models_with_credentials(agent.models())
    except CtxmodesError as error:  # a corrupt credential file: said, and no scope
        return ModelCycler(agent), [str(error)]
    scope = resolve_model_scope(patterns, available)
    return ModelCycler(agent, scope.models), [f"Warning: {line}" for line in scope.warnings]
