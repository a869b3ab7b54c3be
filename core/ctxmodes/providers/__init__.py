"""Models: the provider protocol a transport implements, the requests and stream events it
exchanges with the host, the scripted model, and the registry that turns spec strings such as
``openai/gpt-5.1`` or ``scripted:FILE`` into providers.

A public module, for plugins that bring a model (``ctx_register_models``) or that talk to a
provider's own backend (:class:`BackendAccess`, as Remote does). Import from here; the
submodules are internal. The names load on first use, so importing this package is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.providers.backend import BackendAccess, BackendRoute
    from ctxmodes.providers.base import (
        DeveloperMessage,
        EncryptedToolOutput,
        LlmMessage,
        ModelCapabilities,
        ModelInfo,
        ModelRequest,
        NamespaceToolSchema,
        Provider,
        ProviderError,
        RequestMessage,
        RequestPurpose,
        StreamDone,
        StreamError,
        StreamEvent,
        TextDelta,
        ThinkingDelta,
        ToolCallComplete,
        ToolSchema,
        TransportRetry,
        UsageUpdate,
    )
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.providers.registry import (
        ModelRegistration,
        ProviderFactory,
        ProviderRegistry,
        ProviderScheme,
        ProviderSpecError,
        default_registry,
        resolve,
    )
    from ctxmodes.providers.script import Script
    from ctxmodes.providers.scripted import ScriptedProvider

_BASE = (
    "DeveloperMessage",
    "EncryptedToolOutput",
    "LlmMessage",
    "ModelCapabilities",
    "ModelInfo",
    "ModelRequest",
    "NamespaceToolSchema",
    "Provider",
    "ProviderError",
    "RequestMessage",
    "RequestPurpose",
    "StreamDone",
    "StreamError",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallComplete",
    "ToolSchema",
    "TransportRetry",
    "UsageUpdate",
)
_REGISTRY = (
    "ModelRegistration",
    "ProviderFactory",
    "ProviderRegistry",
    "ProviderScheme",
    "ProviderSpecError",
    "default_registry",
    "resolve",
)

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(_BASE, "ctxmodes.providers.base"),
    **dict.fromkeys(_REGISTRY, "ctxmodes.providers.registry"),
    "BackendAccess": "ctxmodes.providers.backend",
    "BackendRoute": "ctxmodes.providers.backend",
    "ModelSpec": "ctxmodes.providers.catalog",
    "Script": "ctxmodes.providers.script",
    "ScriptedProvider": "ctxmodes.providers.scripted",
}

__all__ = [
    "BackendAccess",
    "BackendRoute",
    "DeveloperMessage",
    "EncryptedToolOutput",
    "LlmMessage",
    "ModelCapabilities",
    "ModelInfo",
    "ModelRegistration",
    "ModelRequest",
    "ModelSpec",
    "NamespaceToolSchema",
    "Provider",
    "ProviderError",
    "ProviderFactory",
    "ProviderRegistry",
    "ProviderScheme",
    "ProviderSpecError",
    "RequestMessage",
    "RequestPurpose",
    "Script",
    "ScriptedProvider",
    "StreamDone",
    "StreamError",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallComplete",
    "ToolSchema",
    "TransportRetry",
    "UsageUpdate",
    "default_registry",
    "resolve",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxmodes.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
