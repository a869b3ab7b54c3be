"""Where settings come from: the configuration files and the environment, read but not validated.

:mod:`ctxmodes.config` validates what is read here with its pydantic models. This module
imports no pydantic, so that the one setting every command-line start needs, which plugins
to load, can be read cheaply (:func:`read_plugin_lists`).

The project's file (:func:`project_config_file`) is read only when the project is trusted
(:mod:`ctxmodes.resources.trust`): a cloned repository must not redirect a provider, and the
key sent with it, or run a command configured as a key, without the user's say.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
#: Whether a working directory is trusted (its project file loads).
TrustCheck = Callable[[Path], bool]


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    override = env.get(CONFIG_DIR_ENV)
    if override:
        return Path(override) / USER_FILE
    import platformdirs  # only needed when no override is given

    return platformdirs.user_config_path("ctxmodes") / USER_FILE


@dataclass(frozen=True, slots=True)
class Sources:
    """The layers read, lowest precedence first, and the project file left out because
    the project is not trusted (``None`` when nothing was left out)."""

    layers: list[Layer] = field(default_factory=list)
    skipped: Path | None = None


def read_sources(
    directory: Path, environ: Mapping[str, str], trusted: TrustCheck | None = None
) -> Sources:
    """The user file, the project file (when ``trusted(directory)``) and the environment,
    lowest precedence first; a source that sets nothing is left out. ``trusted`` is asked
    only when the directory has a project file; by default a saved decision or
    ``defaultProjectTrust`` decides, and an undecided project is not trusted.

    :raises ConfigError: a file is unreadable or not TOML, naming it.
    """
    layers: list[Layer] = []
    user_path = user_config_path(environ)
    if user_path.is_file():
        layers.append((str(user_path), _read_toml(user_path)))
    skipped = None
    project_file = project_config_file(directory)
    if project_file is not None:
        if trusted is None:
            # Only now: the trust store's module costs a start without a project file nothing.
            from ctxmodes.resources.trust import trusted_without_asking

            trusted = trusted_without_asking
        if trusted(directory):
            project = _project_layer(project_file)
            if project is not None:
                layers.append(project)
        else:
            skipped = project_file
    env_values = {
        key: environ[name]
        for key, name in (("mode", MODE_ENV), ("model", MODEL_ENV))
        if environ.get(name)
    }
    if env_values:
        layers.append(("environment", env_values))
    return Sources(layers, skipped)


def read_plugin_lists(
    *, cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[list[str] | None, list[str]] | None:
    """The configured ``plugins.allow`` and ``plugins.block``, merged as
    :func:`ctxmodes.config.load_settings` merges them, without validating anything else.
    The project's file counts when a saved decision or ``defaultProjectTrust`` trusts the
    project (nobody is asked, and an undecided project is not trusted).

    :return: ``(allow, block)``; ``None`` when a ``[plugins]`` table holds anything but lists
        of strings under those two keys, so that the caller validates in full and reports
        the error the settings model words.
    :raises ConfigError: a file is unreadable or not TOML.
    """
    env = os.environ if environ is None else environ
    lists: dict[str, list[str] | None] = {"allow": None, "block": []}
    sources = read_sources(Path.cwd() if cwd is None else cwd, env)
    for _source, values in sources.layers:
        table = values.get("plugins", {})
        if not isinstance(table, dict) or not set(table) <= set(lists):
            return None
        for key, value in table.items():
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                return None
            lists[key] = value
    return lists["allow"], lists["block"] or []


def project_config_file(directory: Path) -> Path | None:
    """The project's configuration file in ``directory``: ``.ctxmodes.toml``, else a
    ``pyproject.toml`` with a ``[tool.ctxmodes]`` table (or one that is not valid TOML, which
    cannot be told apart and so waits for trust too); ``None`` when there is neither."""
    dedicated = directory / PROJECT_FILE
    if dedicated.is_file():
        return dedicated
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        table = _read_toml(pyproject).get("tool", {}).get("ctxmodes")
    except ConfigError:
        return pyproject
    return pyproject if isinstance(table, dict) else None


def _project_layer(path: Path) -> Layer | None:
    values = _read_toml(path)
    if path.name == PROJECT_FILE:
        return str(path), values
    table = values.get("tool", {}).get("ctxmodes")
    return (f"{path} [tool.ctxmodes]", table) if isinstance(table, dict) else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
