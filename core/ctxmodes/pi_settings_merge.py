"""Pi's two ``settings.json`` files combined as Pi combines them.

Pi migrates each file on its own (its ``SettingsManager.migrateSettings``: ``queueMode``,
``skills.enableSkillCommands`` and ``retry.maxDelayMs`` move to their current keys), then
lays the project's object over the global one (its ``deepMergeObjects``): every key the
project sets replaces the global value, ``null`` included, and only where both values are
objects are they merged key by key. So a project's ``"retry": {"maxRetries": null}`` undoes
the global ``retry.maxRetries`` alone, and ``"retry": null`` the whole global table.

Every value that is not an object is kept as a :class:`Leaf`, which remembers the file it
came from and the legacy key a migration moved it from, so that ``ctxmodes config show``
names the file and Pi's key that gave a setting. The values are not checked here:
:mod:`ctxmodes.pi_settings` checks each file before combining them.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = ["Leaf", "Tree", "combined", "found", "leaf"]


@dataclass(frozen=True, slots=True)
class Leaf:
    """One value of a settings file that is not an object: ``null``, a scalar or an array."""

    value: Any
    #: The file that set it.
    path: Path
    #: Pi's legacy key the file spelled it with, when Pi's migration moved it.
    legacy_key: str | None = None


#: A settings object whose values are :class:`Leaf` objects or nested trees.
Tree = dict[str, Any]


def combined(files: Sequence[tuple[Path, dict[str, Any]]]) -> Tree:
    """The files' objects, lowest first, each migrated, merged as Pi merges them."""
    tree: Tree = {}
    for path, values in files:
        tree = _merged(tree, _migrated(_annotated(path, values)))
    return tree


def found(tree: Tree, key: str) -> Leaf | Tree | None:
    """What Pi's merged settings hold at the dotted ``key``: ``None`` when a name on the way
    is missing or names no object (Pi's ``settings.retry?.maxRetries`` is then undefined)."""
    node: Any = tree
    for name in key.split("."):
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
    return node  # type: ignore[no-any-return]


def leaf(tree: Tree, key: str) -> Leaf | None:
    """The value at the dotted ``key`` unless it is unset, ``null`` or an object."""
    node = found(tree, key)
    return node if isinstance(node, Leaf) and node.value is not None else None


def _annotated(path: Path, value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _annotated(path, inner) for key, inner in value.items()}
    return Leaf(value, path)


def _migrated(tree: Tree) -> Tree:
    """``tree`` as Pi's ``migrateSettings`` leaves one file, before any merge."""
    if "queueMode" in tree and "steeringMode" not in tree:
        tree["steeringMode"] = _moved(tree.pop("queueMode"), "queueMode")
    skills = tree.get("skills")
    if isinstance(skills, dict):
        # The object form of ``skills``: Pi lifts its ``enableSkillCommands`` (a null too)
        # unless the file has the current key, and keeps its folders as the array form.
        if "enableSkillCommands" in skills and "enableSkillCommands" not in tree:
            legacy = _moved(skills["enableSkillCommands"], "skills.enableSkillCommands")
            tree["enableSkillCommands"] = legacy
        folders = skills.get("customDirectories")
        if isinstance(folders, Leaf) and isinstance(folders.value, list) and folders.value:
            tree["skills"] = folders
        else:
            del tree["skills"]
    retry = tree.get("retry")
    if isinstance(retry, dict):
        delay = retry.pop("maxDelayMs", None)
        provider = retry.get("provider")
        provider = provider if isinstance(provider, dict) else None
        current = None if provider is None else provider.get("maxRetryDelayMs")
        current_unset = current is None or (isinstance(current, Leaf) and current.value is None)
        if isinstance(delay, Leaf) and _is_number(delay.value) and current_unset:
            moved = _moved(delay, "retry.maxDelayMs")
            retry["provider"] = {**(provider or {}), "maxRetryDelayMs": moved}
    return tree


def _moved(node: Any, legacy_key: str) -> Any:
    return replace(node, legacy_key=legacy_key) if isinstance(node, Leaf) else node


def _is_number(value: Any) -> bool:
    # JavaScript's typeof "number": a boolean is not one.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _merged(base: Tree, overrides: Tree) -> Tree:
    """Pi's ``deepMergeObjects``: JSON has no ``undefined``, so every key of ``overrides``
    replaces ``base``'s, ``null`` included, unless both are objects."""
    result = dict(base)
    for key, value in overrides.items():
        lower = base.get(key)
        if isinstance(lower, dict) and isinstance(value, dict):
            result[key] = _merged(lower, value)
        else:
            result[key] = value
    return result
