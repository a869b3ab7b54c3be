"""Project trust, as Pi 0.85 decides it.

A project's own resources (``.pi/settings.json``, ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md``,
``.pi/prompts``, ``.pi/skills``, ``.pi/themes``, ``.pi/extensions``, and ``.agents/skills``
in the working directory or an ancestor) are loaded only once the project is trusted: by
``--approve``/``--no-approve`` for one run, by the decision saved in the agent directory's
``trust.json`` for the folder or its nearest parent that has one, by the global
``defaultProjectTrust`` setting, or by asking the user (only where there is someone to ask).
A folder without such resources needs no decision. Context files do not depend on trust.

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

from ctxmodes.errors import ConfigError
from ctxmodes.providers.credential_store import pi_lock
from ctxmodes.resources.text import strip_bom
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
        f"Trust project folder?\n{cwd}\n\nThis allows ctxmodes to load .pi settings and "
        "resources (system prompt files, prompt templates and skills)."
    )


def has_trust_requiring_project_resources(cwd: str | Path, home: str | Path | None = None) -> bool:
    """True when ``cwd`` holds resources that wait for a trust decision (see the module)."""
    home_dir = _canonical(home if home is not None else os.environ.get("HOME") or Path.home())
    user_agent_skills = os.path.join(home_dir, ".agents", "skills")
    directory = _canonical(cwd)
    config = os.path.join(directory, CONFIG_DIR)
    if any(os.path.exists(os.path.join(config, entry)) for entry in TRUST_REQUIRING_ENTRIES):
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
    """One line telling that ``cwd``'s own resources were left out (``None`` if they were
    loaded or there are none)."""
    if trusted or not has_trust_requiring_project_resources(cwd):
        return None
    return (
        f"Note: the project files in {resolve_path(cwd)}/{CONFIG_DIR} were not loaded: the "
        "folder is not trusted (pass --approve to load them for this run)."
    )


@dataclass(frozen=True, slots=True)
class TrustChoice:
    """One answer to the trust question: its label, whether it trusts, what it saves
    (folder → decision, ``None`` removing a saved one)."""

    label: str
    trusted: bool
    updates: tuple[tuple[str, bool | None], ...] = ()


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
        with self._locked():
            data = self._read()
        directory = _canonical(cwd)
        while True:
            value = data.get(directory)
            if isinstance(value, bool):
                return value
            parent = os.path.dirname(directory)
            if parent == directory:
                return None
            directory = parent

    def set(self, cwd: str | Path, decision: bool | None) -> None:
        self.set_many([(str(cwd), decision)])

    def set_many(self, updates: Sequence[tuple[str, bool | None]]) -> None:
        with self._locked():
            data = self._read()
            for folder, decision in updates:
                key = _canonical(folder)
                if decision is None:
                    data.pop(key, None)
                else:
                    data[key] = decision
            ordered = {key: data[key] for key in sorted(data) if data[key] is not None}
            self.path.write_text(json.dumps(ordered, indent=2) + "\n", "utf-8")

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
    """

    store: ProjectTrustStore
    override: bool | None = None
    default: DefaultTrust = "ask"
    ask: AskTrust | None = None
    _decided: dict[str, bool] = field(default_factory=dict)

    def is_trusted(self, cwd: str | Path) -> bool:
        key = _canonical(cwd)
        if key not in self._decided:
            self._decided[key] = self._decide(cwd)
        return self._decided[key]

    def _decide(self, cwd: str | Path) -> bool:
        if self.override is not None:
            return self.override
        if not has_trust_requiring_project_resources(cwd):
            return True
        saved = self.store.get(cwd)
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
