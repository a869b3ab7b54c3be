"""Pi's ``Model`` objects in RPC responses: the session's model and the models with
credentials, written as Pi writes its own (its keys, their order, no key or configured
header in them)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Final

from ctxmodes.providers.auth import models_with_credentials
from ctxmodes.providers.http_model import HttpModelProvider
from ctxmodes.rpc.protocol import JsonObject

if TYPE_CHECKING:
    from ctxmodes.providers.base import ModelInfo
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.sdk.agent import Agent


def available_models(agent: Agent) -> list[ModelSpec]:
    """The models Pi counts as available: those whose provider has credentials, in the
    catalog's order.

    :raises CtxmodesError: a credential file is corrupt.
    """
    return models_with_credentials(agent.models())


#: What Pi's agent reports as its model while it has none (pi-agent-core's placeholder).
UNKNOWN_MODEL: Final[JsonObject] = {
    "id": "unknown",
    "name": "unknown",
    "api": "unknown",
    "provider": "unknown",
    "baseUrl": "",
    "reasoning": False,
    "input": [],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 0,
    "maxTokens": 0,
}


def session_model(agent: Agent) -> JsonObject:
    """The ``Model`` object of the model the session runs on (Pi's placeholder while it
    has none)."""
    provider = agent.session.provider
    if provider is None:
        return copy.deepcopy(UNKNOWN_MODEL)
    if isinstance(provider, HttpModelProvider):
        return provider.model.to_pi_model()
    info = provider.info
    registered = next(
        (m for m in agent.models() if (m.provider, m.id) == (info.provider, info.id)), None
    )
    return registered.to_pi_model() if registered is not None else _described(info)


def _described(info: ModelInfo) -> JsonObject:
    """A model outside the catalog (``scripted:FILE``, a plugin's own provider), told by
    what ctxmodes knows of it: no endpoint or prices, which it does not have."""
    capabilities = info.capabilities
    shown: JsonObject = {
        "id": info.id,
        "name": info.id,
        "api": info.api,
        "provider": info.provider,
        "reasoning": capabilities.reasoning,
        "input": ["text", "image"] if capabilities.images else ["text"],
    }
    if info.context_window is not None:
        shown["contextWindow"] = info.context_window
    if info.max_tokens is not None:
        shown["maxTokens"] = info.max_tokens
    return shown
