"""Building a plugin manager: hookspecs, entry points, allow and block lists, defaults.

There is no global manager: every host, CLI command and test calls
:func:`make_plugin_manager` and owns the result.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

from ctxmodes import hookspecs
from ctxmodes.errors import PluginError
from ctxmodes.plugin_checks import check_plugin
from ctxmodes.plugin_discovery import FoundEntryPoint, find_entry_points

if TYPE_CHECKING:
    from ctxmodes.config import Settings

#: The entry-point group for modes and other plugins, built-in and third-party alike.
ENTRY_POINT_GROUP = hookspecs.PROJECT_NAME

#: Core plugins registered in every manager, unless blocked. They are not modes; they provide
#: what every session has. ``module`` registers the module itself; ``module:Factory`` registers
#: a new ``Factory()`` per manager, for plugins that keep per-host state (tool processes).
#: Each is registered (and can be blocked) under its module name.
DEFAULT_PLUGINS: tuple[str, ...] = (
    "ctxmodes.tools.builtin:BuiltinToolsPlugin",
    "ctxmodes.host.builtin_commands",
    "ctxmodes.providers.builtin:BuiltinModels",
)

#: Entry points loaded whatever the allow list says, as pytest's essential plugins: the
#: default mode must always exist. Blocking one is an error rather than a broken default.
ESSENTIAL_PLUGINS: frozenset[str] = frozenset({"off"})

#: Comma-separated plugin names never to load (like tox's TOX_DISABLED_EXTERNAL_PLUGINS).
BLOCK_ENV = "CTXMODES_BLOCK_PLUGINS"
#: Comma-separated plugin names: when set, only these entry points are loaded.
ALLOW_ENV = "CTXMODES_LOAD_PLUGINS"
#: When set (to anything non-empty), every hook call is printed to stderr.
TRACE_ENV = "CTXMODES_TRACE_PLUGINS"


@dataclass(frozen=True, slots=True)
class PluginSelection:
    """Which plugins to load. ``allow=None`` means every installed entry point."""

    allow: frozenset[str] | None = None
    block: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_env(
        cls,
        environ: dict[str, str] | os._Environ[str] | None = None,
        *,
        allow: Iterable[str] | None = None,
        block: Iterable[str] = (),
    ) -> PluginSelection:
        """Merge configured lists with the environment (the environment adds to both)."""
        env = os.environ if environ is None else environ
        env_block = _split(env.get(BLOCK_ENV, ""))
        env_allow = _split(env.get(ALLOW_ENV, "")) if env.get(ALLOW_ENV) is not None else None
        allowed: frozenset[str] | None = None
        if allow is not None or env_allow is not None:
            allowed = frozenset(allow or ()) | frozenset(env_allow or ())
        return cls(allow=allowed, block=frozenset(block) | env_block)

    def permits(self, name: str) -> bool:
        if name in self.block:
            return False
        return self.allow is None or name in self.allow or name in ESSENTIAL_PLUGINS


@dataclass(frozen=True, slots=True)
class PluginRecord:
    """One plugin entry point and what happened to it."""

    name: str
    value: str
    distribution: str | None
    status: str  # "loaded" | "blocked" | "not allowed"


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
            if r.status == "loaded" and r.distribution
        }


def _split(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def make_plugin_manager(
    *,
    load_entrypoints: bool = True,
    selection: PluginSelection | None = None,
    plugins: Sequence[object] = (),
    default_plugins: Sequence[str] = DEFAULT_PLUGINS,
) -> CtxPluginManager:
    """Return a new plugin manager.

    In order: add the hookspecs; block names; load the permitted entry points of group
    ``ctxmodes`` (the :data:`ESSENTIAL_PLUGINS` always); register ``default_plugins``
    (modules, by their dotted name) and then ``plugins`` (objects, for tests and embedding);
    finally ``check_pending()``, so an implementation whose name matches no hookspec fails
    here instead of never being called.

    :param selection: allow/block lists; ``None`` reads only the environment.
    :raises PluginError: a plugin failed to import or implements an unknown hook, or an
        essential plugin is blocked.
    """
    pm = CtxPluginManager()
    pm.add_hookspecs(hookspecs)
    chosen = selection if selection is not None else PluginSelection.from_env()
    essential = sorted(chosen.block & ESSENTIAL_PLUGINS)
    if essential:
        raise PluginError(
            f"plugin {essential[0]!r} is essential and cannot be blocked "
            "(it provides the default mode)"
        )
    for name in chosen.block:
        pm.set_blocked(name)
    if load_entrypoints:
        _load_entry_points(pm, chosen)
    for target in default_plugins:
        module_name, _, factory = target.partition(":")
        if pm.is_blocked(module_name):  # the allow list limits entry points, not the core
            continue
        plugin = _import_plugin(module_name, module_name)
        if factory:
            plugin = getattr(plugin, factory)()
        pm.register(plugin, name=module_name)
    for plugin in plugins:
        check_plugin(pm, plugin, f"plugin {pm.get_canonical_name(plugin)!r}")
        pm.register(plugin)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} is invalid: {exc}") from exc
    if os.environ.get(TRACE_ENV):
        _enable_tracing(pm)
    return pm


def _load_entry_points(pm: CtxPluginManager, selection: PluginSelection) -> None:
    seen: set[str] = set()
    for ep in sorted(find_entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in seen:
            continue  # the same distribution visible twice on sys.path
        seen.add(ep.name)
        dist = ep.distribution
        if not selection.permits(ep.name):
            status = "blocked" if ep.name in selection.block else "not allowed"
            pm.entry_point_records.append(PluginRecord(ep.name, ep.value, dist, status))
            continue
        plugin = _import_plugin(ep.value, ep.name, ep)
        check_plugin(pm, plugin, f"plugin {ep.name!r}")
        try:
            pm.register(plugin, name=ep.name)
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginError(f"plugin {ep.name!r} could not be registered: {exc}") from exc
        pm.entry_point_records.append(PluginRecord(ep.name, ep.value, dist, "loaded"))


def _import_plugin(target: str, name: str, ep: FoundEntryPoint | None = None) -> object:
    try:
        return ep.load() if ep is not None else importlib.import_module(target)
    except Exception as exc:
        raise PluginError(f"plugin {name!r} ({target}) failed to load: {exc}") from exc


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
