"""Model descriptions in pi-ai's shape, and the catalog that finds them by ``provider/id``.

A :class:`ModelSpec` is everything a transport needs to know about a model besides its
credentials: the wire format (``api``), the endpoint (``base_url``), limits, prices, the
thinking levels it accepts and the compatibility flags Pi keys its quirks on. Field names
are Pi's (camelCase aliases), so a pi-ai ``Model`` object or an entry of Pi's
``models.json`` validates as is.

The built-in catalog is pi-ai 0.85's, every provider with its models, shipped as
``data/pi_models.json`` (written by ``node tools/export_pi_models.mjs --write``; a test
compares it with the installed Pi byte for byte). :class:`ProviderInfo` keeps what Pi knows
about each provider beside its models: the environment variables its key may come from and
whether Pi offers a subscription login for it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ctxmodes.errors import CtxmodesError
from ctxmodes.thinking_levels import THINKING_LEVELS, clamp_thinking_level

#: The ``{NAME}`` placeholders of Pi's endpoints that a call's settings fill in (Cloudflare's
#: account and AI Gateway, from the credential's ``env`` or the environment).
ENDPOINT_PLACEHOLDERS: tuple[str, ...] = ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID")


class _PiShaped(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="allow", populate_by_name=True, alias_generator=to_camel
    )


class CostTier(_PiShaped):
    """Rates that replace the base rates when a request's input exceeds a threshold."""

    input_tokens_above: float
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class ModelCost(_PiShaped):
    """Dollars per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    tiers: list[CostTier] | None = None


class ModelSpec(_PiShaped):
    """One model on one endpoint, as pi-ai describes it (``Model``).

    ``compat`` keeps Pi's flag names (``supportsDeveloperRole``, ``maxTokensField`` …);
    transports read them with :meth:`flag`. A model read from an object keeps that object's
    key order for :meth:`to_pi`: Pi's catalog does not write every model's keys in the same
    order (``compat`` comes before ``thinkingLevelMap`` in some), and its JSON shows them as
    they are.
    """

    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str
    reasoning: bool = False
    input: list[str] = Field(default_factory=lambda: ["text"])
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 128000
    max_tokens: int = 16384
    thinking_level_map: dict[str, str | None] | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    #: A key, or ``$VAR`` naming the variable that holds it (Pi's ``models.json`` spelling);
    #: never written out or shown.
    api_key: str | None = Field(default=None, repr=False)
    #: Header values as configured (``models.json``: commands and ``$VAR`` templates),
    #: resolved for each request; ``headers`` holds those that resolved when loaded.
    header_values: dict[str, str] | None = Field(default=None, repr=False)
    #: The keys of the object the model was read from, by their Pi names, in its order.
    _pi_keys: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(
        cls, data: Any, handler: ModelWrapValidatorHandler[ModelSpec]
    ) -> ModelSpec:
        model = handler(data)
        if isinstance(data, Mapping):
            fields = cls.model_fields
            model._pi_keys = tuple(
                fields[key].alias or key if key in fields else key for key in data
            )
        return model

    @property
    def ref(self) -> str:
        """``provider/id``, the spec string that names this model."""
        return f"{self.provider}/{self.id}"

    @property
    def images(self) -> bool:
        return "image" in self.input

    def flag(self, name: str, default: Any = None) -> Any:
        """A compatibility flag, or ``default`` when the model does not set it."""
        if self.compat is None:
            return default
        value = self.compat.get(name)
        return default if value is None else value

    def to_pi(self) -> dict[str, Any]:
        """The model as a pi-ai ``Model`` object (camelCase, unset optional keys left out),
        its keys in the order of the object it was read from (others after them)."""
        shown = self.model_dump(
            by_alias=True, exclude_none=True, mode="json", exclude={"api_key", "header_values"}
        )
        position = {key: at for at, key in enumerate(self._pi_keys)}
        return dict(sorted(shown.items(), key=lambda item: position.get(item[0], len(position))))

    def to_pi_model(self) -> dict[str, Any]:
        """The model as Pi shows its ``Model`` object to programs (RPC mode): :meth:`to_pi`
        with only the headers Pi's own catalog gives the model. Configured headers are left
        out: Pi adds them to requests, not to the model, and they may carry keys."""
        shown = self.to_pi()
        own = _catalog_headers().get(self.ref, {})
        headers = {
            name: value for name, value in (self.headers or {}).items() if own.get(name) == value
        }
        if headers:
            shown["headers"] = headers
        else:
            shown.pop("headers", None)
        return shown

    def request_headers(self) -> dict[str, str] | None:
        """The headers for one request: configured values resolved now (commands run).

        :raises ValueError: a configured value has no value (Pi's message, which names the
            header and the variable or command, never a value).
        """
        from ctxmodes.providers import config_values

        if not self.header_values:
            return self.headers
        configured = {
            name: config_values.resolve_or_raise(value, f'model "{self.ref}" header "{name}"')
            for name, value in self.header_values.items()
        }
        return {**(self.headers or {}), **configured}

    def on_account(self, env: Mapping[str, str] | None) -> ModelSpec:
        """The model with the account placeholders of its endpoint filled in from the
        call's settings (Pi's Cloudflare ``{CLOUDFLARE_ACCOUNT_ID}``/``{…_GATEWAY_ID}``);
        a placeholder without a value stays, as in Pi (:meth:`unfilled_placeholders`)."""
        if not env or "{" not in self.base_url:
            return self
        base_url = self.base_url
        for name in ENDPOINT_PLACEHOLDERS:
            if env.get(name):
                base_url = base_url.replace(f"{{{name}}}", env[name])
        return self if base_url == self.base_url else self.model_copy(update={"base_url": base_url})

    def unfilled_placeholders(self) -> list[str]:
        """The account placeholders still in the endpoint (no value was given for them)."""
        return [name for name in ENDPOINT_PLACEHOLDERS if f"{{{name}}}" in self.base_url]

    def supported_thinking_levels(self) -> list[str]:
        """The levels this model accepts (pi-ai's ``getSupportedThinkingLevels``)."""
        if not self.reasoning:
            return ["off"]
        levels = self.thinking_level_map or {}
        supported: list[str] = []
        for level in THINKING_LEVELS:
            if level in levels and levels[level] is None:
                continue
            if level in ("xhigh", "max") and level not in levels:
                continue
            supported.append(level)
        return supported

    def clamp_thinking_level(self, level: str) -> str:
        """The supported level nearest to ``level``: itself, else the next higher, else lower."""
        return clamp_thinking_level(level, self.supported_thinking_levels())


class UnknownModelError(CtxmodesError):
    """A model spec names no known model."""


class ModelCatalog:
    """Every known model, by ``provider/id``; filled through ``ctx_register_models``."""

    def __init__(self, models: Iterable[ModelSpec] = ()) -> None:
        self._models: dict[str, ModelSpec] = {}
        for model in models:
            self.add(model)

    def add(self, model: ModelSpec, *, replace: bool = True) -> None:
        """Add a model; a later registration of the same ``provider/id`` replaces an earlier one
        (so configuration overrides the built-in tables) unless ``replace`` is False."""
        if not replace and model.ref in self._models:
            raise ValueError(f"model {model.ref!r} is already registered")
        self._models[model.ref] = model

    def __iter__(self) -> Iterator[ModelSpec]:
        return iter(self._models.values())

    def __len__(self) -> int:
        return len(self._models)

    def providers(self) -> list[str]:
        return sorted({model.provider for model in self._models.values()})

    def __contains__(self, ref: object) -> bool:
        return ref in self._models

    def get(self, ref: str) -> ModelSpec:
        """The model ``provider/id`` names.

        :raises UnknownModelError: no such model; the message lists close matches.
        """
        model = self._models.get(ref)
        if model is not None:
            return model
        provider, _, model_id = ref.partition("/")
        if not model_id:
            raise UnknownModelError(
                f"invalid model {ref!r}: expected <provider>/<model-id> or scripted:FILE"
            )
        if provider not in self.providers():
            # A typo gets the corrected name, not a wall of forty providers to search.
            near = difflib.get_close_matches(provider, self.providers(), n=1)
            if near:
                raise UnknownModelError(
                    f"unknown provider {provider!r}; did you mean {near[0]}/{model_id}?"
                )
            # Most often a local server (Ollama, llama.cpp) that is not configured yet.
            known = ", ".join(self.providers()) or "none"
            raise UnknownModelError(
                f"unknown provider {provider!r}: a server of your own is added as a "
                f"[providers.{provider}] table of config.toml or in Pi's models.json "
                f"(known: {known})"
            )
        close = difflib.get_close_matches(ref, list(self._models), n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `ctxmodes models` lists them"
        raise UnknownModelError(f"unknown model {ref!r}{hint}")


class OAuthLogin(_PiShaped):
    """Pi's OAuth login for a provider (``Provider.auth.oauth``)."""

    name: str
    #: Billed through a subscription (Claude Pro/Max, ChatGPT Plus/Pro …) rather than credits.
    subscription: bool = False


class ApiKeyLogin(_PiShaped):
    """Pi's API key login for a provider (``Provider.auth.apiKey``)."""

    name: str


class ProviderInfo(_PiShaped):
    """One of pi-ai's built-in providers, without its models."""

    id: str
    name: str
    base_url: str | None = None
    headers: dict[str, str] | None = None
    #: The variables Pi reads the key from, in Pi's order (``findEnvKeys``).
    env_keys: list[str] = Field(default_factory=list)
    api_key: ApiKeyLogin | None = None
    oauth: OAuthLogin | None = None


class PiCatalog(_PiShaped):
    """``data/pi_models.json``: the pi-ai version, the model Pi starts on for each provider
    (in Pi's order of preference), and the providers, each with its models."""

    pi: str
    default_models: dict[str, str]
    providers: list[dict[str, Any]]


@cache
def _pi_catalog() -> PiCatalog:
    text = resources.files("ctxmodes.providers").joinpath("data/pi_models.json").read_text("utf-8")
    return PiCatalog.model_validate_json(text)


@cache
def builtin_providers() -> dict[str, ProviderInfo]:
    """pi-ai's built-in providers by id, in Pi's order."""
    infos = (
        ProviderInfo.model_validate({k: v for k, v in entry.items() if k != "models"})
        for entry in _pi_catalog().providers
    )
    return {info.id: info for info in infos}


def is_builtin_provider(provider: str) -> bool:
    """Whether ``provider`` is one of pi-ai's (a configured endpoint is not)."""
    return provider in builtin_providers()


def default_models() -> Mapping[str, str]:
    """Provider id → the model id Pi starts a session on when nothing names one, in Pi's
    order of preference (``defaultModelPerProvider``)."""
    return _pi_catalog().default_models


def pi_version() -> str:
    """The pi-ai release the built-in catalog comes from."""
    return _pi_catalog().pi


@cache
def builtin_models() -> tuple[ModelSpec, ...]:
    """Every model of pi-ai's built-in catalog, in Pi's order (made once: a model is
    immutable, and every registry of the process starts from them)."""
    return tuple(
        ModelSpec.model_validate(model)
        for entry in _pi_catalog().providers
        for model in entry["models"]
    )


@cache
def _catalog_headers() -> dict[str, dict[str, str]]:
    """The headers pi-ai's catalog gives its models, by ``provider/id``."""
    return {model.ref: model.headers for model in builtin_models() if model.headers}


def may_be_keyless(model: ModelSpec) -> bool:
    """True for an endpoint the user configured (a local server such as Ollama or
    llama.cpp), which works without credentials; pi-ai's own providers need them."""
    return not is_builtin_provider(model.provider)
