"""The settings of Pi's own that ctxmodes honours.

Pi reads ``settings.json`` in its agent directory and, for a trusted project,
``.pi/settings.json``, whose keys override the global ones (nested objects key by key, see
:mod:`ctxmodes.pi_settings_merge`). A Pi user's choices there carry over wherever ctxmodes
has the same setting: they are the lowest layer of ctxmodes' settings
(:func:`ctxmodes.config.load_settings`), so ctxmodes' own files, the environment and the
command line all override them. :data:`HONOURED` lists them.

Each value is read as Pi reads it: a project's ``null`` replaces the global value as any
other value does, and a key whose merged value is ``null`` is not set by Pi's files (so
ctxmodes' own default applies); Pi's legacy keys (``queueMode``, ``retry.maxDelayMs``,
``skills.enableSkillCommands``) count as Pi migrates them, in their own file; a
``defaultThinkingLevel`` that is no level starts sessions at ``off``, a delivery mode other
than ``all`` is ``one-at-a-time``, a ``/tree`` filter Pi does not know is ``default`` and
a ``doubleEscapeAction`` other than ``tree`` and ``none`` is ``fork``, as in Pi;
``httpIdleTimeoutMs`` is the request timeout where ``retry.provider.timeoutMs`` is not set.
A value of the wrong JSON type, or a file that is not a JSON object, is an error naming
the file and the key, even a global value the project's file replaces.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Literal, get_args

from ctxmodes.config_sources import Layer, TrustCheck, project_trusted
from ctxmodes.errors import ConfigError
from ctxmodes.pi_settings_merge import Leaf, Tree, combined, found, leaf
from ctxmodes.session.jsvalues import js_to_number, js_trim
from ctxmodes.thinking_levels import THINKING_LEVELS

__all__ = ["HONOURED", "apply_http_proxy", "described", "pi_layers", "read_settings_file"]

#: "strings": an array of strings.
JsonKind = Literal["boolean", "number", "string", "strings"]

#: Pi's key → the ctxmodes key it sets, and the JSON type Pi gives it. Inside a table the
#: ctxmodes key is spelled as Pi spells it (both spellings are accepted), so that a value
#: ctxmodes refuses is reported under Pi's name.
HONOURED: dict[str, tuple[str, JsonKind]] = {
    "defaultThinkingLevel": ("thinking_level", "string"),
    "steeringMode": ("steering_mode", "string"),
    "followUpMode": ("follow_up_mode", "string"),
    "compaction.enabled": ("compaction.enabled", "boolean"),
    "compaction.reserveTokens": ("compaction.reserveTokens", "number"),
    "compaction.keepRecentTokens": ("compaction.keepRecentTokens", "number"),
    "branchSummary.reserveTokens": ("branch_summary.reserveTokens", "number"),
    "branchSummary.skipPrompt": ("branch_summary.skipPrompt", "boolean"),
    "retry.enabled": ("retry.enabled", "boolean"),
    "retry.maxRetries": ("retry.maxRetries", "number"),
    "retry.baseDelayMs": ("retry.baseDelayMs", "number"),
    "retry.provider.timeoutMs": ("retry.provider.timeoutMs", "number"),
    "retry.provider.maxRetries": ("retry.provider.maxRetries", "number"),
    "retry.provider.maxRetryDelayMs": ("retry.provider.maxRetryDelayMs", "number"),
    "enableSkillCommands": ("terminal.skill_commands", "boolean"),
    "treeFilterMode": ("terminal.tree_filter", "string"),
    "doubleEscapeAction": ("terminal.double_escape_action", "string"),
    "externalEditor": ("terminal.external_editor", "string"),
    "autocompleteMaxVisible": ("terminal.completion_rows", "number"),
    "quietStartup": ("terminal.quiet_startup", "boolean"),
    "hideThinkingBlock": ("terminal.hide_thinking", "boolean"),
    "showCacheMissNotices": ("terminal.cache_miss_notices", "boolean"),
    "warnings.anthropicExtraUsage": ("terminal.anthropic_extra_usage_warning", "boolean"),
    "images.blockImages": ("block_images", "boolean"),
    "images.autoResize": ("auto_resize_images", "boolean"),
    "sessionDir": ("session_dir", "string"),
    "enabledModels": ("enabled_models", "strings"),
    "defaultTools": ("default_tools", "strings"),
    **{
        f"thinkingBudgets.{level}": (f"thinking_budgets.{level}", "number")
        for level in ("minimal", "low", "medium", "high")
    },
    "shellPath": ("shell.path", "string"),
    "shellCommandPrefix": ("shell.command_prefix", "string"),
}
#: Pi's per-model startup thinking levels, by ``provider/model-id``.
_MODEL_LEVELS = "modelThinkingLevels"
#: Pi's startup model: both keys together name it.
_MODEL_KEYS = ("defaultProvider", "defaultModel")
#: Pi's legacy spellings, by the key its ``migrateSettings`` moves them to, and whether a
#: ``null`` there lets them count (and so be checked): ``queueMode`` counts when the same
#: file has no ``steeringMode`` at all, ``retry.maxDelayMs`` when
#: ``retry.provider.maxRetryDelayMs`` is unset or ``null``.
_LEGACY: dict[str, tuple[str, bool]] = {
    "steeringMode": ("queueMode", False),
    "retry.provider.maxRetryDelayMs": ("retry.maxDelayMs", True),
}
#: Pi's oldest spelling of ``enableSkillCommands``, inside a ``skills`` object (whose
#: ``customDirectories`` :mod:`ctxmodes.resources.settings_entries` reads): it counts when
#: the same file has no ``enableSkillCommands`` at all, as Pi migrates it.
_LEGACY_SKILL_COMMANDS = ("skills", "enableSkillCommands")
#: Pi's timeout of every HTTP request, used when the merged files have no
#: ``retry.provider.timeoutMs``: its layer goes below that key's.
_IDLE_TIMEOUT = "httpIdleTimeoutMs"
#: What Pi passes for no timeout (``0`` or ``"disabled"``): the longest 32-bit delay.
_NO_TIMEOUT_MS = 2**31 - 1
_TYPES: dict[JsonKind, tuple[type, ...]] = {
    "boolean": (bool,),
    "number": (int, float),
    "string": (str,),
}


#: Pi's proxy of every HTTP request, read from the global file only (as Pi reads it).
_HTTP_PROXY = "httpProxy"
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY")


def apply_http_proxy(environ: MutableMapping[str, str] | None = None) -> None:
    """Pi's ``httpProxy``, from the global ``settings.json``: the proxy of every request the
    process sends, set as ``HTTP_PROXY`` and ``HTTPS_PROXY`` where the environment has not
    set them (a variable already there wins, as in Pi; ``NO_PROXY`` still applies).

    :raises ConfigError: the file is not a JSON object, or the value not a string.
    """
    from ctxmodes.session.paths import agent_dir

    path = agent_dir() / "settings.json"
    proxy = _value(path, read_settings_file(path), _HTTP_PROXY, "string")
    if proxy is None or not proxy.strip():
        return
    target = os.environ if environ is None else environ
    for name in _PROXY_VARIABLES:
        target.setdefault(name, proxy.strip())


def pi_layers(directory: Path, trusted: TrustCheck | None = None) -> list[Layer]:
    """One layer per honoured key Pi's files give a value, read from the two files merged
    as Pi merges them (:mod:`ctxmodes.pi_settings_merge`), each named by the file and Pi's
    key that gave it; the startup model's is named by the file that gave the model id.
    ``trusted`` is asked only when the project has a ``.pi/settings.json`` (by default a
    saved decision or ``defaultProjectTrust`` decides).

    :raises ConfigError: a file that is not a JSON object, or a value of the wrong type,
        naming the file (and the key); a value the project's file replaces is checked too.
    """
    from ctxmodes.session.paths import agent_dir

    paths = [agent_dir() / "settings.json"]
    project = directory / ".pi" / "settings.json"
    if project.is_file() and project_trusted(directory, trusted):
        paths.append(project)
    files = [(path, read_settings_file(path)) for path in paths]
    for path, values in files:
        _check_file(path, values)
    tree = combined(files)
    # The idle timeout goes below retry.provider.timeoutMs, which wins where it is set.
    layers = _idle_timeout_layers(tree) + _model_layers(tree)
    for key, (target, kind) in HONOURED.items():
        given = leaf(tree, key)
        if given is None:
            continue
        set_by = given.legacy_key or key
        value, source = _as_pi_reads(key, _checked(given.path, set_by, given.value, kind), set_by)
        layers.append((f"{given.path} ({source})", _nested(target, value)))
    layers.extend(_model_thinking_levels(tree))
    return layers


def _check_file(path: Path, values: dict[str, Any]) -> None:
    """:raises ConfigError: a value of one file that has the wrong type, whether or not the
    other file replaces it: the file is the user's to mend."""
    for key, (_, kind) in HONOURED.items():
        _value(path, values, key, kind)
        if key in _LEGACY:
            legacy, after_null = _LEGACY[key]
            if after_null or not _has(values, key):
                _value(path, values, legacy, kind)
    for key in _MODEL_KEYS:
        _value(path, values, key, "string")
    if values.get(_IDLE_TIMEOUT) is not None:  # a null is refused only where it is in force
        _idle_timeout(path, values[_IDLE_TIMEOUT])
    _check_model_thinking_levels(path, values.get(_MODEL_LEVELS))
    table, key = _LEGACY_SKILL_COMMANDS
    if isinstance(values.get(table), dict) and key not in values:
        _value(path, values, f"{table}.{key}", "boolean")


def _model_layers(tree: Tree) -> list[Layer]:
    """The startup model's layer, when the merged files name both its provider and id."""
    provider, model = (leaf(tree, key) for key in _MODEL_KEYS)
    if provider is None or model is None or not provider.value or not model.value:
        return []
    source = f"{model.path} (Pi's defaultProvider and defaultModel)"
    return [(source, {"model": f"{provider.value}/{model.value}"})]


def _idle_timeout_layers(tree: Tree) -> list[Layer]:
    """The request timeout of Pi's merged ``httpIdleTimeoutMs``.

    :raises ConfigError: its merged value is ``null`` (a project's over a global value
        too), which Pi refuses at startup as it refuses any value it cannot read."""
    given = found(tree, _IDLE_TIMEOUT)
    if not isinstance(given, Leaf):
        return []  # unset (an object is refused when its file is checked)
    milliseconds, note = _idle_timeout(given.path, given.value)
    timeout = _nested(HONOURED["retry.provider.timeoutMs"][0], milliseconds)
    return [(f"{given.path} (Pi's {_IDLE_TIMEOUT}{note})", timeout)]


def _model_thinking_levels(tree: Tree) -> list[Layer]:
    """One layer per model of Pi's merged ``modelThinkingLevels`` (a project's object
    overrides the global one model by model, its ``null`` undoes all of them); a level Pi
    does not know is ``off``, as Pi clamps it."""
    levels = found(tree, _MODEL_LEVELS)
    if not isinstance(levels, dict):
        return []
    layers: list[Layer] = []
    for model, level in levels.items():
        if not isinstance(level, Leaf) or level.value is None:
            continue  # Pi's `modelThinkingLevels?.[model]` is then no level: the default's
        source = f"{level.path} (Pi's {_MODEL_LEVELS})"
        value = level.value
        if value not in THINKING_LEVELS:
            source = (
                f"{level.path} (Pi's {_MODEL_LEVELS} {json.dumps(value)} is no thinking level: off)"
            )
            value = "off"
        layers.append((source, {"model_thinking_levels": {model: value}}))
    return layers


def _check_model_thinking_levels(path: Path, levels: Any) -> None:
    """:raises ConfigError: the value is not an object of strings (or nulls)."""
    if levels is None:
        return
    if not isinstance(levels, dict):
        raise ConfigError(
            f'{path}: {_MODEL_LEVELS}: expected an object of levels by "provider/model-id", '
            f"got {described(levels)}"
        )
    for model, level in levels.items():
        if level is not None and not isinstance(level, str):
            raise ConfigError(
                f"{path}: {_MODEL_LEVELS}: {json.dumps(model)}: expected a thinking level, "
                f"got {described(level)}"
            )


def _idle_timeout(path: Path, value: Any) -> tuple[int, str]:
    """Pi's ``httpIdleTimeoutMs`` as its ``parseHttpIdleTimeoutMs`` reads it (a number of
    milliseconds or its text, ``0`` or ``"disabled"`` for none) and a note on how it was
    read.

    :raises ConfigError: a value Pi refuses too (it stops at startup on one), ``null`` and
        a blank text among them.
    """
    number = value
    if isinstance(value, str):
        # Pi trims the text and reads the rest with JavaScript's Number(): "0x10" is 16
        # milliseconds there, and "1_000" no number.
        text = js_trim(value)
        number = 0 if text.lower() == "disabled" else js_to_number(text) if text else None
    if (
        isinstance(number, bool)
        or not isinstance(number, int | float)
        or not math.isfinite(number)
        or number < 0
    ):
        raise ConfigError(
            f'{path}: {_IDLE_TIMEOUT}: expected milliseconds (0 or "disabled" for none), '
            f"got {described(value)}"
        )
    if math.floor(number) == 0:
        return _NO_TIMEOUT_MS, f" {json.dumps(value)}: no timeout"
    return math.floor(number), ""


def _has(values: dict[str, Any], key: str) -> bool:
    """Whether the dotted ``key`` is in the file at all, ``null`` or not."""
    *tables, leaf = key.split(".")
    table: Any = values
    for name in tables:
        table = table.get(name)
        if not isinstance(table, dict):
            return False
    return leaf in table


def _as_pi_reads(key: str, value: Any, set_by: str) -> tuple[Any, str]:
    """``value`` as Pi uses it, and the source's note naming Pi's key (and, for a value Pi
    reads as another, what it reads)."""
    note = f"Pi's {set_by}"
    if key == "defaultThinkingLevel" and value not in THINKING_LEVELS:
        # Pi clamps a level it does not know to the model's lowest, which is always off.
        return "off", f"{note} {json.dumps(value)} is no thinking level: off, as in Pi"
    if key in ("steeringMode", "followUpMode") and value not in ("all", "one-at-a-time"):
        # Pi delivers all at once only for "all".
        return "one-at-a-time", f"{note} {json.dumps(value)}: one-at-a-time, as in Pi"
    if key == "externalEditor" and not value.strip():
        # A blank command is none (``$VISUAL``, ``$EDITOR`` decide), over a lower file's too.
        return None, f"{note} {json.dumps(value)}: none, as in Pi"
    if key == "autocompleteMaxVisible" and not 3 <= value <= 20:
        # Pi's editor keeps the menu between 3 and 20 rows.
        rows = min(20, max(3, value))
        return rows, f"{note} {value}: {rows}, as in Pi"
    if key == "treeFilterMode":
        from ctxmodes.config import TreeFilter  # loaded: it is what calls this module

        if value not in get_args(TreeFilter):  # Pi's getTreeFilterMode reads it as default
            return "default", f"{note} {json.dumps(value)}: default, as in Pi"
    if key == "doubleEscapeAction" and value not in ("tree", "fork", "none"):
        # Pi's Esc Esc opens the tree for "tree", nothing for "none", the fork selector else.
        return "fork", f"{note} {json.dumps(value)}: fork, as in Pi"
    return value, note


def _value(path: Path, values: dict[str, Any], key: str, kind: JsonKind) -> Any:
    """The value at the dotted ``key``, ``None`` when unset or ``null`` (Pi's ``??``).

    :raises ConfigError: the value, or a table on the way to it, has the wrong type.
    """
    *tables, leaf = key.split(".")
    table = values
    for depth, name in enumerate(tables):
        inner = table.get(name)
        if inner is None:
            return None
        if not isinstance(inner, dict):
            where = ".".join(tables[: depth + 1])
            raise ConfigError(f"{path}: {where}: expected an object, got {described(inner)}")
        table = inner
    return _checked(path, key, table.get(leaf), kind)


def _checked(path: Path, key: str, value: Any, kind: JsonKind) -> Any:
    """``value`` as ctxmodes takes it (a whole float as an int), ``None`` for ``null``.

    :raises ConfigError: ``value`` has the wrong type, named as Pi's ``key`` in ``path``.
    """
    if value is None:
        return None
    if kind == "strings":
        return _strings(path, key, value)
    if (isinstance(value, bool) and kind != "boolean") or not isinstance(value, _TYPES[kind]):
        raise ConfigError(f"{path}: {key}: expected a {kind}, got {described(value)}")
    if isinstance(value, float):  # JSON has one number type; ctxmodes counts in whole ones
        if not value.is_integer():
            raise ConfigError(f"{path}: {key}: expected a whole number, got {value}")
        return int(value)
    return value


def _strings(path: Path, key: str, value: Any) -> list[str]:
    """:raises ConfigError: ``value`` is not an array of strings."""
    if not isinstance(value, list):
        raise ConfigError(f"{path}: {key}: expected an array of strings, got {described(value)}")
    for item in value:
        if not isinstance(item, str):
            raise ConfigError(
                f"{path}: {key}: expected an array of strings, got {described(item)} in it"
            )
    return value


def described(value: Any) -> str:
    """A JSON value as an error names it: its kind, and a scalar's value."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, str):
        return f"a string ({json.dumps(value)})"
    return f"a number ({value})"


def _nested(dotted: str, value: Any) -> dict[str, Any]:
    *tables, leaf = dotted.split(".")
    nested: dict[str, Any] = {leaf: value}
    for name in reversed(tables):
        nested = {name: nested}
    return nested


def read_settings_file(path: Path) -> dict[str, Any]:
    """The object of one of Pi's ``settings.json`` files (empty when there is none).

    :raises ConfigError: the file cannot be read, is not JSON or not an object.
    """
    if not path.is_file():
        return {}
    from ctxmodes.resources.text import read_text

    try:
        value = json.loads(read_text(path))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: Pi's settings must be a JSON object")
    return value
