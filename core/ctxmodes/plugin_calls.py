"""Calling a registration hook of the entry-point plugins without building a plugin manager.

``ctxmodes --help`` and a plugin's own command need one thing from the plugins: the commands
they register. Importing pluggy (and the ``inspect`` module it needs) and validating every
plugin costs more than the rest of such a start, so when each plugin implements the hook
as one plain function marked ``@hookimpl`` (as the built-in modes and the documented ones
do), that function is called directly: the call pluggy would make. Anything else (a hook
wrapper, two implementations in one plugin, an implementation taking other arguments, hook
tracing) is left to a real manager: :func:`registration_callers` then answers ``None``.

A plugin is validated against the hookspecs only when a manager is built (a session, a
core command that loads plugins); this path only imports the plugins and calls the hook.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Iterable
from typing import Any

from ctxmodes.hook_marker import IMPL_ATTRIBUTE
from ctxmodes.plugin_selection import LOADED, TRACE_ENV, SelectedEntryPoint, import_plugin

#: Calls one plugin's implementation of a registration hook with ``register=``.
Caller = Callable[..., None]

#: The hooks of :mod:`ctxmodes.hookspecs`, by name, known here without importing pluggy
#: (``tests/core/test_plugin_calls.py`` holds the two to each other). A plugin with a
#: ``ctx_*`` attribute that is not one of them, or not marked, is left to a manager, which
#: reports it in one line instead of leaving its modes or commands out without a word.
HOOK_NAMES = frozenset(
    {
        "ctx_agent_end",
        "ctx_agent_settled",
        "ctx_agent_start",
        "ctx_input",
        "ctx_message_end",
        "ctx_new_context",
        "ctx_project_context",
        "ctx_provider_request",
        "ctx_register_cli_commands",
        "ctx_register_commands",
        "ctx_register_models",
        "ctx_register_modes",
        "ctx_register_tools",
        "ctx_retrieve",
        "ctx_session_before_compact",
        "ctx_session_before_fork",
        "ctx_session_before_switch",
        "ctx_session_before_tree",
        "ctx_session_compact",
        "ctx_session_shutdown",
        "ctx_session_start",
        "ctx_session_tree",
        "ctx_tool_call",
        "ctx_tool_result",
        "ctx_turn_end",
        "ctx_turn_start",
        "ctx_user_bash",
    }
)


def registration_callers(
    hook_name: str, selected: Iterable[SelectedEntryPoint]
) -> list[tuple[str, Caller]] | None:
    """``(plugin name, caller)`` for each of the ``selected`` entry-point plugins
    (:func:`~ctxmodes.plugin_selection.select_entry_points`) that is loaded and implements
    registration hook ``hook_name``, in their order; ``None`` when one of them needs a
    plugin manager's call (see the module).

    :raises PluginError: a plugin fails to import.
    """
    if os.environ.get(TRACE_ENV):
        return None
    callers: list[tuple[str, Caller]] = []
    for ep, status in selected:
        if status != LOADED:
            continue
        plugin = import_plugin(ep.value, ep.name, ep)
        if not _only_known_hooks(plugin):
            return None
        implementations = _implementations(plugin, hook_name)
        if not implementations:
            continue
        if len(implementations) > 1:
            return None
        caller = _plain_caller(*implementations[0])
        if caller is None:
            return None
        callers.append((ep.name, caller))
    return callers


def _only_known_hooks(plugin: object) -> bool:
    """Whether every attribute of ``plugin`` marked ``@hookimpl`` names a hook (by its name
    or its ``specname``), and every ``ctx_*`` function is marked."""
    for name in dir(plugin):
        attribute = getattr(plugin, name, None)
        options = getattr(attribute, IMPL_ATTRIBUTE, None)
        if isinstance(options, dict):
            if (options.get("specname") or name) not in HOOK_NAMES:
                return False
        elif name.startswith("ctx_") and callable(attribute):
            return False
    return True


def _implementations(plugin: object, hook_name: str) -> list[tuple[Any, dict[str, Any]]]:
    """Each attribute of ``plugin`` marked as an implementation of ``hook_name``, with its
    options, found as pluggy finds them (by name, or by ``specname``)."""
    found = []
    for name in dir(plugin):
        attribute = getattr(plugin, name, None)
        options = getattr(attribute, IMPL_ATTRIBUTE, None)
        if isinstance(options, dict) and (options.get("specname") or name) == hook_name:
            found.append((attribute, options))
    return found


def _plain_caller(function: Any, options: dict[str, Any]) -> Caller | None:
    """A caller for an implementation that takes ``register`` (or nothing) and no other
    argument, is no wrapper, and is a function or a bound method; else ``None``."""
    if options.get("wrapper") or options.get("hookwrapper"):
        return None
    if isinstance(function, types.MethodType):
        code, skip = function.__func__.__code__, 1
    elif isinstance(function, types.FunctionType):
        code, skip = function.__code__, 0
    else:
        return None
    if code.co_kwonlyargcount or function.__defaults__:
        return None
    arguments = code.co_varnames[skip : code.co_argcount]
    if arguments == ("register",):
        return lambda register: function(register)
    if arguments == ():
        return lambda register: function()
    return None
