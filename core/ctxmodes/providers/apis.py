"""The wire formats by ``api`` name, imported on first use (they import httpx)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import PiContext, StreamOptions

#: ``api`` → the module whose ``stream(model, context, options, call)`` speaks it.
API_MODULES: dict[str, str] = {
    "openai-responses": "ctxmodes.providers.openai_responses",
    "openai-codex-responses": "ctxmodes.providers.codex",
    "openai-completions": "ctxmodes.providers.completions",
}

StreamFunction = Callable[[ModelSpec, PiContext, StreamOptions, Any], dict[str, Any]]


def stream_function(api: str) -> StreamFunction:
    """The ``stream`` function of a wire format.

    :raises KeyError: no built-in transport speaks ``api``.
    """
    module = importlib.import_module(API_MODULES[api])
    function: StreamFunction = module.stream
    return function
