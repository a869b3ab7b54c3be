"""Pi's model and thinking commands: ``set_model``, ``cycle_model``,
``get_available_models``, ``set_thinking_level``, ``cycle_thinking_level`` and
``get_available_thinking_levels``.

The models are those with credentials, in the catalog's order; ``cycle_model`` goes through
the scope (``--models``) when there is one, as the terminal session's Ctrl+P does. A switch
is recorded as ``/model`` and ``/thinking`` record it, and a level that changes is said in a
``thinking_level_changed`` event before the response, as in Pi.

During a run a new model or level is taken as Pi takes it: the run's next request uses it.
Pi writes its entries at once; ctxmodes just before that request (or when the run ends), as
the run holds the session file. A level that is none of Pi's is refused, where Pi clamps any
text to a level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ctxmodes.rpc.model_objects import available_models
from ctxmodes.rpc.protocol import ABSENT, RpcCommand, RpcCommandError, RpcContext, text_field
from ctxmodes.thinking_levels import THINKING_LEVELS


def set_model(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Switch to the model with credentials ``provider``/``modelId`` names; answers its
    ``Model`` object."""
    provider, model_id = text_field(command, "provider"), text_field(command, "modelId")
    model = next(
        (m for m in available_models(rpc.agent) if (m.provider, m.id) == (provider, model_id)),
        None,
    )
    if model is None:
        raise RpcCommandError(f"Model not found: {provider}/{model_id}")
    rpc.agent.switch_model(model.ref)
    return model.to_pi_model()


def cycle_model(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Switch to the next model; answers it with the level it runs at and whether a scope
    was cycled, or ``null`` when there is no other model to go to."""
    switched = rpc.cycler.cycle_model()
    if switched is None:
        return None
    return {
        "model": switched.model.to_pi_model(),
        "thinkingLevel": switched.thinking_level,
        "isScoped": bool(rpc.cycler.scope),
    }


def get_available_models(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers the ``Model`` objects of every model with credentials."""
    return {"models": [model.to_pi_model() for model in available_models(rpc.agent)]}


def set_thinking_level(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Use ``level`` from the next request on, as the model takes it; answers nothing."""
    rpc.agent.set_thinking_level(text_field(command, "level"))
    return ABSENT


def cycle_thinking_level(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Move to the model's next level, wrapping; answers it, or ``null`` for a model that
    does not think."""
    level = rpc.cycler.cycle_thinking_level()
    return None if level is None else {"level": level}


def get_available_thinking_levels(rpc: RpcContext, command: Mapping[str, Any]) -> object:
    """Answers the levels the session's model takes (every level of Pi's without a model)."""
    model = rpc.agent.session.model
    levels = THINKING_LEVELS if model is None else model.capabilities.supported_thinking_levels()
    return {"levels": list(levels)}


COMMANDS: Final[Mapping[str, RpcCommand]] = {
    "set_model": RpcCommand(set_model),
    "cycle_model": RpcCommand(cycle_model),
    "get_available_models": RpcCommand(get_available_models),
    "set_thinking_level": RpcCommand(set_thinking_level),
    "cycle_thinking_level": RpcCommand(cycle_thinking_level),
    "get_available_thinking_levels": RpcCommand(get_available_thinking_levels),
}
