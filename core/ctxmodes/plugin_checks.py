"""Checking a plugin against the hookspecs before it is registered.

pluggy accepts an object whose ``ctx_*`` method lacks the ``@hookimpl`` marker (it is simply
never called, and a misspelled one is then not noticed at all), reports a misspelled marked
hook only when ``check_pending`` runs, and rejects an argument the spec does not have with a
traceback-shaped message. :func:`check_plugin` turns each of these into one line naming the
plugin and the hook, for module plugins when a manager is built and for mode objects when a
mode is activated. The ``ctx_`` prefix is the hooks' own: a plugin's helper does not use it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import inspect

import pluggy

from ctxmodes.errors import PluginError
from ctxmodes.hookspecs import PROJECT_NAME

_HOOK_PREFIX = "ctx_"


def check_plugin(pm: pluggy.PluginManager, plugin: object, label: str) -> None:
    """Raise :class:`PluginError` when ``plugin`` has a ``ctx_*`` attribute, or one marked
    ``@hookimpl``, that would not work as a hook implementation.

    :param label: how the error names the plugin (``plugin 'x'``, ``mode 'tree'``).
    """
    for name in dir(plugin):
        # Found as pluggy finds implementations: a property is not run to look at it.
        found = inspect.getattr_static(plugin, name, None)
        attribute = getattr(found, "__func__", found)  # a staticmethod's or classmethod's
        options = getattr(attribute, f"{PROJECT_NAME}_impl", None)
        marked = isinstance(options, dict)
        if not (marked or (name.startswith(_HOOK_PREFIX) and callable(attribute))):
            continue
        hook = (options.get("specname") if isinstance(options, dict) else None) or name
        attribute = getattr(plugin, name)
        caller = getattr(pm.hook, hook, None)
        spec = getattr(caller, "spec", None)
        if spec is None:
            raise PluginError(f"{label}: {hook} is not a ctxmodes hook{_suggestion(pm, hook)}")
        if not marked:
            raise PluginError(
                f"{label}: {name} is not marked @hookimpl, so it would never be called "
                "(an override must be marked again)"
            )
        _check_arguments(label, hook, attribute, tuple(spec.argnames))


def _check_arguments(label: str, name: str, function: object, allowed: tuple[str, ...]) -> None:
    try:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return
    extra = [
        p.name
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in allowed
    ]
    if extra:
        listed = ", ".join(repr(argument) for argument in extra)
        raise PluginError(
            f"{label}: {name} takes {listed}, which the hook does not pass "
            f"(it passes: {', '.join(allowed)})"
        )


def _suggestion(pm: pluggy.PluginManager, name: str) -> str:
    known = [hook for hook in dir(pm.hook) if hook.startswith(_HOOK_PREFIX)]
    import difflib  # only to word an error

    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f" (did you mean {close[0]}?)"
    return f" (the {_HOOK_PREFIX} prefix is reserved for hooks)"
