"""Which entry-point plugins load: the allow and block lists, the essential plugins, and
importing the permitted ones; all without pluggy, so that the command line can list the
plugins' commands cheaply (:mod:`ctxmodes.plugin_calls`). :mod:`ctxmodes.plugins` builds
managers from the same selection.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from ctxmodes.errors import PluginError, raised_at
from ctxmodes.hook_marker import PROJECT_NAME
from ctxmodes.plugin_discovery import FoundEntryPoint, find_entry_points

#: The entry-point group for modes and other plugins, built-in and third-party alike.
ENTRY_POINT_GROUP = PROJECT_NAME

#: Entry points loaded whatever the allow list says, as pytest's essential plugins: the
#: default mode must always exist. Blocking one is an error rather than a broken default.
ESSENTIAL_PLUGINS: frozenset[str] = frozenset({"off"})

#: Comma-separated plugin names never to load (like tox's TOX_DISABLED_EXTERNAL_PLUGINS).
BLOCK_ENV = "CTXMODES_BLOCK_PLUGINS"
#: Comma-separated plugin names: when set, only these entry points are loaded.
ALLOW_ENV = "CTXMODES_LOAD_PLUGINS"
#: When set (to anything non-empty), every hook call is printed to stderr.
TRACE_ENV = "CTXMODES_TRACE_PLUGINS"

#: What a selection makes of an installed plugin (see :func:`select_entry_points`).
LOADED = "loaded"
BLOCKED = "blocked"
NOT_ALLOWED = "not allowed"


class PluginSelection(NamedTuple):
    """Which plugins to load. ``allow=None`` means every installed entry point."""

    allow: frozenset[str] | None = None
    block: frozenset[str] = frozenset()

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
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

    def refuse_blocked_essentials(self) -> None:
        """:raises PluginError: an essential plugin is blocked."""
        essential = sorted(self.block & ESSENTIAL_PLUGINS)
        if essential:
            raise PluginError(
                f"plugin {essential[0]!r} is essential and cannot be blocked "
                "(it provides the default mode)"
            )


class SelectedEntryPoint(NamedTuple):
    """One installed plugin and what the selection makes of it."""

    entry_point: FoundEntryPoint
    status: str  # LOADED | BLOCKED | NOT_ALLOWED


def select_entry_points(selection: PluginSelection) -> list[SelectedEntryPoint]:
    """Every installed plugin, by name (the first of a name seen twice), and whether
    ``selection`` loads it."""
    chosen: dict[str, SelectedEntryPoint] = {}
    for ep in sorted(find_entry_points(ENTRY_POINT_GROUP), key=lambda e: e.name):
        if ep.name in chosen:
            _refuse_another_plugin_of_that_name(chosen[ep.name].entry_point, ep)
            continue  # the same distribution visible twice on sys.path
        if selection.permits(ep.name):
            status = LOADED
        else:
            status = BLOCKED if ep.name in selection.block else NOT_ALLOWED
        chosen[ep.name] = SelectedEntryPoint(ep, status)
    return list(chosen.values())


def _refuse_another_plugin_of_that_name(first: FoundEntryPoint, second: FoundEntryPoint) -> None:
    """:raises PluginError: ``second`` is not ``first`` seen again but another plugin under
    its name, which would leave one of the two out without a word."""
    one, other = sorted(f"{ep.distribution} ({ep.value})" for ep in (first, second))
    if one != other:
        raise PluginError(
            f"plugin name {first.name!r} is declared twice: by {one} and by {other}; "
            "rename one of the entry points"
        )


def not_loaded_words(name: str, status: str) -> str:
    """Why plugin ``name`` is not loaded (``status``: :data:`BLOCKED` or :data:`NOT_ALLOWED`)
    and which settings would load it, as one clause."""
    if status == BLOCKED:
        return (
            f"plugin {name!r} is blocked: remove it from plugins.block and {BLOCK_ENV} to load it"
        )
    return (
        f"plugin {name!r} is not allowed: the allow list (plugins.allow, {ALLOW_ENV}) "
        "leaves it out; add it there to load it"
    )


def import_plugin(target: str, name: str, ep: FoundEntryPoint | None = None) -> object:
    """The plugin object of entry point ``ep`` (or module ``target``).

    :raises PluginError: it failed to import, in one line naming the plugin, the first line
        of the import's error, and, for an entry point that can be blocked, how to run
        without it.
    """
    try:
        return ep.load() if ep is not None else importlib.import_module(target)
    except Exception as exc:
        raise PluginError(load_failure_words(name, target, exc, blockable=ep is not None)) from exc


def load_failure_words(name: str, target: str, error: BaseException, *, blockable: bool) -> str:
    """One line on plugin ``name`` (imported from ``target``) failing to load with ``error``:
    its first line only, as a CLI error is one line (the exception's type when it says
    nothing), and where the plugin raised it."""
    lines = str(error).strip().splitlines()
    reason = lines[0].strip() if lines else type(error).__name__
    words = f"plugin {name!r} ({target}) failed to load: {reason}{raised_at(error)}"
    if blockable and name not in ESSENTIAL_PLUGINS:
        words += f" (to run without it, block it: plugins.block or {BLOCK_ENV})"
    return words


def _split(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())
