"""Building a plugin manager: hookspecs, entry points, allow and block lists, defaults.

There is no global manager: every host, CLI command and test calls
:func:`make_plugin_manager` and owns the result.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from ctxmodes import hookspecs
from ctxmodes.errors import PluginError
from ctxmodes.plugin_checks import check_plugin
from ctxmodes.plugin_selection import LOADED, TRACE_ENV, import_plugin, select_entry_points

# PluginSelection is built by every caller of make_plugin_manager: offered from here too.
from ctxmodes.plugin_selection import PluginSelection as PluginSelection

if TYPE_CHECKING:
    from ctxmodes.config import Settings

#: Core plugins registered in every manager, unless blocked. They are not modes; they provide
#: what every session has. ``module`` registers the module itself; ``module:Factory`` registers
#: a new ``Factory()`` per manager, for plugins that keep per-host state (tool processes).
#: Each is registered (and can be blocked) under its module name.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "ctxmodes.tools.builtin:BuiltinToolsPlugin",
    "ctxmodes.host.builtin_commands",
    "ctxmodes.providers.builtin:BuiltinModels",
)


@dataclass(frozen=True, slots=True)
class PluginRecord:
    """One plugin entry point and what happened to it."""

    name: str
    value: str
    distribution: str | None
    status: str  # LOADED | BLOCKED | NOT_ALLOWED (ctxmodes.plugin_selection)


class CtxPluginManager(pluggy.PluginManager):
    """A pluggy manager that also remembers the entry points it saw."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.entry_point_records: list[PluginRecord] = []

    def distributions(self) -> dict[str, str]:
        """Plugin name → distribution name, for loaded entry points."""
        return {
            r.name: r.distribution
            for r in self.entry_point_records
            if r.status == LOADED and r.distribution
        }

    def not_loaded(self) -> dict[str, str]:
        """Plugin name → status (blocked, not allowed), for entry points not loaded."""
        return {r.name: r.status for r in self.entry_point_records if r.status != LOADED}


def make_plugin_manager(
    *,
    load_entrypoints: bool = True,
    selection: PluginSelection | None = None,
    plugins: Sequence[object] = (),
    default_plugins: Sequence[str] = DEFAULT_PLUGINS,
) -> CtxPluginManager:
    """Return a new plugin manager.

    In order: add the hookspecs; block names; load the permitted entry points of group
    ``ctxmodes`` (the essential ones always: :mod:`ctxmodes.plugin_selection`); register
    ``default_plugins`` (modules, by their dotted name) and then ``plugins`` (objects, for
    tests and embedding); finally ``check_pending()``, so an implementation whose name
    matches no hookspec fails here instead of never being called.

    :param selection: allow/block lists; ``None`` reads only the environment.
    :raises PluginError: a plugin failed to import or implements an unknown hook, or an
        essential plugin is blocked.
    """
    pm = CtxPluginManager()
    pm.add_hookspecs(hookspecs)
    chosen = selection if selection is not None else PluginSelection.from_env()
    chosen.refuse_blocked_essentials()
    for name in chosen.block:
        pm.set_blocked(name)
    if load_entrypoints:
        _load_entry_points(pm, chosen)
    for target in default_plugins:
        module_name, _, factory = target.partition(":")
        if pm.is_blocked(module_name):  # the allow list limits entry points, not the core
            continue
        plugin = import_plugin(module_name, module_name)
        if factory:
            plugin = getattr(plugin, factory)()
        pm.register(plugin, name=module_name)
    for plugin in plugins:
        check_plugin(pm, plugin, f"plugin {_given_plugin_name(plugin)!r}")
        pm.register(plugin)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} is invalid: {exc}") from exc
    if os.environ.get(TRACE_ENV):
        _enable_tracing(pm)
    return pm


def _load_entry_points(pm: CtxPluginManager, selection: PluginSelection) -> None:
    for ep, status in select_entry_points(selection):
        record = PluginRecord(ep.name, ep.value, ep.distribution, status)
        if status == LOADED:
            plugin = import_plugin(ep.value, ep.name, ep)
            check_plugin(pm, plugin, f"plugin {ep.name!r}")
            try:
                pm.register(plugin, name=ep.name)
            except (ValueError, pluggy.PluginValidationError) as exc:
                raise PluginError(f"plugin {ep.name!r} could not be registered: {exc}") from exc
        pm.entry_point_records.append(record)


def plugin_label(name: str, plugin: object) -> str:
    """What a message calls a registered plugin: the name it was registered under (an entry
    point's, a default plugin's module), or for one a program passed without a name, whose
    name pluggy made from its ``id``, its module's or its class's name."""
    return _given_plugin_name(plugin) if name == str(id(plugin)) else name


def _given_plugin_name(plugin: object) -> str:
    """How an error names a plugin object a program passed: its module's or its class's
    name (pluggy's canonical name for it is only a number)."""
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    kind = type(plugin)
    return f"{kind.__module__}.{kind.__qualname__}"


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    """Print every hook call (its arguments and the plugins it reaches) and its outcome."""
    import reprlib
    import sys

    shorten = reprlib.Repr()  # bounded: a session or a request is never printed whole
    shorten.maxstring = shorten.maxother = 120

    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        arguments = ", ".join(f"{key}={shorten.repr(value)}" for key, value in kwargs.items())
        plugins = ", ".join(impl.plugin_name for impl in reversed(impls)) or "none"
        print(f"ctxmodes trace: {hook_name}({arguments}) -> [{plugins}]", file=sys.stderr)

    def after(
        outcome: pluggy.Result[Any],
        hook_name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        if outcome.exception is not None:
            shown = f"raised {outcome.exception!r}"
        else:
            shown = f"returned {shorten.repr(outcome.get_result())}"
        print(f"ctxmodes trace: {hook_name} {shown}", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)


def each_plugin(
    pm: pluggy.PluginManager, hook_name: str
) -> Iterator[tuple[str, Callable[..., Any]]]:
    """``(plugin name, caller)`` for each implementation of a registration hook, so what a
    plugin registers can be attributed to it. Each caller reaches that one plugin and goes
    through the manager's tracing like every other hook call."""
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    for impl in impls:
        others = [other.plugin for other in impls if other is not impl]
        yield impl.plugin_name, pm.subset_hook_caller(hook_name, remove_plugins=others)


def make_configured_plugin_manager(
    settings: Settings | None = None,
    *,
    load_entrypoints: bool = True,
    plugins: Sequence[object] = (),
) -> CtxPluginManager:
    """A plugin manager honouring the configured allow and block lists (``settings``, or none)
    and the environment, with the default plugins and ``plugins``. Every host and command
    builds its own, so each host owns its tool processes."""
    selection = (
        PluginSelection.from_env()
        if settings is None
        else PluginSelection.from_env(allow=settings.plugins.allow, block=settings.plugins.block)
    )
    extra = list(plugins)
    if settings is not None and settings.providers:
        from ctxmodes.providers.builtin import ConfiguredProviders

        extra.append(ConfiguredProviders(settings.providers))
    return make_plugin_manager(
        load_entrypoints=load_entrypoints, selection=selection, plugins=extra
    )
