"""The wire formats, one subpackage each, found by pi-ai's ``api`` name.

A wire format's package exposes three names (see :class:`WireFormat`): ``API``, its pi-ai
name; ``stream(model, context, options, call)``, one call run to its final message; and
``capabilities(model)``, what the model accepts on that wire. Packages are imported on first
use, so a command that never talks to a model never imports httpx.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from ctxmodes.providers.api_modules import API_MODULES
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, PiMessage, StreamOptions


class StreamFunction(Protocol):
    def __call__(
        self, model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
    ) -> PiMessage: ...


class WireFormat(Protocol):
    """What a wire format's package provides."""

    API: str
    stream: StreamFunction

    def capabilities(self, model: ModelSpec) -> ModelCapabilities: ...


def wire_format(api: str) -> WireFormat:
    """The package speaking ``api``.

    :raises KeyError: no built-in transport speaks ``api``.
    """
    return cast(WireFormat, importlib.import_module(API_MODULES[api]))


def stream_function(api: str) -> StreamFunction:
    """The ``stream`` function of a wire format.

    :raises KeyError: no built-in transport speaks ``api``.
    """
    return wire_format(api).stream


def capabilities_for(model: ModelSpec) -> ModelCapabilities:
    """What ``model`` accepts on its wire (defaults for an ``api`` with no transport)."""
    if model.api not in API_MODULES:
        return ModelCapabilities(images=model.images, reasoning=model.reasoning)
    return wire_format(model.api).capabilities(model)
