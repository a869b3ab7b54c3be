"""Where Pi keeps sessions, so ctxmodes reads and writes a user's real session files.

* Agent directory: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``.
* Sessions: ``<agent dir>/sessions/--<cwd>--/`` where ``<cwd>`` is the absolute working
  directory without its leading separator and with every ``/``, ``\\`` and ``:`` replaced by
  ``-`` (``/home/u/proj`` → ``--home-u-proj--``).
* Files: ``<header timestamp with ':' and '.' replaced by '-'>_<session id>.jsonl``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

__all__ = [
    "ENV_AGENT_DIR",
    "agent_dir",
    "default_session_dir",
    "encode_cwd",
    "normalize_path",
    "resolve_path",
    "session_file_name",
    "sessions_dir",
]

ENV_AGENT_DIR: Final = "PI_CODING_AGENT_DIR"
#: Pi's variable naming one flat directory for every project's sessions.
ENV_SESSION_DIR: Final = "PI_CODING_AGENT_SESSION_DIR"


def normalize_path(path: str) -> str:
    """``path`` as Pi's ``normalizePath`` has it: a bare ``~`` and a leading ``~/`` (not
    ``~user``) expanded, a ``file://`` URL made a path; a relative path stays relative."""
    home = os.path.expanduser("~")
    if path == "~":
        return home
    if path.startswith("~/") or (os.name == "nt" and path.startswith("~\\")):
        return os.path.join(home, path[2:])
    if path.startswith("file://"):
        return unquote(urlparse(path).path)
    return path


def resolve_path(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """An absolute, normalised path (symlinks are not resolved), as Pi's ``resolvePath``."""
    expanded = normalize_path(os.fspath(path))
    if not os.path.isabs(expanded):
        expanded = os.path.join(normalize_path(os.fspath(base)) if base else os.getcwd(), expanded)
    return os.path.normpath(expanded) if expanded != "/" else expanded


def agent_dir() -> Path:
    """Pi's agent directory."""
    configured = os.environ.get(ENV_AGENT_DIR)
    if configured:
        return Path(normalize_path(configured))
    return Path.home() / ".pi" / "agent"


def sessions_dir() -> Path:
    """The root under which Pi keeps one session directory per project."""
    return agent_dir() / "sessions"


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """The directory name Pi uses for the sessions of ``cwd``."""
    resolved = resolve_path(cwd)
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", resolved)) + "--"


def default_session_dir(
    cwd: str | os.PathLike[str], agent_directory: str | os.PathLike[str] | None = None
) -> Path:
    """Pi's default session directory for ``cwd`` (not created here)."""
    base = resolve_path(agent_directory if agent_directory is not None else agent_dir())
    return Path(base) / "sessions" / encode_cwd(cwd)


def configured_session_dir(command_line: str | None, setting: str | None) -> Path | None:
    """The one directory every project's sessions go to, as Pi picks it: ``--session-dir``,
    else ``PI_CODING_AGENT_SESSION_DIR``, else the ``sessionDir`` setting (``~`` expanded,
    a relative path taken from the current directory); ``None``: Pi's folder per project."""
    for chosen in (command_line, os.environ.get(ENV_SESSION_DIR), setting):
        if chosen:
            return Path(resolve_path(chosen))
    return None


def cwd_filter(cwd: str | os.PathLike[str], directory: Path) -> str | None:
    """Whose sessions of ``directory`` belong to ``cwd``: in a directory shared by every
    project, those whose header names ``cwd`` (returned); in Pi's own folder for ``cwd``,
    all of them (``None``)."""
    return None if directory == default_session_dir(cwd) else str(cwd)


def session_file_name(header_timestamp: str, session_id: str) -> str:
    """The file name Pi gives a session created at ``header_timestamp``."""
    return f"{re.sub(r'[:.]', '-', header_timestamp)}_{session_id}.jsonl"
