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
    plugins register; its requests are sent as the configuration's ``retry.provider`` says
    (timeout, transport-level retries), as ``run``'s are.

    :raises CtxmodesError: unknown model, missing credentials, bad spec or configuration.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.host.runtime import resolve_configured
    from ctxmodes.plugins import make_configured_plugin_manager

    where = Path(cwd) if cwd is not None else Path.cwd()
    settings = load_settings(cwd=where, cli={"model": spec}).settings
    pm = make_configured_plugin_manager(settings)
    return resolve_configured(pm, spec, settings.retry.provider, typed=True)[0]


def configured_thinking_budgets(*, cwd: Path | str | None = None) -> dict[str, int]:
    """The tokens the configuration for ``cwd`` lets a model think at each level (Pi's
    ``thinkingBudgets``, ``[thinking_budgets]``; empty: the transports' own), for a program
    that builds its own :class:`~ctxmodes.providers.base.ModelRequest` as a session would.

    :raises CtxmodesError: the configuration does not validate.
    """
    from ctxmodes.config import load_settings

    where = Path(cwd) if cwd is not None else Path.cwd()
    return dict(load_settings(cwd=where).settings.thinking_budgets.by_level())
