"""What pi-ai derives from a call's options the same way for every wire format: the cache
retention, and the key check it makes before anything is sent."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import CacheRetention, StreamOptions, WireError


def env_value(options: StreamOptions, name: str) -> str | None:
    """pi-ai's ``getProviderEnvValue``: the call's scoped environment (a stored credential's
    ``env``), then the process environment; empty values count as unset."""
    return (options.env or {}).get(name) or os.environ.get(name) or None


def cache_retention(options: StreamOptions) -> CacheRetention:
    """The option, else ``long`` when ``PI_CACHE_RETENTION=long``, else ``short``."""
    if options.cache_retention:
        return options.cache_retention
    return "long" if env_value(options, "PI_CACHE_RETENTION") == "long" else "short"


def missing_key_message(provider: str) -> str:
    return f"No API key for provider: {provider}"


def has_header(headers: Mapping[str, str | None], name: str) -> bool:
    """Whether ``headers`` sets ``name`` (lower case) to a non-blank value."""
    return any(
        key.lower() == name and value is not None and value.strip()
        for key, value in headers.items()
    )


def check_api_key(model: ModelSpec, options: StreamOptions, *, also: tuple[str, ...] = ()) -> str:
    """The key to send; pi-ai throws synchronously without one, unless the caller's headers
    carry the credentials (``authorization``, ``cf-aig-authorization``, or ``also``).

    :raises WireError: no key (Pi's message).
    """
    if options.api_key:
        return options.api_key
    if options.keyless:
        return ""
    if any(
        has_header(options.headers, name)
        for name in ("authorization", "cf-aig-authorization", *also)
    ):
        return "unused"
    raise WireError(missing_key_message(model.provider))
