"""Internal to ctxmodes: a call of one of the core's tools in the words Pi's renderers give
it (``core/tools/renderers``): ``$ make test (timeout 60s)``, ``read ~/app/main.py:10-29``,
``edit ~/app/main.py``, ``write notes.md``, ``grep /def main/ in src (*.py)``, where the
transcript would otherwise show the tool's name and its arguments as JSON.

A path under the home folder starts with ``~``, as Pi shortens it; an argument of the wrong
kind shows as Pi's ``[invalid arg]``; an empty command or path as ``...``. A read of a skill
or of a project's instructions shows as Pi shows it before it is expanded: ``[skill] name``,
``read resource AGENTS.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

_INVALID: Final = "[invalid arg]"
#: Files whose read Pi shows as a resource, by name (its ``COMPACT_RESOURCE_FILE_NAMES``).
_RESOURCES: Final = frozenset(
    {"AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}
)


def _text(value: object) -> str | None:
    """Pi's ``str``: a string as it is, nothing as empty, anything else invalid."""
    if isinstance(value, str):
        return value
    return "" if value is None else None


def _raw_path(arguments: Mapping[str, object]) -> str | None:
    """``file_path``, else ``path``, as Pi's ``str`` takes it."""
    raw = arguments.get("file_path")
    return _text(arguments.get("path") if raw is None else raw)


def _path(arguments: Mapping[str, object]) -> str:
    """Pi's ``renderToolPath`` of ``file_path`` (else ``path``), its home folder as ``~``."""
    path = _raw_path(arguments)
    if path is None:
        return _INVALID
    return _home(path) if path else "..."


def _number(value: object) -> str:
    """A number as JavaScript writes it in a template (``5``, ``2.5``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _home(path: str) -> str:
    """Pi's ``shortenPath``: the home folder as ``~``."""
    home = str(Path.home())
    return f"~{path[len(home) :]}" if path.startswith(home) else path


def _searched(arguments: Mapping[str, object]) -> str:
    """Where a search looks: ``path``, ``.`` when none, the home folder as ``~``."""
    path = _text(arguments.get("path"))
    return _INVALID if path is None else _home(path or ".")


def _limit(arguments: Mapping[str, object], before: str = " (limit ", after: str = ")") -> str:
    return f"{before}{_number(arguments['limit'])}{after}" if "limit" in arguments else ""


def _grep(arguments: Mapping[str, object]) -> str:
    pattern = _text(arguments.get("pattern"))
    text = f"grep {_INVALID if pattern is None else f'/{pattern}/'} in {_searched(arguments)}"
    glob = _text(arguments.get("glob"))
    return text + (f" ({glob})" if glob else "") + _limit(arguments, " limit ", "")


def _find(arguments: Mapping[str, object]) -> str:
    pattern = _text(arguments.get("pattern"))
    shown = _INVALID if pattern is None else pattern
    return f"find {shown} in {_searched(arguments)}{_limit(arguments)}"


def _shell(arguments: Mapping[str, object]) -> str:
    command = _text(arguments.get("command"))
    shown = _INVALID if command is None else command or "..."
    timeout = arguments.get("timeout")
    suffix = f" (timeout {_number(timeout)}s)" if timeout else ""
    return f"$ {shown}{suffix}"


def _line_range(arguments: Mapping[str, object]) -> str:
    if "offset" not in arguments and "limit" not in arguments:
        return ""
    offset, limit = arguments.get("offset"), arguments.get("limit")
    first = offset if offset is not None else 1
    # The last line, where the limit gives one (none for 0, as JavaScript's falsy 0).
    last = first + limit - 1 if isinstance(first, int) and isinstance(limit, int) else 0
    return f":{_number(first)}" + (f"-{last}" if last else "")


def _read(arguments: Mapping[str, object]) -> str:
    return f"read {_path(arguments)}{_line_range(arguments)}"


def compact_read(arguments: Mapping[str, object], cwd: Path) -> str | None:
    """A read of a skill or of a project's instructions as Pi shows it before it is
    expanded: ``[skill] its folder's name``, ``read resource`` and the file's path from
    ``cwd`` (absolute outside it); ``None`` for any other read."""
    # The tools load at the first read shown, not with the terminal.
    from ctxmodes.tools.files import resolve_path

    raw = _raw_path(arguments)
    if not raw:
        return None
    path = resolve_path(raw, cwd)
    if path.name == "SKILL.md":
        return f"[skill] {path.parent.name or path.name}{_line_range(arguments)}"
    if path.name not in _RESOURCES:
        return None
    try:
        shown = path.relative_to(resolve_path(".", cwd)).as_posix()
    except ValueError:
        shown = path.as_posix()
    return f"read resource {shown}{_line_range(arguments)}"


_CALLS: Final[Mapping[str, Callable[[Mapping[str, object]], str]]] = {
    "bash": _shell,
    "read": _read,
    "edit": lambda arguments: f"edit {_path(arguments)}",
    "write": lambda arguments: f"write {_path(arguments)}",
    "grep": _grep,
    "find": _find,
    "ls": lambda arguments: f"ls {_searched(arguments)}{_limit(arguments)}",
}


def call_text(name: str, arguments: Mapping[str, object]) -> str | None:
    """The call as Pi's renderer of tool ``name`` writes it, all its lines; ``None`` for a
    tool Pi has no renderer of here (a mode's tools, a plugin's)."""
    render = _CALLS.get(name)
    return render(arguments) if render is not None else None
