"""The mode a session is managed by, as its file records it.

A managed session carries its mode, and the mode's settings, in a model-invisible ``custom``
entry (``customType`` :data:`MODE_ENTRY_TYPE`; Pi keeps such entries out of the context, so
the real Pi opens the file exactly as before). The latest one on the active branch is the
session's mode. The host appends one when a mode is first activated for a session and
whenever the mode (or its settings) change; a file that has none — written by the TypeScript
extension, by Pi, or by an older ctxmodes — gets one with its first append.

Such a file's mode is inferred from what it holds: every installed mode may declare a
recognizer (:attr:`ctxmodes.modes.ModeSpec.recognize`). Evidence only one mode writes (Tree's
archive manifests, Remote's encrypted results) beats evidence several modes write (window
markers); a file nobody claims has the configured default.

Changing a session's mode is explicit (:func:`choose_mode`): a request for another mode than
the session's is refused with a one-line description of what changes, unless it was
confirmed.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ctxmodes.errors import CtxmodesError

if TYPE_CHECKING:
    from ctxmodes.modes import ModeRegistry
    from ctxmodes.session.manager import SessionManager

#: ``customType`` of the entry recording a session's mode.
MODE_ENTRY_TYPE: Final = "ctxmodes-mode"

#: Where a session's mode came from.
ModeSource = Literal["recorded", "inferred", "default", "requested"]


class ModeRecord(BaseModel):
    """The ``data`` of a mode entry."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    protocol: Literal[1] = 1
    mode: str
    settings: dict[str, Any] = {}

    def to_data(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def recorded_mode(manager: SessionManager) -> ModeRecord | None:
    """The latest valid mode entry on the active branch (``None``: there is none).

    Reads the branch's type index and decodes only its ``custom`` entries, newest first.
    """
    types = manager.get_branch_types()
    ids: list[str] | None = None
    newest_first = range(len(types) - 1, -1, -1)
    for position in compress(newest_first, map(eq, reversed(types), repeat("custom"))):
        if ids is None:
            ids = manager.get_branch_ids()
        entry = manager.get_entry_json(ids[position])
        if entry is None or entry.get("customType") != MODE_ENTRY_TYPE:
            continue
        try:
            return ModeRecord.model_validate(entry.get("data"))
        except ValidationError:
            continue
    return None


def record_mode(manager: SessionManager, record: ModeRecord) -> str:
    """Append ``record`` as the session's mode entry; returns its id."""
    return manager.append_custom_entry(MODE_ENTRY_TYPE, record.to_data())


def infer_mode(manager: SessionManager, registry: ModeRegistry) -> str | None:
    """The installed mode whose records the file holds, for a file with no mode entry.

    ``None`` when no mode recognizes it. Exclusive evidence wins over shared evidence; among
    equals the first mode by name.
    """
    shared: str | None = None
    for installed in registry:
        recognize = installed.spec.recognize
        if recognize is None:
            continue
        evidence = recognize(manager)
        if evidence == "exclusive":
            return installed.spec.name
        if evidence == "shared" and shared is None:
            shared = installed.spec.name
    return shared


@dataclass(frozen=True, slots=True)
class SessionMode:
    """What manages a session: the mode, its settings table, and where they came from.

    :param change: the one-line description of the change when ``source`` is ``requested``
        and the session had another mode.
    """

    name: str
    settings: Mapping[str, Any]
    source: ModeSource
    record: ModeRecord | None
    change: str | None = None

    @property
    def needs_record(self) -> bool:
        """Whether the file lacks an entry saying exactly this."""
        return self.record is None or (
            self.record.mode != self.name or dict(self.record.settings) != dict(self.settings)
        )

    def as_record(self) -> ModeRecord:
        return ModeRecord(mode=self.name, settings=dict(self.settings))


@dataclass(frozen=True, slots=True)
class ModeRequest:
    """A mode asked for explicitly (``--mode``, ``/mode``), and whether the change of the
    session's mode it may imply is confirmed."""

    name: str
    confirmed: bool = False


class ModeChangeNotConfirmed(CtxmodesError):
    """A request would change a session's mode, and it was not confirmed.

    :param change: what changes, in one line.
    """

    def __init__(self, change: str, how_to_confirm: str) -> None:
        super().__init__(f"{change} ({how_to_confirm})")
        self.change = change


def session_mode(
    manager: SessionManager,
    registry: ModeRegistry,
    default: str,
    configured: Mapping[str, Mapping[str, Any]],
) -> SessionMode:
    """The mode the file says manages it: recorded, else inferred, else ``default``.

    Settings are the recorded ones with the configured ``[modes.<name>]`` values over them.
    A recorded mode that is not installed is an error naming it.
    """
    record = recorded_mode(manager)
    if record is not None:
        # Said from the file's side: the caller named no mode, or another one.
        registry.get(record.mode, where="the mode this session records")
        settings = {**record.settings, **configured.get(record.mode, {})}
        return SessionMode(record.mode, settings, "recorded", record)
    inferred = infer_mode(manager, registry) if manager.entry_count() else None
    name = inferred if inferred is not None else default
    return SessionMode(
        name, dict(configured.get(name, {})), "inferred" if inferred else "default", None
    )


def describe_change(
    manager: SessionManager, registry: ModeRegistry, current: str, requested: str
) -> str:
    """One line on what switching this session from ``current`` to ``requested`` changes."""
    told = registry.get(current).spec.switch_words(manager, requested)
    entering = f"{requested} manages the context from the next prompt"
    return f"switching this session from {current} to {requested}: " + (
        f"{told}; {entering}" if told else entering
    )


def choose_mode(
    manager: SessionManager,
    registry: ModeRegistry,
    *,
    default: str,
    configured: Mapping[str, Mapping[str, Any]],
    request: ModeRequest | None,
    how_to_confirm: str,
) -> SessionMode:
    """The mode to run ``manager``'s session with.

    A new session (no entries) takes the request, else ``default``. An existing one keeps
    its own mode (:func:`session_mode`) unless the request names another and is confirmed.

    :raises ModeChangeNotConfirmed: the request names another mode and is not confirmed.
    :raises ConfigError: a requested or recorded mode is not installed.
    """
    if request is not None:
        registry.get(request.name)
    if manager.entry_count() == 0:
        name = request.name if request is not None else default
        source: ModeSource = "requested" if request is not None else "default"
        return SessionMode(name, dict(configured.get(name, {})), source, None)
    own = session_mode(manager, registry, default, configured)
    if request is None or request.name == own.name:
        return own
    change = describe_change(manager, registry, own.name, request.name)
    if not request.confirmed:
        raise ModeChangeNotConfirmed(change, how_to_confirm)
    return SessionMode(
        request.name, dict(configured.get(request.name, {})), "requested", own.record, change
    )
