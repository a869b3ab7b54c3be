"""The mode registry: which context-management modes are installed, and which one is active.

A mode is declared by a plugin through ``ctx_register_modes`` as a :class:`ModeSpec`. The
registry only *knows* modes; :meth:`ModeRegistry.activate` builds the per-session mode object
and registers it in the plugin manager, so only the selected mode's lifecycle hooks run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxmodes.errors import ConfigError, PluginError
from ctxmodes.plugins import each_plugin

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.hostapi import HostSession

MODE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")

#: Builds the object whose ``@hookimpl`` methods serve one session.
ModeFactory = Callable[["HostSession"], object]


@dataclass(frozen=True, slots=True)
class ModeSpec:
    """A context-management mode as a plugin declares it.

    :param name: what users write in configuration (``mode = "tree"``): lower case, digits,
        ``-`` or ``_``.
    :param description: one line for ``ctxmodes modes``.
    :param factory: called once per session with the session; returns the object whose
        hook implementations serve that session.
    """

    name: str
    description: str
    factory: ModeFactory

    def __post_init__(self) -> None:
        if not MODE_NAME.match(self.name):
            raise PluginError(
                f"invalid mode name {self.name!r}: use lower-case letters, digits, '-' or '_'"
            )


@dataclass(frozen=True, slots=True)
class InstalledMode:
    """A registered mode and where it came from."""

    spec: ModeSpec
    plugin_name: str
    distribution: str | None


def mode_plugin_name(mode_name: str) -> str:
    """The plugin-manager name an active mode object is registered under."""
    return f"ctxmodes-mode:{mode_name}"


class ModeRegistry:
    """Every mode the plugins of one plugin manager declare, by name."""

    def __init__(self, modes: dict[str, InstalledMode]) -> None:
        self._modes = modes

    @classmethod
    def from_plugin_manager(
        cls, pm: pluggy.PluginManager, distributions: dict[str, str] | None = None
    ) -> ModeRegistry:
        """Collect the modes every registered plugin declares.

        :param distributions: plugin name → distribution name, for ``ctxmodes modes``.
        """
        modes: dict[str, InstalledMode] = {}
        dists = distributions or {}
        for plugin_name, call in each_plugin(pm, "ctx_register_modes"):

            def register(spec: ModeSpec, plugin_name: str = plugin_name) -> None:
                previous = modes.get(spec.name)
                if previous is not None:
                    raise PluginError(
                        f"mode {spec.name!r} is registered twice: by plugin "
                        f"{previous.plugin_name!r} and by plugin {plugin_name!r}"
                    )
                modes[spec.name] = InstalledMode(spec, plugin_name, dists.get(plugin_name))

            call(register=register)
        return cls(modes)

    def __iter__(self) -> Iterator[InstalledMode]:
        return iter(sorted(self._modes.values(), key=lambda m: m.spec.name))

    def __contains__(self, name: object) -> bool:
        return name in self._modes

    def names(self) -> list[str]:
        return sorted(self._modes)

    def get(self, name: str) -> InstalledMode:
        """The installed mode called ``name``; an unknown name is a :class:`ConfigError`
        that lists the installed modes."""
        try:
            return self._modes[name]
        except KeyError:
            installed = ", ".join(self.names()) or "none"
            raise ConfigError(f"unknown mode {name!r}; installed modes: {installed}") from None

    def activate(self, pm: pluggy.PluginManager, name: str, session: HostSession) -> object:
        """Build mode ``name`` for ``session`` and register it so its hooks fire.

        The previous active mode object, if any, must have been deactivated first.
        """
        installed = self.get(name)
        plugin = installed.spec.factory(session)
        pm.register(plugin, name=mode_plugin_name(name))
        return plugin

    @staticmethod
    def deactivate(pm: pluggy.PluginManager, name: str) -> None:
        """Unregister the active object of mode ``name`` (a no-op when there is none)."""
        plugin = pm.get_plugin(mode_plugin_name(name))
        if plugin is not None:
            pm.unregister(plugin)
