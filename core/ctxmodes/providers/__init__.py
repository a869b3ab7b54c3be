"""Models: the provider protocol a transport implements, the requests and stream events it
exchanges with the host, the scripted model, and the registry that turns spec strings such as
``openai/gpt-5.1`` or ``scripted:FILE`` into providers.

A public module, for plugins that bring a model (``ctx_register_models``) or that talk to a
provider's own backend (:class:`BackendAccess`, as Remote does). Import from here; the
submodules are internal. The names load on first use, so importing this package is cheap.

Layout:

- :mod:`.base` — the host's provider protocol (requests, stream events, capabilities);
  :mod:`.http_model` — a catalog model behind a wire format, as a host provider, streaming
  on threads that :mod:`.call_threads` keeps for the next call;
  :mod:`.backend` — a provider's backend beside its model (Remote's history and notes).
- :mod:`.catalog`, :mod:`.registry`, :mod:`.builtin`, :mod:`.credentials`,
  :mod:`.credential_store`, :mod:`.codex_oauth` — which models exist and their credentials.
- :mod:`.wire` — the vocabulary every transport shares: pi-ai's context, options, events,
  the assistant message being built, :class:`~.wire.WireError`.
- :mod:`.http` — the HTTP seam (httpx clients; proxies and ``NO_PROXY`` as httpx resolves
  them) and :func:`~.http.guarded`, the one abort-and-deadline scope for model streams and
  backend calls.
- :mod:`.transport` — machinery shared by the wire formats: the call lifecycle
  (:mod:`~.transport.call`), the output cap (:mod:`~.transport.budget`), pi-ai's retries
  (:mod:`~.transport.retry`), SSE (:mod:`~.transport.sse`), the history repairs
  (:mod:`~.transport.history`), option defaults (:mod:`~.transport.options`), cost
  (:mod:`~.transport.usage`). :mod:`.jsvalues` reproduces the JavaScript behaviours
  (JSON text, string lengths, partial JSON) the formats depend on.
- :mod:`.apis` — one subpackage per wire format, named after pi-ai's ``api`` with ``_`` for
  ``-``; :mod:`.apis.openai` holds what the OpenAI-shaped formats share (the SDK's errors and
  event reading, the Responses request and stream, strict tool schemas).

Adding a wire format (pi-ai's ``dist/api/<api>.js`` is the reference):

1. Create ``apis/<api_with_underscores>/`` with ``request.py`` (headers, URL, body: pi-ai's
   message, tool and option conversion, starting from
   :func:`~.transport.history.transform_messages` with the vendor's tool-call id rule),
   ``stream.py`` (a reader that turns the vendor's events into pi-ai's
   :class:`~.wire.WireEvent` values and fills the output message; usage through
   :mod:`~.transport.usage`), and ``compat.py`` if the format has per-model quirks.
2. In the package's ``__init__.py`` define ``API`` (pi-ai's name), ``capabilities(model)``
   (a :class:`~.base.ModelCapabilities`: developer role, images, reasoning …) and
   ``stream(model, context, options, call)``: check the key, fit ``maxTokens``
   (``stream = stream_simple(API, _call)`` does both, around the format's ``_call``), then
   run the request under :meth:`~.transport.call.CallContext.run`, opening the response with
   :func:`~.transport.retry.open_stream` (pi-ai's ``retryProviderRequest``) unless the
   vendor retries differently, and reading it through
   :meth:`~.transport.call.CallContext.guard` so an abort ends it between events. Requests
   go through ``call.client(timeout)``, never a client of their own, so proxies, the abort
   and the deadline apply.
3. Register the package in :data:`.api_modules.API_MODULES`. Import only downwards (``wire``,
   ``transport``, ``apis.<shared>``): no function-level imports, no cycles.
4. The oracle's cases for the ``api`` then run in
   ``tests/core/providers/test_pi_provider_cases.py``; add cases of your own (written by
   the oracle, kept in ``tests/core/providers/cases/``) wherever behaviour matters and
   none exists, a loopback test of failures in ``test_transport_loopback.py``, and the
   format in ``bench/provider_streams.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.lazy_exports import lazy_exports

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
        ThinkingComplete,
        ThinkingDelta,
        ToolCallComplete,
        ToolSchema,
        TransportRetry,
        UsageUpdate,
    )
    from ctxmodes.providers.catalog import ModelSpec
    from ctxmodes.providers.http import guarded
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
    "ThinkingComplete",
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
    "guarded": "ctxmodes.providers.http",
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
    "ThinkingComplete",
    "ThinkingDelta",
    "ToolCallComplete",
    "ToolSchema",
    "TransportRetry",
    "UsageUpdate",
    "default_registry",
    "guarded",
    "resolve",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
