"""Where a skill or prompt template came from (Pi's ``sourceInfo``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ResourceSource:
    """Where a skill or template file was found, as Pi's ``sourceInfo`` tells it: ``auto``
    for Pi's standard places (``base_dir``: the ``.pi``, ``.agents`` or agent directory they
    are in), ``local`` for a settings entry (no base directory) or a path given on the
    command line (scope ``temporary``, ``base_dir`` the file's folder); ``scope`` is
    ``project``, ``user`` or ``temporary``."""

    source: str
    scope: str
    base_dir: str | None = None

    @classmethod
    def given(cls, path: str) -> ResourceSource:
        """The source of a file given on the command line (Pi's default source info)."""
        return cls("local", "temporary", os.path.dirname(path))

    def info(self, path: str) -> dict[str, Any]:
        """Pi's ``sourceInfo`` of the file ``path`` (ctxmodes installs no packages, so every
        resource is a top-level one)."""
        info: dict[str, Any] = {
            "path": path,
            "source": self.source,
            "scope": self.scope,
            "origin": "top-level",
        }
        if self.base_dir is not None:
            info["baseDir"] = self.base_dir
        return info
