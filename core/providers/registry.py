"""Finding a provider from a spec string such as ``scripted:session-script.json``.

A spec is ``<scheme>:<argument>``; the scheme picks a factory and the factory interprets the
argument (a file, a model id ...). :func:`default_registry` knows the built-in schemes;
hosts add others (from plugins, later transports) with :meth:`ProviderRegistry.register`.
There is no global registry: whoever resolves owns the registry it resolves with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes.errors import CtxmodesError

if TYPE_CHECKING:
    from ctxmodes.providers.base import Provider

ProviderFactory = Callable[[str], "Provider"]


class ProviderSpecError(CtxmodesError):
    """A provider spec is malformed or names an unknown scheme."""


class ProviderRegistry:
    """Scheme name → provider factory."""

    def __init__(self) -> None:
        self._factories: dict[str, ProviderFactory] = {}

    @property
    def schemes(self) -> list[str]:
        return sorted(self._factories)

    def register(self, scheme: str, factory: ProviderFactory, *, replace: bool = False) -> None:
        """Make ``scheme:…`` specs build providers with ``factory(argument)``.

        :raises ValueError: the scheme is already registered and ``replace`` is False.
        """
        if not scheme or ":" in scheme:
            raise ValueError(f"invalid provider scheme {scheme!r}")
        if scheme in self._factories and not replace:
            raise ValueError(f"provider scheme {scheme!r} is already registered")
        self._factories[scheme] = factory

    def resolve(self, spec: str) -> Provider:
        """Build the provider a spec names.

        :raises ProviderSpecError: the spec has no ``scheme:`` or the scheme is unknown.
        :raises CtxmodesError: the factory rejected its argument (e.g. a bad script file).
        """
        scheme, separator, argument = spec.partition(":")
        if not separator or not scheme:
            raise ProviderSpecError(
                f"invalid provider {spec!r}: expected <scheme>:<argument>, e.g. scripted:FILE"
            )
        factory = self._factories.get(scheme)
        if factory is None:
            known = ", ".join(self.schemes) or "none"
            raise ProviderSpecError(f"unknown provider scheme {scheme!r} (known: {known})")
        return factory(argument)


def _scripted(argument: str) -> Provider:
    from ctxmodes.providers.scripted import ScriptedProvider

    return ScriptedProvider.from_file(argument)


def default_registry() -> ProviderRegistry:
    """A new registry holding the built-in schemes (``scripted``)."""
    registry = ProviderRegistry()
    registry.register("scripted", _scripted)
    return registry


def resolve(spec: str, registry: ProviderRegistry | None = None) -> Provider:
    """Resolve ``spec`` with ``registry``, or with a fresh :func:`default_registry`."""
    return (registry or default_registry()).resolve(spec)
