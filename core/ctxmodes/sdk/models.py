"""Finding a model outside a session: what a program that serves or proxies one needs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.providers.base import Provider


def resolve_model(spec: str, *, cwd: Path | str | None = None) -> Provider:
    """The provider for the model ``spec`` names, found as ``ctxmodes run --model`` finds
    one: the built-in tables, ``[providers.<name>]`` in the configuration for ``cwd``
    (default: the current directory; its project file only when a saved decision or
    ``defaultProjectTrust`` trusts the folder, as nobody is asked), and the models that
    plugins register.

    :raises CtxmodesError: unknown model, missing credentials, bad spec or configuration.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.plugins import make_configured_plugin_manager
    from ctxmodes.providers.registry import registry_from_plugin_manager

    where = Path(cwd) if cwd is not None else Path.cwd()
    settings = load_settings(cwd=where, cli={"model": spec}).settings
    return registry_from_plugin_manager(make_configured_plugin_manager(settings)).resolve(spec)
