"""Finding a provider from a model spec: ``provider/model-id`` or ``scheme:ARGUMENT``.

``openai/gpt-5.1`` names a model of the catalog (Pi's spelling); ``scripted:FILE`` names a
scheme whose factory interprets the argument. Both are registered through the
``ctx_register_models`` hook (:func:`registry_from_plugin_manager`); the built-in tables,
configured endpoints and the scripted scheme come from the default plugin
``ctxmodes.providers.builtin``. There is no global registry: whoever resolves owns the
registry it resolves with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.auth import (
    AuthResolver,
    missing_credentials_hint,
    models_with_credentials,
)
from ctxmodes.providers.catalog import (
    ModelCatalog,
    ModelSpec,
    UnknownModelError,
    may_be_keyless,
)

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.providers.base import Provider

ProviderFactory = Callable[[str], "Provider"]
#: Builds the provider of a catalog model (credentials, HTTP seam); the default uses the
#: built-in transports with keys from the environment and Pi's ``auth.json``.
ModelProviderFactory = Callable[[ModelSpec], "Provider"]


class ProviderSpecError(CtxmodesError):
    """A provider spec is malformed or names an unknown scheme or model."""


class MissingCredentialsError(ProviderSpecError):
    """A model was chosen whose provider has no credentials."""


def require_credentials(model: ModelSpec, environ: Mapping[str, str] | None = None) -> str:
    """Where ``model``'s credentials come from; checked before anything is created for a
    run, without running commands or refreshing tokens.

    :raises MissingCredentialsError: there are none (the message says what to do).
    :raises CredentialError: a credential file is corrupt.
    """
    source = AuthResolver(environ).status(model.provider, model.api_key)
    if source is None and may_be_keyless(model):
        return "none: a configured endpoint may need no key"
    if source is None:
        hint = missing_credentials_hint(model.provider, model.api_key)
        raise MissingCredentialsError(f"no credentials for {model.ref}: {hint}")
    return source


@dataclass(frozen=True, slots=True)
class ProviderScheme:
    """``scheme:ARGUMENT`` specs, built by ``factory(ARGUMENT)``."""

    scheme: str
    factory: ProviderFactory


ModelRegistration = ModelSpec | ProviderScheme


class ProviderRegistry:
    """Schemes and catalog models; :meth:`resolve` turns a spec into a provider."""

    def __init__(self, model_factory: ModelProviderFactory | None = None) -> None:
        self._factories: dict[str, ProviderFactory] = {}
        self.models = ModelCatalog()
        self._model_factory = model_factory

    @property
    def schemes(self) -> list[str]:
        return sorted(self._factories)

    def register(self, scheme: str, factory: ProviderFactory, *, replace: bool = False) -> None:
        """Make ``scheme:…`` specs build providers with ``factory(argument)``.

        :raises ValueError: the scheme is already registered and ``replace`` is False.
        """
        if not scheme or ":" in scheme or "/" in scheme:
            raise ValueError(f"invalid provider scheme {scheme!r}")
        if scheme in self._factories and not replace:
            raise ValueError(f"provider scheme {scheme!r} is already registered")
        self._factories[scheme] = factory

    def add(self, registration: ModelRegistration) -> None:
        """Take one ``ctx_register_models`` registration."""
        if isinstance(registration, ProviderScheme):
            self.register(registration.scheme, registration.factory)
        elif isinstance(registration, ModelSpec):
            self.models.add(registration)
        else:
            raise TypeError(f"cannot register {registration!r} as a model or provider scheme")

    def resolve(self, spec: str) -> Provider:
        """Build the provider a spec names exactly (a catalog model's may end in a thinking
        level, see :meth:`thinking_suffix`); a spec a user typed is read first with
        :meth:`read_model_option`.

        :raises ProviderSpecError: malformed, or an unknown scheme or model (with close
            matches).
        :raises CtxmodesError: the factory rejected its argument (e.g. a bad script file).
        """
        scheme, separator, argument = spec.partition(":")
        if separator and scheme in self._factories:
            return self._factories[scheme](argument)
        spec, _ = self.thinking_suffix(spec)
        if "/" in spec:
            try:
                model = self.models.get(spec)
            except UnknownModelError as error:
                raise ProviderSpecError(str(error)) from None
            return self._build(model)
        # A bare model id: name the models it could mean.
        same_id = [model.ref for model in self.models if model.id == spec]
        if same_id:
            raise ProviderSpecError(
                f"invalid model {spec!r}: name its provider too; did you mean "
                f"{', '.join(same_id[:4])}?"
            )
        schemes = ", ".join(self.schemes) or "none"
        raise ProviderSpecError(
            f"invalid model {spec!r}: expected <provider>/<model-id> or <scheme>:ARGUMENT "
            f"(schemes: {schemes}; `ctxmodes models` lists the models)"
        )

    def thinking_suffix(self, spec: str) -> tuple[str, str | None]:
        """``spec`` without the ``:<level>`` suffix a catalog model's spec may end in, and
        that level (``anthropic/claude-sonnet-4-5:high``, as Pi's ``--model`` takes it); a
        scheme's spec is whole (its argument may hold colons), and so is every other."""
        from ctxmodes.thinking_levels import split_level_suffix

        scheme, separator, _ = spec.partition(":")
        if separator and scheme in self._factories:
            return spec, None
        return split_level_suffix(spec, self.models.__contains__)

    def read_model_option(self, spec: str) -> tuple[str, str | None]:
        """The model a spec a user typed (``--model``, the configured model) names, as
        ``provider/id`` or the scheme's spec, and the thinking level it gives: read as Pi's
        ``--model`` reads it (see :mod:`~ctxmodes.providers.cli_model`: ``sonnet:high`` is a
        pattern). A session's recorded model and a program's switch name theirs exactly
        (:meth:`thinking_suffix`).

        :raises ProviderSpecError: the spec names no model, or several.
        """
        from ctxmodes.providers.cli_model import ModelNotFoundError, resolve_cli_model

        exact, level = self.thinking_suffix(spec)
        scheme, separator, _ = spec.partition(":")
        if exact in self.models or (separator and scheme in self._factories):
            return exact, level
        try:
            found = resolve_cli_model(spec, list(self.models), self.has_credentials)
        except ModelNotFoundError as error:
            raise self._not_found(spec, str(error)) from None
        except CtxmodesError as error:
            raise ProviderSpecError(str(error)) from None
        return found.model.ref, found.thinking_level

    def _not_found(self, spec: str, said: str) -> ProviderSpecError:
        """What to say of a spec that names nothing: the catalog's close matches of a
        ``provider/id``, else Pi's words (``said``), and the form a scheme's spec takes when
        it looks like one."""
        if "/" in spec and spec.strip():
            try:
                self.models.get(spec)
            except UnknownModelError as error:
                return ProviderSpecError(str(error))
        if ":" in spec or spec in self.schemes:
            schemes = ", ".join(self.schemes) or "none"
            said += f" A scheme's model is <scheme>:ARGUMENT (schemes: {schemes})."
        return ProviderSpecError(said)

    def has_credentials(self, provider: str) -> bool:
        """Whether ``provider`` can be used as it is (its first model's credentials are
        found; nothing is run or refreshed to find out)."""
        served = next((model for model in self.models if model.provider == provider), None)
        return served is not None and bool(models_with_credentials([served]))

    def _build(self, model: ModelSpec) -> Provider:
        if self._model_factory is not None:
            return self._model_factory(model)
        from ctxmodes.providers.builtin import default_model_provider

        require_credentials(model)
        return default_model_provider(model)


def _scripted(argument: str) -> Provider:
    from ctxmodes.providers.scripted import ScriptedProvider

    return ScriptedProvider.from_file(argument)


#: The scripted model's scheme, registered by the default plugin.
SCRIPTED = ProviderScheme("scripted", _scripted)


def registry_from_plugin_manager(
    pm: pluggy.PluginManager, model_factory: ModelProviderFactory | None = None
) -> ProviderRegistry:
    """A registry holding every model and scheme the manager's plugins register."""
    registry = ProviderRegistry(model_factory)
    pm.hook.ctx_register_models(register=registry.add)
    return registry


def default_registry() -> ProviderRegistry:
    """A registry holding only the built-in scheme and tables (no plugins, no config)."""
    from ctxmodes.providers.builtin import builtin_registrations

    registry = ProviderRegistry()
    for registration in builtin_registrations():
        registry.add(registration)
    return registry


def resolve(spec: str, registry: ProviderRegistry | None = None) -> Provider:
    """Resolve ``spec`` with ``registry``, or with a fresh :func:`default_registry`."""
    return (registry or default_registry()).resolve(spec)
