"""Project trust, as Pi 0.85 decides it.

A project's own resources (``.pi/settings.json``, ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md``,
``.pi/prompts``, ``.pi/skills``, ``.pi/themes``, ``.pi/extensions``, and ``.agents/skills``
in the working directory or an ancestor) and its ctxmodes configuration (``.ctxmodes.toml``
or ``[tool.ctxmodes]`` in its ``pyproject.toml``, see :mod:`ctxmodes.config_sources`) are
loaded only once the project is trusted: by
``--approve``/``--no-approve`` for one run, by the decision saved in the agent directory's
``trust.json`` for the folder or its nearest parent that has one, by the global
``defaultProjectTrust`` setting, or by asking the user (only where there is someone to ask).
A folder without such resources needs no decision. Context files do not depend on trust.
One :class:`TrustResolver` serves a whole run, settings and resources alike, so the user is
asked at most once. Everything fails closed: a trust store that cannot be read or parsed
leaves the project untrusted.

``trust.json`` and its lock are the same files Pi uses, so a decision taken in either
program holds in the other.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ctxmodes.config_sources import project_config_file
from ctxmodes.errors import ConfigError, CtxmodesError
from ctxmodes.file_lock import pi_lock
from ctxmodes.file_replace import replacing
from ctxmodes.resources.text import read_text, strip_bom
from ctxmodes.session import paths
from ctxmodes.session.paths import resolve_path

TRUST_FILE = "trust.json"
CONFIG_DIR = ".pi"
TRUST_REQUIRING_ENTRIES = (
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)
DefaultTrust = Literal["always", "never", "ask"]
#: How long to wait for another process's lock on ``trust.json``.
_LOCK_TIMEOUT_SECONDS = 1.0


def _canonical(path: str | Path) -> str:
    resolved = resolve_path(path)
    try:
        return os.path.realpath(resolved, strict=True)
    except OSError:
        return resolved


def trust_prompt_text(cwd: str | Path) -> str:
    """The question asked before a project's resources are loaded."""
    return (
        f"Trust project folder?\n{cwd}\n\nThis allows ctxmodes to load the project's "
        "configuration (.ctxmodes.toml: providers, keys, mode, plugins), its .pi settings "
        "and resources (system prompt files, prompt templates and skills)."
    )


def has_trust_requiring_project_resources(cwd: str | Path, home: str | Path | None = None) -> bool:
    """True when ``cwd`` holds resources that wait for a trust decision (see the module)."""
    home_dir = _canonical(home if home is not None else os.environ.get("HOME") or Path.home())
    user_agent_skills = os.path.join(home_dir, ".agents", "skills")
    directory = _canonical(cwd)
    if project_config_file(Path(directory)) is not None:
        return True
    if _has_pi_resources(directory):
        return True
    while True:
        skills = os.path.join(directory, ".agents", "skills")
        if skills != user_agent_skills and os.path.exists(skills):
            return True
        parent = os.path.dirname(directory)
        if parent == directory:
            return False
        directory = parent


def untrusted_notice(cwd: str | Path, trusted: bool) -> str | None:
    """One line telling that ``cwd``'s own configuration and resources were left out, and
    how to trust the folder (``None`` if they were loaded or there are none)."""
    if trusted or not has_trust_requiring_project_resources(cwd):
        return None
    directory = resolve_path(cwd)
    config = project_config_file(Path(directory))
    left_out = ", ".join(
        name
        for name, present in (
            (config.name if config is not None else "", config is not None),
            (f"{CONFIG_DIR}/", _has_pi_resources(directory)),
        )
        if present
    )
    return (
        f"Note: the project files in {directory} ({left_out or '.agents/skills'}) were not "
        f"loaded: {how_to_trust()}"
    )


def how_to_trust() -> str:
    """The end of a line saying something was left out for want of trust."""
    return (
        "the folder is not trusted (pass --approve for this run, or trust it when "
        "`ctxmodes chat` asks or with its /trust, which save it in "
        f"{paths.agent_dir() / TRUST_FILE}; /trust takes effect at the next start)."
    )


def _has_pi_resources(directory: str) -> bool:
    config = os.path.join(_canonical(directory), CONFIG_DIR)
    return any(os.path.exists(os.path.join(config, entry)) for entry in TRUST_REQUIRING_ENTRIES)


@dataclass(frozen=True, slots=True)
class TrustChoice:
    """One answer to the trust question: its label, whether it trusts, what it saves
    (folder → decision, ``None`` removing a saved one)."""

    label: str
    trusted: bool
    updates: tuple[tuple[str, bool | None], ...] = ()

    @property
    def saved_path(self) -> str | None:
        """The folder whose saved decision this choice is (Pi's ``savedPath``: the first
        folder it writes; ``None`` for a choice that saves nothing)."""
        return self.updates[0][0] if self.updates else None


@dataclass(frozen=True, slots=True)
class SavedTrust:
    """A decision found in ``trust.json``: the folder it was saved for (the working
    directory or the nearest parent that has one) and whether it trusts."""

    path: str
    trusted: bool


def trust_choices(cwd: str | Path, *, include_session_only: bool = True) -> list[TrustChoice]:
    """The answers offered, in Pi's order."""
    folder = _canonical(cwd)
    parent = os.path.dirname(folder)
    choices = [TrustChoice("Trust", True, ((folder, True),))]
    if parent != folder:
        choices.append(
            TrustChoice(f"Trust parent folder ({parent})", True, ((parent, True), (folder, None)))
        )
    if include_session_only:
        choices.append(TrustChoice("Trust (this session only)", True))
    choices.append(TrustChoice("Do not trust", False, ((folder, False),)))
    if include_session_only:
        choices.append(TrustChoice("Do not trust (this session only)", False))
    return choices


class ProjectTrustStore:
    """The saved decisions: ``<agent dir>/trust.json``, folder → ``true``/``false``."""

    def __init__(self, agent_dir: str | Path) -> None:
        self.path = Path(resolve_path(agent_dir)) / TRUST_FILE

    def get(self, cwd: str | Path) -> bool | None:
        """The decision saved for ``cwd`` or its nearest ancestor that has one."""
        entry = self.get_entry(cwd)
        return entry.trusted if entry is not None else None

    def get_entry(self, cwd: str | Path) -> SavedTrust | None:
        """The decision saved for ``cwd`` or its nearest ancestor that has one, with the
        folder it was saved for.

        :raises ConfigError: the file cannot be read, is not valid, or stays locked.
        """
        try:
            with self._locked():
                data = self._read()
        except OSError as exc:  # the agent directory or the lock cannot be made
            raise ConfigError(f"Failed to read trust store {self.path}: {exc}") from None
        directory = _canonical(cwd)
        while True:
            value = data.get(directory)
            if isinstance(value, bool):
                return SavedTrust(directory, value)
            parent = os.path.dirname(directory)
            if parent == directory:
                return None
            directory = parent

    def set(self, cwd: str | Path, decision: bool | None) -> None:
        self.set_many([(str(cwd), decision)])

    def set_many(self, updates: Sequence[tuple[str, bool | None]]) -> None:
        """Save each folder's decision (``None`` removes it), keeping the others; an
        unreadable file is left as it is rather than replaced.

        :raises ConfigError: the file cannot be read, is not valid, stays locked, or cannot
            be written.
        """
        try:
            with self._locked():
                data = self._read()
                for folder, decision in updates:
                    key = _canonical(folder)
                    if decision is None:
                        data.pop(key, None)
                    else:
                        data[key] = decision
                # As Pi writes it: keys sorted, other folders' nulls kept, and a folder name
                # in its own characters rather than \u escapes.
                ordered = {key: data[key] for key in sorted(data)}
                text = json.dumps(ordered, indent=2, ensure_ascii=False)
                with replacing(self.path, durable=True) as out:
                    out.write(text + "\n")
        except OSError as exc:
            raise ConfigError(f"Failed to write trust store {self.path}: {exc}") from None

    def _read(self) -> dict[str, bool | None]:
        if not self.path.exists():
            return {}
        try:
            parsed = json.loads(strip_bom(self.path.read_text("utf-8")))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"Failed to read trust store {self.path}: {exc}") from None
        if not isinstance(parsed, dict):
            raise ConfigError(f"Invalid trust store {self.path}: expected an object")
        for key, value in parsed.items():
            if value is not None and not isinstance(value, bool):
                raise ConfigError(
                    f"Invalid trust store {self.path}: value for {json.dumps(key)} must be "
                    "true, false, or null"
                )
        return parsed

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        # Pi's lock on the file (proper-lockfile's protocol); Pi gives up within a second.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return pi_lock(self.path, timeout_s=_LOCK_TIMEOUT_SECONDS)


#: Asks the user; gets the question and the choices, returns the one taken (``None``: none).
AskTrust = Callable[[str, Sequence[TrustChoice]], TrustChoice | None]


@dataclass
class TrustResolver:
    """Decides whether a working directory's project resources load (see the module).

    :ivar override: ``--approve`` (True) or ``--no-approve`` (False) for this run.
    :ivar default: the global ``defaultProjectTrust`` setting.
    :ivar ask: how to ask the user; ``None`` where nobody can be asked (then: not trusted).
    :ivar problems: why a saved decision could not be read (the folder was then not trusted).
    """

    store: ProjectTrustStore
    override: bool | None = None
    default: DefaultTrust = "ask"
    ask: AskTrust | None = None
    problems: list[str] = field(default_factory=list)
    _decided: dict[str, bool] = field(default_factory=dict)

    def is_trusted(self, cwd: str | Path) -> bool:
        key = _canonical(cwd)
        if key in self._decided:
            return self._decided[key]
        if self.override is None and not has_trust_requiring_project_resources(cwd):
            # Nothing to trust yet, so nothing decided: files that appear during the run (a
            # checkout into the folder) are decided on when they are next read, as Pi decides
            # when it makes its runtime again, not taken as trusted without a word.
            return True
        self._decided[key] = self._decide(cwd)
        return self._decided[key]

    def _decide(self, cwd: str | Path) -> bool:
        if self.override is not None:
            return self.override
        try:
            saved = self.store.get(cwd)
        except CtxmodesError as exc:  # unreadable, invalid or locked: fail closed
            self.problems.append(f"{exc}; the project is not trusted")
            return False
        if saved is not None:
            return saved
        if self.default != "ask":
            return self.default == "always"
        if self.ask is None:
            return False
        choice = self.ask(trust_prompt_text(resolve_path(cwd)), trust_choices(cwd))
        if choice is None:
            return False
        if choice.updates:
            self.store.set_many(choice.updates)
        return choice.trusted


def default_project_trust(agent_dir: Path) -> DefaultTrust:
    """The ``defaultProjectTrust`` of the global ``settings.json`` (``"ask"`` when unset)."""
    settings_path = agent_dir / "settings.json"
    if not settings_path.is_file():
        return "ask"
    try:
        settings = json.loads(read_text(settings_path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{settings_path}: {exc}") from None
    value = settings.get("defaultProjectTrust") if isinstance(settings, dict) else None
    return value if value in ("always", "never") else "ask"


def default_resolver(
    *, approve: bool | None = None, ask: AskTrust | None = None, agent_dir: Path | None = None
) -> TrustResolver:
    """Pi's trust for Pi's agent directory: ``approve`` is ``--approve``/``--no-approve``,
    ``ask`` how to ask the user (``None``: nobody to ask), and the global settings'
    ``defaultProjectTrust`` applies.

    :raises ConfigError: the global ``settings.json`` is not valid JSON.
    """
    directory = agent_dir if agent_dir is not None else paths.agent_dir()
    return TrustResolver(
        ProjectTrustStore(directory),
        override=approve,
        default=default_project_trust(directory),
        ask=ask,
    )


def trusted_without_asking(cwd: Path) -> bool:
    """Trust as it stands when nobody can be asked: a saved decision or
    ``defaultProjectTrust``; an undecided folder, or any error reading them, is not
    trusted."""
    try:
        return default_resolver().is_trusted(cwd)
    except CtxmodesError:
        return False
