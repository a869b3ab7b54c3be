"""Where settings come from: the configuration files and the environment, read but not validated.

:mod:`ctxmodes.config` validates what is read here with its pydantic models. This module
imports no pydantic, so that what a command-line start needs, which plugins to load and
which mode is active, can be read cheaply (:func:`read_startup_settings`).

The project's file (:func:`project_config_file`) is read only when the project is trusted
(:mod:`ctxmodes.resources.trust`): a cloned repository must not redirect a provider, and the
key sent with it, or run a command configured as a key, without the user's say.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ctxmodes.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

#: The folder name of ctxmodes' files in the user's directories.
APP_NAME = "ctxmodes"
CONFIG_DIR_ENV = "CTXMODES_CONFIG_DIR"
#: The mode of a configuration that names none.
DEFAULT_MODE = "off"
MODE_ENV = "CTXMODES_MODE"
MODEL_ENV = "CTXMODES_MODEL"
PROJECT_FILE = ".ctxmodes.toml"
USER_FILE = "config.toml"

#: One source of settings: its name for messages and ``ctxmodes config``, and its raw values.
Layer = tuple[str, dict[str, Any]]
#: Whether a working directory is trusted (its project file loads).
TrustCheck = Callable[["Path"], bool]


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    return _as_path(_user_config_file(environ))


def _user_config_file(environ: Mapping[str, str] | None) -> str:
    env = os.environ if environ is None else environ
    override = env.get(CONFIG_DIR_ENV)
    return os.path.join(override or user_config_dir(), USER_FILE)


def user_config_dir() -> str:
    """ctxmodes' folder in the user's configuration directory, as platformdirs names it.

    Every start of the command line reads the user file, and importing platformdirs (with
    the tempfile module it needs) costs a tenth of a bare interpreter's start. So on Linux
    with an absolute ``HOME``, the usual case, the folder is named here by the XDG rule
    platformdirs follows there (an absolute ``XDG_CONFIG_HOME``, else ``~/.config``);
    everywhere else platformdirs answers. ``tests/core/test_config_sources.py`` holds the
    two to each other.
    """
    home = os.environ.get("HOME", "")
    if sys.platform == "linux" and posixpath.isabs(home) and not _may_be_android():
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        base = xdg if posixpath.isabs(xdg) else os.path.expanduser("~/.config")
        return os.path.join(base, APP_NAME)
    import platformdirs

    return platformdirs.user_config_dir(APP_NAME)


def _as_path(path: str | os.PathLike[str]) -> Path:
    # pathlib is imported when a path is handed out: a start without configuration files
    # (most of them) does without it.
    from pathlib import Path

    return Path(path)


def _may_be_android() -> bool:
    # platformdirs' own test before it looks for an Android app's folders.
    return hasattr(sys, "getandroidapilevel") or (
        os.environ.get("ANDROID_DATA") == "/data" and os.environ.get("ANDROID_ROOT") == "/system"
    )


class Sources(NamedTuple):
    """The layers read, lowest precedence first, and the project file left out because
    the project is not trusted (``None`` when nothing was left out)."""

    layers: list[Layer]
    skipped: Path | None = None


def read_sources(
    directory: str | os.PathLike[str], environ: Mapping[str, str], trusted: TrustCheck | None = None
) -> Sources:
    """The user file, the project file (when ``trusted(directory)``) and the environment,
    lowest precedence first; a source that sets nothing is left out. ``trusted`` is asked
    only when the directory has a project file; by default a saved decision or
    ``defaultProjectTrust`` decides, and an undecided project is not trusted.

    :raises ConfigError: a file is unreadable or not TOML, naming it.
    """
    layers: list[Layer] = []
    user_file = _user_config_file(environ)
    if os.path.isfile(user_file):
        layers.append((user_file, _read_toml(_as_path(user_file))))
    skipped = None
    project_file = project_config_file(directory)
    if project_file is not None:
        if project_trusted(_as_path(directory), trusted):
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


def project_trusted(directory: Path, trusted: TrustCheck | None) -> bool:
    """``trusted(directory)``; by default (``None``) a saved decision or
    ``defaultProjectTrust`` decides, nobody is asked, and an undecided project is not
    trusted. Ask only for a project that has something to load."""
    if trusted is None:
        # Only now: the trust store's module costs a start without a project file nothing.
        from ctxmodes.resources.trust import trusted_without_asking

        trusted = trusted_without_asking
    return trusted(directory)


class StartupSettings(NamedTuple):
    """What a command needs before anything else, read without validating the rest: the
    mode and which plugins to load (``allow`` ``None``: every installed one)."""

    #: ``None`` when the configured value is not a string (validate in full to word why).
    mode: str | None
    allow: list[str] | None
    block: list[str]
    #: The project file left out because the project is not trusted.
    skipped: Path | None = None


def read_startup_settings(
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    mode: str | None = None,
    trusted: TrustCheck | None = None,
) -> StartupSettings | None:
    """``mode``, ``plugins.allow`` and ``plugins.block``, merged as
    :func:`ctxmodes.config.load_settings` merges them, without validating anything else.

    :param mode: the command line's ``--mode``, which overrides every source.
    :param trusted: as for :func:`read_sources`.
    :return: ``None`` when a ``[plugins]`` table holds anything but lists of strings under
        those two keys, so that the caller validates in full and reports the error the
        settings model words.
    :raises ConfigError: a file is unreadable or not TOML.
    """
    env = os.environ if environ is None else environ
    sources = read_sources(os.getcwd() if cwd is None else cwd, env, trusted)
    chosen: object = DEFAULT_MODE
    lists: dict[str, list[str] | None] = {"allow": None, "block": []}
    for _source, values in sources.layers:
        chosen = values.get("mode", chosen)
        table = values.get("plugins", {})
        if not isinstance(table, dict) or not set(table) <= set(lists):
            return None
        for key, value in table.items():
            if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
                return None
            lists[key] = value
    chosen = chosen if mode is None else mode
    return StartupSettings(
        chosen if isinstance(chosen, str) else None,
        lists["allow"],
        lists["block"] or [],
        sources.skipped,
    )


def project_config_file(directory: str | os.PathLike[str]) -> Path | None:
    """The project's configuration file in ``directory``: ``.ctxmodes.toml``, else a
    ``pyproject.toml`` with a ``[tool.ctxmodes]`` table (or one that is not valid TOML, which
    cannot be told apart and so waits for trust too); ``None`` when there is neither."""
    dedicated = os.path.join(directory, PROJECT_FILE)
    if os.path.isfile(dedicated):
        return _as_path(dedicated)
    pyproject = os.path.join(directory, "pyproject.toml")
    try:
        with open(pyproject, "rb") as handle:
            text = handle.read()
    except OSError:
        return None
    if not _may_name_ctxmodes(text):
        return None
    try:
        table = _parse_toml(pyproject, text).get("tool", {}).get("ctxmodes")
    except ConfigError:
        return _as_path(pyproject)
    return _as_path(pyproject) if isinstance(table, dict) else None


def _may_name_ctxmodes(toml: bytes) -> bool:
    """Whether a TOML text may hold a ``ctxmodes`` key: only if it spells the word or
    writes a key with escapes. Most projects' ``pyproject.toml`` does neither, and is then
    not parsed at every start."""
    return b"ctxmodes" in toml or b"\\u" in toml or b"\\U" in toml


def _project_layer(path: Path) -> Layer | None:
    values = _read_toml(path)
    if path.name == PROJECT_FILE:
        return str(path), values
    table = values.get("tool", {}).get("ctxmodes")
    return (f"{path} [tool.ctxmodes]", table) if isinstance(table, dict) else None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    return _parse_toml(path, text)


def _parse_toml(path: str | os.PathLike[str], text: bytes) -> dict[str, Any]:
    import tomllib  # compiles its expressions on import: only when there is a file to read

    try:
        return tomllib.loads(text.decode())
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
