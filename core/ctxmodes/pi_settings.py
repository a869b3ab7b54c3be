"""The settings of Pi's own that ctxmodes honours: the startup model.

Pi starts on the model its settings name, ``defaultProvider`` and ``defaultModel`` (saved by
``/model`` and Ctrl+S, or written by hand), in the global ``settings.json`` of its agent
directory and, for a trusted project, in ``.pi/settings.json``, whose keys override the
global ones. A Pi user's default model therefore carries over: it is the lowest layer of
ctxmodes' settings (:func:`ctxmodes.config.load_settings`), so ctxmodes' own files, the
environment and the command line all override it.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxmodes.config_sources import Layer, TrustCheck, project_trusted
from ctxmodes.errors import ConfigError

__all__ = ["pi_model_layer"]

_KEYS = ("defaultProvider", "defaultModel")


def pi_model_layer(directory: Path, trusted: TrustCheck | None = None) -> Layer | None:
    """``{"model": "PROVIDER/ID"}`` from Pi's settings, named by the file that set the model
    id; ``None`` when they name no provider and model. ``trusted`` is asked only when the
    project has a ``.pi/settings.json`` (by default a saved decision or
    ``defaultProjectTrust`` decides).

    :raises ConfigError: a settings file that is not a JSON object, naming it.
    """
    from ctxmodes.session.paths import agent_dir

    found: dict[str, tuple[str, Path]] = {}
    files = [agent_dir() / "settings.json"]
    project = directory / ".pi" / "settings.json"
    if project.is_file() and project_trusted(directory, trusted):
        files.append(project)
    for path in files:
        for key, value in _settings(path).items():
            if key in _KEYS and isinstance(value, str) and value:
                found[key] = (value, path)
    if len(found) < len(_KEYS):
        return None
    (provider, _), (model, source) = found["defaultProvider"], found["defaultModel"]
    return f"{source} (Pi's defaultProvider and defaultModel)", {"model": f"{provider}/{model}"}


def _settings(path: Path) -> dict[str, Any]:
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
