"""Models: the provider protocol (:mod:`~ctxmodes.providers.base`), the scripted model and
the registry that turns spec strings such as ``scripted:FILE`` into providers.
"""

from ctxmodes.providers.registry import (
    ProviderFactory,
    ProviderRegistry,
    ProviderSpecError,
    default_registry,
    resolve,
)

__all__ = [
    "ProviderFactory",
    "ProviderRegistry",
    "ProviderSpecError",
    "default_registry",
    "resolve",
]
