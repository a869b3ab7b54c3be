"""``AgentHost``: the process-level owner of sessions — plugins, mode, model, UI — and the
session replacement sequence.

Starting a session: its mode is chosen (:func:`ctxmodes.session_mode.choose_mode`: the mode
the file records or implies, the configured default for a new one, another only when asked
for and confirmed), the mode object is built for it and registered, tools and commands are
collected, the model, thinking level and mode are recorded (a file that lacks the mode entry
gets it with its first append), then ``ctx_session_start``.

Replacing it (``/new``, ``/resume``, ``/fork``) follows Pi: plugins may keep the current
session (``ctx_session_before_switch``, ``ctx_session_before_fork``), then the target session
is prepared first (a bad file or entry fails before anything is torn down), then the current run is
aborted and waited for, ``ctx_session_shutdown`` runs, the mode object is unregistered and
the old store closed — from here on its command contexts and navigation capability are
stale — and the new session starts with ``ctx_session_start``. Closing the host is the same
with reason ``quit`` and no successor. The new store takes its ids and timestamps from the
same :class:`~ctxmodes.session.ids.IdentitySource` as the store it replaces.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ctxmodes.config import MODES_TABLE
from ctxmodes.errors import CtxmodesError, SessionCwdMissingError
from ctxmodes.events import (
    ForkRequest,
    SessionShutdownReason,
    SessionStartReason,
    SessionSwitchRequest,
)
from ctxmodes.hooks import HookRelay
from ctxmodes.host.command_context import ForkOutcome
from ctxmodes.host.errors import SessionBusyError, SessionChangeCancelled
from ctxmodes.host.listeners import Listeners
from ctxmodes.host.navigator import editor_text_of
from ctxmodes.host.options import HostOptions
from ctxmodes.host.records import Listener
from ctxmodes.host.session import AgentSession
from ctxmodes.modes import ModeRegistry, mode_plugin_name
from ctxmodes.plugins import CtxPluginManager, make_configured_plugin_manager
from ctxmodes.session.ids import PI_IDENTITY, IdentitySource
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.paths import resolve_path
from ctxmodes.session.writer import Durability
from ctxmodes.session_mode import (
    ModeRecord,
    ModeRequest,
    SessionMode,
    choose_mode,
    describe_change,
    record_mode,
)
from ctxmodes.ui import HeadlessUI

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.config import Settings
    from ctxmodes.hostapi import UserInterface
    from ctxmodes.providers.base import Provider
    from ctxmodes.providers.registry import ProviderRegistry
    from ctxmodes.providers.request_settings import ProviderRetrySettings
    from ctxmodes.resources import LoadedResources, ResourceLoader
    from ctxmodes.session.models import SessionEntry

#: Pi's refusal of a fork from an entry that does not exist, or before one that is not a
#: user message.
INVALID_FORK_ENTRY: Final = "Invalid entry ID for forking"
NOT_SAVED_MESSAGE = (
    "This session has not been saved yet. Wait for the first assistant response before "
    "cloning or forking it."
)


def _configured_provider(
    pm: pluggy.PluginManager, settings: Settings, session_model: str | None
) -> tuple[Provider | None, str | None]:
    """The provider of ``session_model`` when the catalog has it and it has credentials,
    else of the settings' model, else of the model Pi would start on
    (:func:`~ctxmodes.providers.initial_model.initial_model`; ``None``: no model has
    credentials); and the thinking level the model's spec asks for (``provider/id:high``)."""
    request_settings = settings.retry.provider
    if session_model is not None:
        provider = _usable_provider(pm, session_model, request_settings)
        if provider is not None:
            return provider, None
    if settings.model:
        return resolve_configured(pm, settings.model, request_settings, typed=True)
    from ctxmodes.providers.initial_model import initial_model
    from ctxmodes.providers.registry import registry_from_plugin_manager

    registry = registry_from_plugin_manager(pm)
    picked = initial_model(registry.models)
    if picked is None:
        return None, None
    return _resolve_in(registry, picked.ref, request_settings)


def _usable_provider(
    pm: pluggy.PluginManager, spec: str, request_settings: ProviderRetrySettings
) -> Provider | None:
    """The provider of the model ``spec`` names when it can be used here (the catalog has
    it, its provider has credentials); ``None`` otherwise."""
    try:
        return resolve_configured(pm, spec, request_settings)[0]
    except CtxmodesError:
        return None


def resolve_configured(
    pm: pluggy.PluginManager,
    spec: str,
    request_settings: ProviderRetrySettings,
    *,
    typed: bool = False,
) -> tuple[Provider, str | None]:
    """The provider of the model ``spec`` names, with the configured request settings, and
    the thinking level its ``:<level>`` suffix asks for; ``typed``: a spec a user typed,
    read as Pi's ``--model`` reads it (a pattern), where a recorded one names its model
    exactly.

    :raises CtxmodesError: the model is unknown or its provider has no credentials.
    """
    from ctxmodes.providers.registry import registry_from_plugin_manager

    registry = registry_from_plugin_manager(pm)
    if typed:
        spec, level = registry.read_model_option(spec)
        return _resolve_in(registry, spec, request_settings)[0], level
    return _resolve_in(registry, spec, request_settings)


def _resolve_in(
    registry: ProviderRegistry, spec: str, request_settings: ProviderRetrySettings
) -> tuple[Provider, str | None]:
    """:func:`resolve_configured` with a registry already built."""
    provider = registry.resolve(spec)
    _use_request_settings(provider, request_settings)
    return provider, registry.thinking_suffix(spec)[1]


def _use_request_settings(provider: Provider | None, settings: ProviderRetrySettings) -> None:
    """Time and retry ``provider``'s requests as ``settings`` say, where it sends requests
    of its own (a scripted or a plugin's model may not; a session without a model has none)."""
    configure = getattr(provider, "use_request_settings", None)
    if callable(configure):
        configure(settings)


class AgentHost:
    """Runs one session at a time and replaces it on request (see the module docstring).

    :param mode: the configured default: the mode of a new session, and of a session file
        that records none and shows no mode's records; ``None`` runs without any mode
        (sessions then report ``"off"``, and no mode is recorded).
    :param mode_settings: mode name → its ``[modes.<name>]`` table.
    :param mode_request: a mode asked for explicitly for the first session (``--mode``);
        unless confirmed, starting an existing session of another mode is refused with
        :class:`~ctxmodes.session_mode.ModeChangeNotConfirmed`.
    :param confirm_hint: how to confirm a mode change, for that refusal.
    :param resources: loads each session's context files, system prompt files, templates
        and skills for its working directory; ``None`` loads none.
    :raises ConfigError: ``mode`` is not installed, or its settings do not validate.
    """

    def __init__(
        self,
        *,
        pm: pluggy.PluginManager,
        provider: Provider | None = None,
        ui: UserInterface | None = None,
        mode: str | None = "off",
        options: HostOptions | None = None,
        durability: Durability = Durability.FSYNC,
        mode_settings: Mapping[str, Mapping[str, Any]] | None = None,
        mode_request: ModeRequest | None = None,
        confirm_hint: str = "confirm the switch to continue",
        resources: ResourceLoader | None = None,
    ) -> None:
        self._pm = pm
        self._resources = resources
        distributions = pm.distributions() if isinstance(pm, CtxPluginManager) else None
        self._registry = ModeRegistry.from_plugin_manager(pm, distributions)
        self._mode_settings: Mapping[str, Mapping[str, Any]] = mode_settings or {}
        # Fail before any session opens: an unknown mode, or a [modes.<name>] table that names
        # no installed mode or does not validate (a session may switch to any mode later; not
        # to one whose plugin is not loaded, so that blocking a plugin takes nothing more).
        # A default whose plugin is not loaded (blocked, or left out of the allow list) is
        # refused, in the registry's words, only by a session that needs it: one asking for
        # no mode of its own (--mode, or the mode a session records, stands in for it).
        if mode is not None and not self._registry.provider_not_loaded(mode):
            self._registry.get(mode).spec.validate_settings(self._mode_settings.get(mode))
        if mode_request is not None:  # asked for by name, so needed whatever the session holds
            self._registry.get(mode_request.name)
        for name, table in self._mode_settings.items():
            if name != mode and not self._registry.provider_not_loaded(name):
                where = f"[{MODES_TABLE}.{name}]"
                self._registry.get(name, where=where).spec.validate_settings(table)
        self._mode = mode
        self._mode_request = mode_request
        self._confirm_hint = confirm_hint
        self._provider = provider
        self._ui: UserInterface = ui if ui is not None else HeadlessUI()
        self._options = options if options is not None else HostOptions()
        self._durability = durability
        self._listeners = Listeners()
        self._lock = threading.RLock()
        self._session: AgentSession | None = None
        #: Called with the working directory of a session about to replace the current one,
        #: once nothing can keep the current one any more: a front end reads the settings
        #: there again and gives them to the host (:meth:`reload_settings`), so that the new
        #: session starts with them, as Pi rebuilds its runtime, settings and all, for
        #: every session that replaces another (``/new``, ``/resume``, ``/fork`` …).
        self.before_replacement: Callable[[Path], None] | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        provider: Provider | None = None,
        ui: UserInterface | None = None,
        options: HostOptions | None = None,
        plugins: Sequence[object] = (),
        mode_request: ModeRequest | None = None,
        confirm_hint: str = "confirm the switch to continue",
        resources: ResourceLoader | None = None,
        session_model: str | None = None,
    ) -> AgentHost:
        """A host for the effective settings: their plugin selection, default mode, model
        (unless ``provider`` is given), durability and, unless ``options`` are given, the
        host options they set (:meth:`HostOptions.of_settings`).

        :param session_model: the ``provider/model-id`` an existing session last used. As
            Pi restores a session's model, it is used in place of the settings' model when
            the catalog has it and its provider has credentials.
        """
        pm = make_configured_plugin_manager(settings, plugins=plugins)
        if options is None:
            options = HostOptions.of_settings(settings)
        if provider is None:
            provider, level = _configured_provider(pm, settings, session_model)
            if options.requested_thinking_level is None and level is not None:
                options = dataclasses.replace(options, requested_thinking_level=level)
        return cls(
            pm=pm,
            provider=provider,
            ui=ui,
            mode=settings.mode,
            options=options,
            durability=Durability(settings.durability),
            mode_settings=settings.modes,
            mode_request=mode_request,
            confirm_hint=confirm_hint,
            resources=resources,
        )

    # ================================================================ state

    @property
    def session(self) -> AgentSession:
        """The current session.

        While another thread replaces the session (``/new``, ``/resume``, ``/fork``), this
        waits for the replacement instead of seeing neither.

        :raises CtxmodesError: no session was started, or the host was closed.
        """
        session = self._session
        if session is None:
            with self._lock:
                session = self._session
        if session is None:
            raise CtxmodesError("the host has no current session")
        return session

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        return self._pm

    @property
    def mode_name(self) -> str:
        return self._mode or "off"

    @property
    def durability(self) -> Durability:
        return self._durability

    @property
    def provider(self) -> Provider | None:
        """The model the next session starts with (``None``: none was configured)."""
        return self._provider

    @property
    def agent_dir(self) -> Path:
        """The agent directory whose ``trust.json`` and resources this host's sessions
        follow: its resource loader's, else Pi's (``$PI_CODING_AGENT_DIR``)."""
        if self._resources is not None:
            return self._resources.agent_dir
        from ctxmodes.session import paths

        return paths.agent_dir()

    def mode_names(self) -> list[str]:
        return self._registry.names()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive the records of every session this host runs, current and future."""
        return self._listeners.subscribe(listener)

    # ================================================================ sessions

    def create_session_manager(
        self,
        cwd: Path,
        session_file: Path | None = None,
        *,
        identity: IdentitySource = PI_IDENTITY,
    ) -> SessionManager:
        """A store for a new session of ``cwd`` in Pi's directory for it, or for the file at
        ``session_file`` (opened when it exists, created there otherwise)."""
        if session_file is not None:
            return SessionManager.open(session_file, durability=self._durability, identity=identity)
        return SessionManager.create(cwd, durability=self._durability, identity=identity)

    def start(
        self, manager: SessionManager, reason: SessionStartReason = "startup"
    ) -> AgentSession:
        """Start the first session on ``manager``; if it cannot start (its mode needs a
        confirmation, a plugin fails), ``manager`` is closed.

        :raises CtxmodesError: a session is already running (replace it instead).
        """
        with self._lock:
            if self._session is not None:
                raise CtxmodesError("a session is already running; replace it instead")
            try:
                return self._open(manager, reason, self._load_resources(Path(manager.cwd)))
            except BaseException:
                manager.close()
                raise

    def new_session(self, parent_session: str | None = None) -> AgentSession:
        """Continue in a new, empty session of the same directory and mode; its header
        names ``parent_session`` when given (Pi's ``newSession({parentSession})``).

        :raises SessionChangeCancelled: a plugin kept the current session.
        """
        self._decide_trust_here()
        with self._lock:
            self._check_switch(SessionSwitchRequest("new"))
            current = self.session.session_manager
            if current.is_persisted():
                manager = SessionManager.create(
                    current.cwd,
                    current.session_dir,
                    durability=self._durability,
                    identity=current.identity,
                    parent_session=parent_session,
                )
            else:
                manager = SessionManager.in_memory(
                    current.cwd, identity=current.identity, parent_session=parent_session
                )
            return self._replace(manager, "new", "new", self._keep_mode())

    def resume_session(self, path: Path, *, cwd: Path | None = None) -> AgentSession:
        """Replace the current session by the one stored at ``path`` (``/resume FILE``), run
        in the working directory it records, or in ``cwd`` when given.

        :raises SessionCwdMissingError: the directory it records is gone (name another).
        :raises CtxmodesError: no session file there.
        :raises SessionChangeCancelled: a plugin kept the current session.
        """
        with self._lock:
            target = path.resolve()
            if not target.is_file():
                raise CtxmodesError(f"no session file at {path}")
            self._check_switch(SessionSwitchRequest("resume", str(target)))
            return self._resume(target, cwd)

    def switch_session(self, path: str | Path, *, cwd: Path | None = None) -> AgentSession:
        """Replace the current session by the one at ``path`` as Pi's ``switchSession``
        (RPC ``switch_session``) opens it: a relative path is taken from the process's
        working directory, and where no file is, a new session starts that will be
        written there (in the process's working directory, at its first message). ``cwd``
        is as :meth:`resume_session`'s.

        :raises SessionCwdMissingError: the directory the session records is gone.
        :raises CtxmodesError: ``path`` is a directory, or the file is not a session.
        :raises SessionChangeCancelled: a plugin kept the current session (asked first, as
            Pi asks).
        """
        with self._lock:
            target = Path(resolve_path(path))
            self._check_switch(SessionSwitchRequest("resume", str(target)))
            if target.is_dir():
                raise CtxmodesError(f"{target} is a directory, not a session file")
            return self._resume(target, cwd)

    def import_session(self, path: str | Path, *, cwd: Path | None = None) -> AgentSession:
        """Continue in a copy of the session file at ``path``, as Pi's ``importFromJsonl``
        makes it: copied into this session's directory under its own name (``-1``, ``-2`` …
        before the extension when that name is taken; a file already there is opened where
        it is), then resumed. Plugins are asked first, about the copy's path
        (``ctx_session_before_switch``), and nothing is copied when one keeps the session; a
        copy that cannot be opened is removed again. ``cwd`` is as :meth:`resume_session`'s.

        :raises SessionCwdMissingError: the directory the session records is gone.
        :raises CtxmodesError: no file at ``path`` (Pi's ``File not found: …``), the session
            is kept in memory, the copy could not be made, or it is not a session.
        :raises SessionChangeCancelled: a plugin kept the current session.
        """
        with self._lock:
            source = Path(resolve_path(path))
            if not source.is_file():
                raise CtxmodesError(f"File not found: {source}")
            directory = self.session.session_manager.session_dir
            if directory is None:
                raise CtxmodesError(
                    "This session is kept in memory: there is no directory to import into"
                )
            target = directory / source.name
            stored = target.resolve() == source.resolve()
            suffix = 1
            while not stored and target.exists():
                target = directory / f"{source.stem}-{suffix}{source.suffix}"
                suffix += 1
            self._check_switch(SessionSwitchRequest("resume", str(target)))
            if stored:
                return self._resume(target, cwd)
            made = False
            try:
                directory.mkdir(parents=True, exist_ok=True)
                # "x": never over a file that appeared meanwhile (Pi's COPYFILE_EXCL).
                with source.open("rb") as original, target.open("xb") as copy:
                    made = True
                    shutil.copyfileobj(original, copy)
                manager = self._open_stored(target, self.session.session_manager, cwd)
            except (OSError, CtxmodesError) as error:
                # A copy cut short (a full disk) or that cannot be opened (not a session,
                # its directory gone) is not left behind in the session directory.
                if made:
                    target.unlink(missing_ok=True)
                if isinstance(error, OSError):
                    reason = error.strerror or str(error)
                    raise CtxmodesError(f"Could not copy {source} to {target}: {reason}") from None
                raise
            return self._continue_in(manager)

    def fork_session(
        self, entry_id: str | None, position: Literal["before", "at"] | None = None
    ) -> ForkOutcome:
        """Continue in a new session branched before the user message ``entry_id`` (its text
        goes back to the editor) or at any other entry; ``None``: at the leaf.

        With a ``position``, as Pi's fork: ``"before"`` (RPC ``fork``) only before a user
        message, ``"at"`` at any entry. Plugins are asked first, as Pi asks its extensions,
        so a fork a plugin cancels is cancelled even from an entry that does not exist.

        :raises SessionChangeCancelled: a plugin kept the current session.
        :raises CtxmodesError: no entry ``entry_id`` (Pi's :data:`INVALID_FORK_ENTRY` with a
            ``position``), or it is not a user message to fork before.
        """
        self._decide_trust_here()
        with self._lock:
            current = self.session.session_manager
            if entry_id is None and position is None:
                request = ForkRequest(current.get_leaf_id(), "at")
            else:
                request = ForkRequest(entry_id, position or _position_of(current, entry_id))
            if self.session.vetoes_fork(request):
                raise SessionChangeCancelled("A plugin cancelled the fork")
            if position is None:
                target_leaf, editor_text = self._fork_target(current, entry_id)
            else:
                target_leaf, editor_text = _pi_fork_target(current, request)
            manager = self._branched(current, target_leaf)
            return ForkOutcome(
                self._replace(manager, "fork", "fork", self._keep_mode()), editor_text
            )

    def reload_resources(self) -> LoadedResources:
        """Read the current session's skills, prompt templates, context files (``AGENTS.md``
        …) and system prompt files again, as Pi's ``/reload`` does, and rebuild the system
        prompt from them; the directory's trust decision stands. Plugins keep their state:
        a plugin is a Python entry point, not a file to load again, so only its tools and
        commands are collected again. Returns what is loaded now (its ``warnings`` too);
        without a resource loader nothing is read and the session's resources stay.

        :raises SessionBusyError: the agent works, compacts or summarizes.
        """
        with self._lock:
            session = self.session
            if not session.is_idle():
                raise SessionBusyError("Wait for the agent to finish before reloading.")
            if self._resources is not None:
                session.replace_resources(self._resources.load(session.cwd))
            return session.resources

    def describe_mode_change(self, name: str) -> str | None:
        """One line on what switching the current session to mode ``name`` changes
        (``None``: it already runs in ``name``).

        :raises ConfigError: ``name`` is not installed.
        """
        with self._lock:
            self._registry.get(name)
            if name == self.mode_name:
                return None
            manager = self.session.session_manager
            return describe_change(manager, self._registry, self.mode_name, name)

    def switch_mode(self, name: str) -> None:
        """Shut the current mode object down and activate ``name`` for the same session
        (both hooks with reason ``reload``, reaching only the mode objects), and record the
        change in the session. The caller has had the change confirmed
        (:meth:`describe_mode_change`)."""
        with self._lock:
            self._registry.get(name)
            session = self.session
            self._wait_idle(session)
            changed = name != self._mode
            if self._mode is not None:
                old = self._pm.get_plugin(mode_plugin_name(self._mode))
                if old is not None:
                    session_relay = HookRelay.for_plugin(self._pm, session, old)
                    session.call_hook(session_relay.session_shutdown, "reload")
                ModeRegistry.deactivate(self._pm, self._mode)
            self._mode = name
            plugin = self._registry.activate(self._pm, name, session, self._mode_settings.get(name))
            session.set_mode_name(name)
            manager = session.session_manager
            if changed and not manager.read_only:
                # Recorded now, replacing a record still waiting for the first append.
                manager.before_next_append(None)
                settings = dict(self._mode_settings.get(name, {}))
                record_mode(manager, ModeRecord(mode=name, settings=settings))
            session.refresh_registrations()
            session.call_hook(
                HookRelay.for_plugin(self._pm, session, plugin).session_start, "reload"
            )

    def model_provider(self, spec: str) -> tuple[Provider, str | None]:
        """The provider of the model ``spec`` names, sending its requests as configured
        (Pi's ``retry.provider``), for :meth:`switch_model`; and the thinking level its
        ``:<level>`` suffix asks for.

        :raises CtxmodesError: the model is unknown or its provider has no credentials.
        """
        return resolve_configured(self._pm, spec, self._options.retry.provider)

    def switch_model(self, provider: Provider, thinking_level: str | None = None) -> None:
        """Use ``provider`` for the current session from its next request on, at
        ``thinking_level`` if given (see :meth:`AgentSession.set_provider`), and for later
        sessions; the previous provider is closed once no request uses it."""
        with self._lock:
            previous = self._provider

            def release() -> None:
                if previous is not None and previous is not provider:
                    previous.close()

            self.session.set_provider(provider, thinking_level, on_replaced=release)
            self._provider = provider

    def set_thinking_level(self, level: str) -> None:
        """Change the current session's thinking level (see
        :meth:`AgentSession.set_thinking_level`); later sessions start with it too."""
        with self._lock:
            self.session.set_thinking_level(level)
            self._options = self._options.with_thinking_level(level)

    def change_options(self, change: Callable[[HostOptions], HostOptions]) -> None:
        """Apply ``change`` to the options the current session runs with (see
        :meth:`AgentSession.change_options`) and to those of the sessions that replace it
        (``/new``, ``/resume``, ``/fork``). Nothing is written to any settings file."""
        with self._lock:
            self.session.change_options(change)
            self._options = change(self._options)

    def reload_settings(self, before: Settings, after: Settings) -> None:
        """Take the configuration read again (``/reload``) as Pi's running session takes
        its settings read again (:meth:`HostOptions.with_settings_reloaded`): the current
        session from now on, with its model's requests timed and retried as ``after`` says
        (Pi's ``retry.provider``), and the sessions that replace it. Values this run changed
        stand. Nothing is written to any settings file.

        :param before: the configuration the options were made from (or last reloaded).
        """
        with self._lock:
            self.session.change_options(
                lambda options: options.with_settings_reloaded(before, after)
            )
            self._options = self._options.with_settings_reloaded(before, after, later_sessions=True)
            _use_request_settings(self._provider, self._options.retry.provider)

    def close(self) -> None:
        """Shut the current session down (reason ``quit``) and release the model."""
        current = self._session
        if current is not None:
            # What the session runs may be replacing it (``/new``), which takes this lock:
            # it settles first, where waiting for it while holding the lock never ends.
            with contextlib.suppress(SessionBusyError):  # called from inside that run
                current.quiesce()
        with self._lock:
            if self._session is not None:
                self._retire("quit")
            if self._provider is not None:
                self._provider.close()

    # ================================================================ internals

    def _keep_mode(self) -> ModeRequest | None:
        """The request that keeps the current mode for a session that replaces the current
        one (``/new``, ``/fork``)."""
        return None if self._mode is None else ModeRequest(self._mode, confirmed=True)

    def _choose_mode(self, manager: SessionManager, request: ModeRequest | None) -> SessionMode:
        assert self._mode is not None
        return choose_mode(
            manager,
            self._registry,
            default=self._mode,
            configured=self._mode_settings,
            request=request,
            how_to_confirm=self._confirm_hint,
        )

    def _open(
        self,
        manager: SessionManager,
        reason: SessionStartReason,
        resources: LoadedResources | None,
        chosen: SessionMode | None = None,
    ) -> AgentSession:
        if self._mode is not None:
            if chosen is None:
                # The command line's request is for the first session only.
                request, self._mode_request = self._mode_request, None
                chosen = self._choose_mode(manager, request)
            self._mode = chosen.name
            if chosen.needs_record and not manager.read_only:
                record = chosen.as_record()
                manager.before_next_append(lambda: record_mode(manager, record))
        session = AgentSession(
            manager=manager,
            pm=self._pm,
            provider=self._provider,
            cwd=Path(manager.cwd),
            ui=self._ui,
            mode_name=self.mode_name,
            options=self._options,
            listeners=self._listeners,
            controller=self,
            resources=resources,
        )
        if chosen is not None:
            self._registry.activate(self._pm, chosen.name, session, chosen.settings)
        self._session = session
        try:
            session.start(reason)
        except BaseException:
            self._session = None
            manager.before_next_append(None)
            if self._mode is not None:
                ModeRegistry.deactivate(self._pm, self._mode)
            raise
        if chosen is not None and chosen.change is not None:
            session.ui.notify(chosen.change, "warning")
        return session

    def _retire(self, reason: SessionShutdownReason) -> None:
        session = self.session
        try:
            session.shutdown(reason)
        finally:
            if self._mode is not None:
                ModeRegistry.deactivate(self._pm, self._mode)
            session.session_manager.close()
            self._session = None

    def _replace(
        self,
        manager: SessionManager,
        shutdown_reason: SessionShutdownReason,
        start_reason: SessionStartReason,
        request: ModeRequest | None = None,
        model: Provider | None = None,
    ) -> AgentSession:
        """Replace the current session with one on ``manager`` (running on ``model`` from
        now on, when given)."""
        chosen: SessionMode | None = None
        try:
            self._wait_idle(self.session)
            if self._mode is not None:
                # A session that cannot start in its mode fails before the current one ends.
                chosen = self._choose_mode(manager, request)
            resources = self._prepare_replacement(Path(manager.cwd))
        except BaseException:
            manager.close()
            if model is not None:
                model.close()
            raise
        self._retire(shutdown_reason)
        if model is not None:
            previous, self._provider = self._provider, model
            if previous is not None:
                previous.close()
        return self._open(manager, start_reason, resources, chosen)

    def _decide_trust_here(self) -> None:
        """Decide whether the current directory's project is trusted, for a session about to
        replace the current one there, before this host is locked: a project that gained
        files needing trust during the run is asked about (see
        :class:`~ctxmodes.resources.trust.TrustResolver`), and the question waits for the
        user, which nothing waiting for this host should do meanwhile."""
        if self._resources is not None:
            self._resources.trust.is_trusted(self.session.cwd)

    def _load_resources(self, cwd: Path) -> LoadedResources | None:
        return self._resources.load(cwd) if self._resources is not None else None

    def _prepare_replacement(self, cwd: Path) -> LoadedResources | None:
        """What a session about to replace the current one in ``cwd`` needs before the
        current one is let go: its resources, which fail it (a settings file there that is no
        longer JSON) while the current one can still go on, then the settings read there
        again (:attr:`before_replacement`)."""
        resources = self._load_resources(cwd)
        if self.before_replacement is not None:
            self.before_replacement(cwd)
        return resources

    def _recorded(self, manager: SessionManager) -> Provider | None:
        """The provider of the model ``manager``'s session last used, when it is not the
        current one and can be used here."""
        recorded = manager.context_model()
        info = None if self._provider is None else self._provider.info
        if recorded is None or (info is not None and f"{info.provider}/{info.id}" == recorded):
            return None
        return _usable_provider(self._pm, recorded, self._options.retry.provider)

    def _wait_idle(self, session: AgentSession) -> None:
        if session.is_streaming() and not session.is_busy_elsewhere():
            raise SessionBusyError("cannot replace the session from inside its own run")
        session.quiesce()

    def _resume(self, target: Path, cwd: Path | None) -> AgentSession:
        current = self.session.session_manager
        if current.session_file is not None and target.resolve() == current.session_file.resolve():
            _require_directory(cwd or current.cwd, current, current)  # before letting go
            where = cwd or Path(current.cwd)
            resources = self._prepare_replacement(where)
            # Our own store holds the file's lock: let go of it first.
            self._retire("resume")
            return self._open(self._open_stored(target, current, cwd), "resume", resources)
        return self._continue_in(self._open_stored(target, current, cwd))

    def _continue_in(self, manager: SessionManager) -> AgentSession:
        """Replace the current session with ``manager``'s stored one. As Pi's switchSession:
        the resumed session runs on the model it last used, when that one can be used
        here."""
        return self._replace(manager, "resume", "resume", model=self._recorded(manager))

    def _open_stored(
        self, path: Path, current: SessionManager, cwd: Path | None = None
    ) -> SessionManager:
        """The session at ``path`` (a new one when no file is there), run in ``cwd`` when
        given, else in the directory it records, refused in Pi's words when that is gone."""
        manager = SessionManager.open(
            path, durability=self._durability, identity=current.identity, cwd_override=cwd
        )
        try:
            _require_directory(manager.cwd, manager, current)
        except SessionCwdMissingError:
            manager.close()
            raise
        return manager

    def _check_switch(self, request: SessionSwitchRequest) -> None:
        if self.session.vetoes_switch(request):
            raise SessionChangeCancelled("A plugin cancelled the switch to another session")

    def _fork_target(
        self, manager: SessionManager, entry_id: str | None
    ) -> tuple[str | None, str | None]:
        """Where the fork's leaf is, and the editor text: before a user message (its text
        goes to the editor), else at the entry (the current leaf without one)."""
        if entry_id is None:
            return manager.get_leaf_id(), None
        entry = manager.get_entry(entry_id)
        if entry is None:
            raise CtxmodesError(f"Entry {entry_id} not found")
        text = _forks_before(entry)
        if text is not None:
            return manager.get_parent_id(entry_id), text
        return entry_id, None

    def _branched(self, current: SessionManager, leaf_id: str | None) -> SessionManager:
        parent = current.session_file
        identity = current.identity
        if not current.is_persisted():
            copy = SessionManager.in_memory(
                current.cwd, entries=list(current.get_entries()), identity=identity
            )
            if leaf_id is None:
                return SessionManager.in_memory(current.cwd, identity=identity)
            copy.create_branched_session(leaf_id)
            return copy
        if parent is None or not parent.exists():
            raise CtxmodesError(NOT_SAVED_MESSAGE)
        if leaf_id is None:
            return SessionManager.create(
                current.cwd,
                current.session_dir,
                parent_session=str(parent),
                durability=self._durability,
                identity=identity,
            )
        # As Pi, the fork is made from what the file holds, before the current run is
        # aborted (whose last answer then stays in the old session only).
        source = SessionManager.open(
            parent,
            current.session_dir,
            read_only=True,
            durability=self._durability,
            identity=identity,
        )
        try:
            source.create_branched_session(leaf_id)
        except BaseException:
            source.close()
            raise
        return source


def _require_directory(
    cwd: str | os.PathLike[str], opened: SessionManager, current: SessionManager
) -> None:
    """:raises SessionCwdMissingError: ``cwd``, where ``opened`` is to run, is no directory
    (``current``'s is offered instead)."""
    if not Path(cwd).is_dir():
        raise SessionCwdMissingError(str(opened.session_file), os.fspath(cwd), current.cwd)


def _position_of(manager: SessionManager, entry_id: str | None) -> Literal["before", "at"]:
    """Where ctxmodes' ``/fork ENTRY`` branches: before a user message, at any other entry;
    before an entry that does not exist, Pi's default (the fork fails once asked)."""
    entry = None if entry_id is None else manager.get_entry(entry_id)
    return "before" if entry is None or _forks_before(entry) is not None else "at"


def _pi_fork_target(manager: SessionManager, request: ForkRequest) -> tuple[str | None, str | None]:
    """Where Pi's fork of ``request`` puts the new leaf, and the editor text: before a user
    message (its text) or at the entry.

    :raises CtxmodesError: Pi's :data:`INVALID_FORK_ENTRY`: no such entry, or not a user
        message to fork before.
    """
    entry = None if request.entry_id is None else manager.get_entry(request.entry_id)
    if entry is None:
        raise CtxmodesError(INVALID_FORK_ENTRY)
    if request.position == "at":
        return entry.id, None
    text = _forks_before(entry)
    if text is None:
        raise CtxmodesError(INVALID_FORK_ENTRY)
    return manager.get_parent_id(entry.id), text


def _forks_before(entry: SessionEntry) -> str | None:
    """The text a fork from ``entry`` puts back in the editor when it branches before the
    entry (a user's message), ``None`` when it branches at it."""
    text = editor_text_of(entry)
    return text if text is not None and entry.type == "message" else None
