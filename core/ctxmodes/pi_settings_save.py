"""Saving a choice the user makes while a session runs in Pi's global ``settings.json``,
as Pi saves it, so that the next start of ctxmodes, and of Pi, begins from it.

Pi's way, kept here byte for byte: under the file's lock (proper-lockfile's protocol, see
:mod:`ctxmodes.file_lock`), the file as it is now is read (a BOM dropped) and brought to the
current format by Pi's own migrations (``queueMode`` → ``steeringMode`` and the like), the
changed keys are set in it (a nested key such as ``compaction.enabled`` inside its object,
the object's other keys kept), and the whole is written as ``JSON.stringify(settings, null,
2)``, with no newline at its end. Every other key stays as the file had it, including those
another process saved while this one ran.

Unlike Pi, the new text replaces the file only once it is whole (a crash halfway leaves the
old file), and a file that cannot be read as JSON now is left as it is and the save refused,
where Pi skips the save only when the file was unreadable at its start.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.errors import ConfigError
from ctxmodes.file_lock import pi_lock
from ctxmodes.file_replace import replacing
from ctxmodes.session import codec

if TYPE_CHECKING:
    from ctxmodes.hostapi import NotifyLevel

__all__ = ["REMOVE", "Change", "save_choice", "save_pi_settings", "settings_path"]

#: A change's value that removes the key, as Pi's setter given ``undefined`` does.
REMOVE: Final = object()

#: One key to set: its path (``("hideThinkingBlock",)``, ``("compaction", "enabled")``) and
#: its value (:data:`REMOVE` to remove it).
Change = tuple[tuple[str, ...], object]

# Pi retries its lock ten times, 20 ms apart; a little longer here is as safe and kinder.
_LOCK_TIMEOUT_S: Final = 1.0


def settings_path() -> Path:
    """Pi's global settings file: ``settings.json`` in Pi's agent directory."""
    from ctxmodes.session.paths import agent_dir

    return agent_dir() / "settings.json"


def save_pi_settings(changes: Sequence[Change], path: Path | None = None) -> None:
    """Set each change's key in Pi's global settings file, or in ``path`` (see the module).

    :raises ConfigError: the file cannot be read or written, is not a JSON object, holds a
        value that is not an object where a change sets a key inside one, or stays locked;
        the message names the file, and the file is left as it was.
    """
    target = settings_path() if path is None else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with pi_lock(target, timeout_s=_LOCK_TIMEOUT_S, busy=ConfigError):
            settings = _migrated(_read(target))
            for keys, value in changes:
                _set(target, settings, keys, value)
            with replacing(target, durable=True) as out:
                out.write(codec.dumps_indented(settings))
    except OSError as exc:
        raise ConfigError(f"cannot save {target}: {exc.strerror or exc}") from None


def save_choice(
    changes: Sequence[Change],
    report: Callable[[str, NotifyLevel], None],
    origins: Mapping[str, str] | None = None,
) -> bool:
    """Save a choice the running session has taken already: a failure only costs the next
    start its value, so it is one error line for ``report`` rather than an error. Given
    the configuration's ``origins`` (``config show``'s sources), a saved key that another
    source sets over Pi's global file is one warning line naming that source, which the
    next start takes instead. Answers whether the choice was saved."""
    try:
        save_pi_settings(changes)
    except ConfigError as exc:
        report(f"Not saved for the next start: {exc}", "error")
        return False
    overriding = {_set_over_the_file(".".join(keys), origins or {}) for keys, _ in changes}
    for source, setting in sorted(over for over in overriding if over is not None):
        report(f"Saved, but {source} sets {setting}, which the next start takes", "warning")
    return True


def _set_over_the_file(pi_key: str, origins: Mapping[str, str]) -> tuple[str, str] | None:
    """The source and the setting that decide, at a start, what ``pi_key`` of the global
    file would (a Pi file's setting by Pi's key): ``None`` when only that file or the
    default does."""
    from ctxmodes.config import DEFAULT_SOURCE
    from ctxmodes.pi_settings import HONOURED

    setting = "model" if pi_key in ("defaultProvider", "defaultModel") else HONOURED[pi_key][0]
    source = origins.get(setting, DEFAULT_SOURCE)
    if source == DEFAULT_SOURCE or source.startswith(f"{settings_path()} ("):
        return None
    if source == "environment":
        return "the environment", setting
    # A trusted project's .pi/settings.json, named with Pi's key: "PATH (Pi's KEY)".
    path, pi_named, key = source.partition(" (Pi's ")
    return (path, key.removesuffix(")")) if pi_named else (source, setting)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    try:
        value = codec.loads(text.removeprefix("\ufeff"))
    except ValueError as exc:
        raise ConfigError(f"cannot save {path}: it is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"cannot save {path}: Pi's settings must be a JSON object")
    return value


def _set(path: Path, settings: dict[str, Any], keys: tuple[str, ...], value: object) -> None:
    *outer, last = keys
    table = settings
    for key in outer:
        inner = table.get(key)
        if inner is None:  # absent or null: Pi starts the object afresh
            inner = table[key] = {}
        if not isinstance(inner, dict):
            raise ConfigError(f"cannot save {path}: {key} is not an object")
        table = inner
    if value is REMOVE:
        table.pop(last, None)
    else:
        table[last] = value


def _migrated(settings: dict[str, Any]) -> dict[str, Any]:
    """The file's settings after Pi's ``migrateSettings``: older keys in their current
    form, each moved key going to the end of its object, as JavaScript's would."""
    if "queueMode" in settings and "steeringMode" not in settings:
        settings["steeringMode"] = settings.pop("queueMode")
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    skills = settings.get("skills")
    if isinstance(skills, dict):
        if "enableSkillCommands" in skills and "enableSkillCommands" not in settings:
            settings["enableSkillCommands"] = skills["enableSkillCommands"]
        directories = skills.get("customDirectories")
        if isinstance(directories, list) and directories:
            settings["skills"] = directories
        else:
            del settings["skills"]
    retry = settings.get("retry")
    if isinstance(retry, dict):
        provider = retry.get("provider")
        provider = provider if isinstance(provider, dict) else None
        delay = retry.get("maxDelayMs")
        if _is_number(delay) and (provider is None or provider.get("maxRetryDelayMs") is None):
            retry["provider"] = {**(provider or {}), "maxRetryDelayMs": delay}
        retry.pop("maxDelayMs", None)
    return settings


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
