"""The mode registry: which context-management modes are installed, and which one is active.

A mode is declared by a plugin through ``ctx_register_modes`` as a :class:`ModeSpec`. The
registry only *knows* modes; :meth:`ModeRegistry.activate` builds the per-session mode object
and registers it in the plugin manager, so only the selected mode's lifecycle hooks run.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ctxmodes.errors import ConfigError, CtxmodesError, PluginError, plugin_failure
from ctxmodes.names import PLUGIN_THING_NAME
from ctxmodes.records import FrozenRecord

if TYPE_CHECKING:
    import pluggy
    from pydantic import BaseModel

    from ctxmodes.hostapi import HostSession
    from ctxmodes.session_view import SessionView

MODE_NAME = PLUGIN_THING_NAME
#: The hook through which plugins declare modes.
REGISTER_MODES = "ctx_register_modes"
#: ``package.module:Model``: a settings model named by where it is defined.
SETTINGS_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

#: Builds the object whose ``@hookimpl`` methods serve one session: called as
#: ``factory(session)``, or ``factory(session, settings)`` when the mode declares settings.
ModeFactory = Callable[..., object]

#: How strongly a session file shows that a mode managed it: ``"exclusive"`` for records only
#: that mode writes (Tree's archive manifests, Remote's encrypted results), ``"shared"`` for
#: records other modes write too (window markers).
Evidence = Literal["exclusive", "shared"]

#: Looks at a session file that records no mode and says whether this mode managed it
#: (``None``: no sign of it). Called once when such a file is opened; may read the whole file.
ModeRecognizer = Callable[["SessionView"], Evidence | None]

#: One clause on what switching this session from this mode to the mode named by the second
#: argument changes, for the confirmation of the switch ("2 archived summaries become ordinary
#: Pi summaries and re-enter the context"); ``None``: nothing worth saying.
SwitchDescription = Callable[["SessionView", str], str | None]

#: The older form of :data:`SwitchDescription`, which is not told the target mode.
LeavingDescription = Callable[["SessionView"], str | None]


class ModeSpec(FrozenRecord):
    """A context-management mode as a plugin declares it (immutable).

    :param name: what users write in configuration (``mode = "tree"``): lower case, digits,
        ``-`` or ``_``.
    :param description: one line for ``ctxmodes modes``.
    :param factory: called once per session with the session (and, when ``settings`` is
        given, the validated settings as the second argument); returns the object whose hook
        implementations serve that session.
    :param settings: the pydantic model of the mode's ``[modes.<name>]`` configuration
        table, or where to import it from (``"package.module:Model"``, imported when the
        settings are first validated, so that listing modes does not load pydantic);
        ``None`` when the mode takes no settings.
    :param recognize: infers this mode for a session file that records none (written by
        the TypeScript extension or an older ctxmodes); see :mod:`ctxmodes.session_mode`.
    :param describe_switch: what switching a session from this mode to another changes, in
        one clause shown before the switch is confirmed; called with the session and the
        target mode's name, since what changes depends on it (a target that manages windows
        too keeps the markers).
    :param describe_leaving: the older form of ``describe_switch``, called with the session
        only; used when ``describe_switch`` is not given.
    """

    __slots__ = (
        "describe_leaving",
        "describe_switch",
        "description",
        "factory",
        "name",
        "recognize",
        "settings",
    )
    _fields = (
        "name",
        "description",
        "factory",
        "settings",
        "recognize",
        "describe_leaving",
        "describe_switch",
    )

    name: str
    description: str
    factory: ModeFactory
    settings: type[BaseModel] | str | None
    recognize: ModeRecognizer | None
    describe_leaving: LeavingDescription | None
    describe_switch: SwitchDescription | None

    def __init__(
        self,
        name: str,
        description: str,
        factory: ModeFactory,
        settings: type[BaseModel] | str | None = None,
        recognize: ModeRecognizer | None = None,
        describe_leaving: LeavingDescription | None = None,
        describe_switch: SwitchDescription | None = None,
    ) -> None:
        if not MODE_NAME.match(name):
            raise PluginError(
                f"invalid mode name {name!r}: use lower-case letters, digits, '-' or '_'"
            )
        if isinstance(settings, str) and not SETTINGS_REFERENCE.match(settings):
            raise PluginError(
                f"mode {name!r}: settings {settings!r} is not a model or a "
                "'package.module:Model' reference"
            )
        self._set(
            name=name,
            description=description,
            factory=factory,
            settings=settings,
            recognize=recognize,
            describe_leaving=describe_leaving,
            describe_switch=describe_switch,
        )

    def switch_words(self, view: SessionView, target: str) -> str | None:
        """What switching ``view``'s session from this mode to ``target`` changes, in one
        clause (``None``: the mode says nothing)."""
        if self.describe_switch is not None:
            return self.describe_switch(view, target)
        if self.describe_leaving is not None:
            return self.describe_leaving(view)
        return None

    def settings_model(self) -> type[BaseModel] | None:
        """The settings model, imported now when :attr:`settings` names it.

        :raises PluginError: the named model cannot be imported, or the model is not a
            pydantic model.
        """
        if self.settings is None:
            return None
        from pydantic import BaseModel

        model: object = self.settings
        if isinstance(self.settings, str):
            module_name, _, attribute = self.settings.partition(":")
            try:
                model = getattr(importlib.import_module(module_name), attribute)
            except Exception as exc:
                raise PluginError(
                    f"mode {self.name!r}: settings model {self.settings!r} failed to load: {exc}"
                ) from exc
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            shown = getattr(self.settings, "__name__", repr(self.settings))
            raise PluginError(f"mode {self.name!r}: settings {shown} is not a pydantic model")
        return model

    def validate_settings(self, values: Mapping[str, Any] | None) -> BaseModel | None:
        """The mode's validated settings from its configuration table (``None`` when it
        declares none).

        :raises ConfigError: an unknown key or a bad value, naming the mode.
        """
        # Imported here: plugins import this module to declare modes, and declaring one
        # must not load pydantic (``ctxmodes --help`` imports every plugin).
        from ctxmodes.config import MODES_TABLE, validate_owned

        model = self.settings_model()
        if model is None:
            if values:
                raise ConfigError(
                    f"[{MODES_TABLE}.{self.name}]: mode {self.name!r} takes no settings, "
                    f"but {sorted(values)[0]!r} is set"
                )
            return None
        return validate_owned(MODES_TABLE, self.name, model, values or {})

    def build(
        self,
        session: HostSession,
        values: Mapping[str, Any] | None = None,
        *,
        label: str | None = None,
    ) -> object:
        """The mode object for ``session``, built with its validated settings.

        :param label: how an error names the mode (default ``mode 'name'``).
        :raises PluginError: the factory does not take the arguments it is called with, or
            raises something other than a :class:`~ctxmodes.errors.CtxmodesError`; one line
            naming the mode (and where the factory raised).
        """
        settings = self.validate_settings(values)
        arguments: tuple[object, ...] = (session,) if settings is None else (session, settings)
        named = label if label is not None else f"mode {self.name!r}"
        self._check_factory_takes(arguments, named)
        try:
            return self.factory(*arguments)
        except CtxmodesError:
            raise
        except Exception as exc:
            raise PluginError(f"{named} failed to start: {plugin_failure(exc)}") from exc

    def _check_factory_takes(self, arguments: tuple[object, ...], label: str) -> None:
        import inspect  # only for a mode being activated, never for listing modes

        try:
            signature = inspect.signature(self.factory)
        except (TypeError, ValueError):
            return  # a callable without a signature: its call says what is wrong
        try:
            signature.bind(*arguments)
        except TypeError:
            takes = ", ".join(signature.parameters)
            given = "session" if len(arguments) == 1 else "session, settings"
            declares = "no settings" if len(arguments) == 1 else "settings"
            name = getattr(self.factory, "__name__", repr(self.factory))
            raise PluginError(
                f"{label}: its factory {name} takes ({takes}), but is called with ({given}) "
                f"since the mode declares {declares}"
            ) from None


class _DuplicateMode(PluginError):
    """Two plugins declare one mode name (the message names both)."""


class InstalledMode(NamedTuple):
    """A registered mode and where it came from."""

    spec: ModeSpec
    plugin_name: str
    distribution: str | None


def mode_plugin_name(mode_name: str) -> str:
    """The plugin-manager name an active mode object is registered under."""
    return f"ctxmodes-mode:{mode_name}"


def missing_mode_words(name: str, loaded: Iterable[str], unloaded: Mapping[str, str]) -> str:
    """Why mode ``name`` is not among the ``loaded`` modes, in one line.

    A plugin that is not loaded declares nothing, so which modes it would provide is not
    known; an installed plugin called like the mode (as each built-in mode's is) is the
    likely provider, and the words say why it is not loaded and which settings change that.
    Otherwise the mode is unknown: the words list the loaded modes and any plugin not loaded
    (``unloaded``: plugin name → status), as ``ctxmodes modes`` lists them.
    """
    from ctxmodes.plugin_selection import not_loaded_words

    if name in unloaded:
        return f"no loaded plugin provides mode {name!r}; {not_loaded_words(name, unloaded[name])}"
    words = f"unknown mode {name!r}; installed modes: {', '.join(sorted(loaded)) or 'none'}"
    if unloaded:
        plugins = ", ".join(f"{plugin} ({unloaded[plugin]})" for plugin in sorted(unloaded))
        words += f"; plugins not loaded: {plugins}"
    return words


class ModeRegistry:
    """Every mode the plugins of one plugin manager declare, by name, and the installed
    plugins that were not loaded (so that a mode one of them may provide is not called
    unknown)."""

    def __init__(
        self, modes: dict[str, InstalledMode], unloaded: Mapping[str, str] | None = None
    ) -> None:
        """:param unloaded: plugin name → why it is not loaded (its selection status,
        ``"blocked"`` or ``"not allowed"``)."""
        self._modes = modes
        self._unloaded = dict(unloaded or {})

    @classmethod
    def from_plugin_manager(
        cls, pm: pluggy.PluginManager, distributions: dict[str, str] | None = None
    ) -> ModeRegistry:
        """Collect the modes every registered plugin declares.

        :param distributions: plugin name → distribution name, for ``ctxmodes modes``.
        """
        from ctxmodes.plugins import CtxPluginManager, each_plugin

        unloaded = pm.not_loaded() if isinstance(pm, CtxPluginManager) else None
        return cls.from_callers(each_plugin(pm, REGISTER_MODES), distributions, unloaded)

    @classmethod
    def from_callers(
        cls,
        callers: Iterable[tuple[str, Callable[..., None]]],
        distributions: dict[str, str] | None = None,
        unloaded: Mapping[str, str] | None = None,
    ) -> ModeRegistry:
        """Collect the modes declared through ``callers``: ``(plugin name, caller)`` of each
        plugin's ``ctx_register_modes``, called with ``register=``.

        :param unloaded: the installed plugins that were not loaded, with their status.
        """
        modes: dict[str, InstalledMode] = {}
        dists = distributions or {}
        for plugin_name, call in callers:

            def register(spec: ModeSpec, plugin_name: str = plugin_name) -> None:
                previous = modes.get(spec.name)
                if previous is not None:
                    raise _DuplicateMode(
                        f"mode {spec.name!r} is registered twice: by plugin "
                        f"{previous.plugin_name!r} and by plugin {plugin_name!r}"
                    )
                modes[spec.name] = InstalledMode(spec, plugin_name, dists.get(plugin_name))

            try:
                call(register=register)
            except _DuplicateMode:
                raise
            except PluginError as exc:
                raise PluginError(f"plugin {plugin_name!r}: {exc}") from None
            except Exception as exc:
                raise PluginError(
                    f"plugin {plugin_name!r}: {REGISTER_MODES} failed: {plugin_failure(exc)}"
                ) from exc
        return cls(modes, unloaded)

    def __iter__(self) -> Iterator[InstalledMode]:
        return iter(sorted(self._modes.values(), key=lambda m: m.spec.name))

    def __contains__(self, name: object) -> bool:
        return name in self._modes

    def names(self) -> list[str]:
        return sorted(self._modes)

    def provider_not_loaded(self, name: str) -> bool:
        """Whether mode ``name`` is likely provided by an installed plugin that is not loaded
        (one called like the mode, blocked or left out of the allow list)."""
        return name not in self._modes and name in self._unloaded

    def get(self, name: str, *, where: str | None = None) -> InstalledMode:
        """The installed mode called ``name``.

        :raises ConfigError: no loaded plugin declares it, in one line after ``where`` (the
            setting that named it, when given): see :func:`missing_mode_words`.
        """
        try:
            return self._modes[name]
        except KeyError:
            message = missing_mode_words(name, self.names(), self._unloaded)
            prefix = f"{where}: " if where is not None else ""
            raise ConfigError(prefix + message) from None

    def activate(
        self,
        pm: pluggy.PluginManager,
        name: str,
        session: HostSession,
        settings: Mapping[str, Any] | None = None,
    ) -> object:
        """Build mode ``name`` for ``session`` and register it so its hooks fire.

        The previous active mode object, if any, must have been deactivated first.

        :param settings: the mode's ``[modes.<name>]`` table, validated by its
            :attr:`ModeSpec.settings` model.
        :raises ConfigError: the settings do not validate.

        :raises PluginError: the mode object has a ``ctx_*`` method that is not a valid hook
            implementation (unmarked, misspelled, or taking an argument the hook lacks).
        """
        import pluggy

        from ctxmodes.plugin_checks import check_plugin

        installed = self.get(name)
        label = f"mode {name!r} (plugin {installed.plugin_name!r})"
        plugin = installed.spec.build(session, settings, label=label)
        check_plugin(pm, plugin, label)
        try:
            pm.register(plugin, name=mode_plugin_name(name))
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginError(f"{label} could not be activated: {exc}") from None
        return plugin

    @staticmethod
    def deactivate(pm: pluggy.PluginManager, name: str) -> None:
        """Unregister the active object of mode ``name`` (a no-op when there is none)."""
        plugin = pm.get_plugin(mode_plugin_name(name))
        if plugin is not None:
            pm.unregister(plugin)
