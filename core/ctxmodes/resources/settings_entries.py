"""Pi's ``skills`` and ``prompts`` settings: the extra folders and files one ``settings.json``
adds, and the patterns filtering them (see :mod:`ctxmodes.resources.entries`).

Each file counts on its own, as in Pi: the global file's entries are resolved against the
agent directory, a trusted project's against its ``.pi``. The legacy form of ``skills``, an
object whose ``customDirectories`` lists the folders, is read as Pi migrates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxmodes import pi_settings
from ctxmodes.errors import ConfigError

SKILLS_KEY = "skills"
PROMPTS_KEY = "prompts"
_LEGACY_SKILL_FOLDERS = "customDirectories"


@dataclass(frozen=True, slots=True)
class SettingsEntries:
    """The ``skills`` and ``prompts`` entries of one ``settings.json`` (empty when unset)."""

    skills: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()


def settings_entries(path: Path) -> SettingsEntries:
    """The entries of the settings file at ``path`` (none when there is no such file).

    :raises ConfigError: the file is not a JSON object, or an entry list is not an array of
        strings, naming the file and the key.
    """
    values = pi_settings.read_settings_file(path)
    skills = values.get(SKILLS_KEY)
    if isinstance(skills, dict):
        legacy = skills.get(_LEGACY_SKILL_FOLDERS)
        key = f"{SKILLS_KEY}.{_LEGACY_SKILL_FOLDERS}"
        skills = _strings(path, key, legacy) if isinstance(legacy, list) else ()
    else:
        skills = _strings(path, SKILLS_KEY, skills)
    return SettingsEntries(skills, _strings(path, PROMPTS_KEY, values.get(PROMPTS_KEY)))


def _strings(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ConfigError(
            f"{path}: {key}: expected an array of paths and patterns (strings), "
            f"got {pi_settings.described(value)}"
        )
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ConfigError(
                f"{path}: {key}[{index}]: expected a path or pattern (a string), "
                f"got {pi_settings.described(item)}"
            )
    return tuple(value)
