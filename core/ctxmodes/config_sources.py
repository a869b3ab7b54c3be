"""Where settings come from: the configuration files and the environment, read but not validated.

:mod:`ctxmodes.config` validates what is read here with its pydantic models. This module
imports no pydantic, so that the one setting every command-line start needs, which plugins
to load, can be read cheaply (:func:`read_plugin_lists`).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxmodes.errors import ConfigError

CONFIG_DIR_ENV = "CTXMODES_CONFIG_DIR"
MODE_ENV = "CTXMODES_MODE"
MODEL_ENV = "CTXMODES_MODEL"
PROJECT_FILE = ".ctxmodes.toml"
USER_FILE = "config.toml"

#: One source of settings: its name for messages and ``ctxmodes config``, and its raw values.
Layer = tuple[str, dict[str, Any]]


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    override = env.get(CONFIG_DIR_ENV)
    if override:
        return Path(override) / USER_FILE
    import platformdirs  # only needed when no override is given

    return platformdirs.user_config_path("ctxmodes") / USER_FILE


def read_layers(directory: Path, environ: Mapping[str, str]) -> list[Layer]:
    """The user file, the project file and the environment, lowest precedence first; a
    source that sets nothing is left out.

    :raises ConfigError: a file is unreadable or not TOML, naming it.
    """
    layers: list[Layer] = []
    user_path = user_config_path(environ)
    if user_path.is_file():
        layers.append((str(user_path), _read_toml(user_path)))
    project = _project_layer(directory)
    if project is not None:
        layers.append(project)
    env_values = {
        key: environ[name]
        for key, name in (("mode", MODE_ENV), ("model", MODEL_ENV))
        if environ.get(name)
    }
    if env_values:
        layers.append(("environment", env_values))
    return layers


def read_plugin_lists(
    *, cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[list[str] | None, list[str]] | None:
    """The configured ``plugins.allow`` and ``plugins.block``, merged as
    :func:`ctxmodes.config.load_settings` merges them, without validating anything else.

    :return: ``(allow, block)``; ``None`` when a ``[plugins]`` table holds anything but lists
        of strings under those two keys, so that the caller validates in full and reports
        the error the settings model words.
    :raises ConfigError: a file is unreadable or not TOML.
    """
    env = os.environ if environ is None else environ
    lists: dict[str, list[str] | None] = {"allow": None, "block": []}
    for _source, values in read_layers(Path.cwd() if cwd is None else cwd, env):
        table = values.get("plugins", {})
        if not isinstance(table, dict) or not set(table) <= set(lists):
            return None
        for key, value in table.items():
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                return None
            lists[key] = value
    return lists["allow"], lists["block"] or []


def _project_layer(directory: Path) -> Layer | None:
    dedicated = directory / PROJECT_FILE
    if dedicated.is_file():
        return str(dedicated), _read_toml(dedicated)
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("ctxmodes")
        if isinstance(table, dict):
            return f"{pyproject} [tool.ctxmodes]", table
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
