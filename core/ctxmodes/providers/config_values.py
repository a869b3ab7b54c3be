"""Pi's configuration values: ``!command``, ``$VAR`` / ``${VAR}`` templates, and literals.

API keys in ``auth.json`` and ``models.json`` and header values are written this way
(pi-coding-agent's ``resolve-config-value``): a value starting with ``!`` is a shell
command whose trimmed output is the value (run once per process, ten seconds at most); any
other value is a template in which ``$NAME`` and ``${NAME}`` stand for environment variables,
``$$`` for ``$`` and ``$!`` for ``!``. A template naming a variable that is unset or empty
has no value at all, and a command that fails or prints nothing has none either.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
COMMAND_TIMEOUT_S: Final = 10.0

_command_results: dict[str, str | None] = {}


@dataclass(frozen=True, slots=True)
class _Variable:
    name: str


_Part = str | _Variable


def _template(value: str) -> list[_Part]:
    parts: list[_Part] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and isinstance(parts[-1], str):
            parts[-1] += text
        else:
            parts.append(text)

    index = 0
    while index < len(value):
        dollar = value.find("$", index)
        if dollar < 0:
            literal(value[index:])
            break
        literal(value[index:dollar])
        following = value[dollar + 1 : dollar + 2]
        if following in ("$", "!"):
            literal(following)
            index = dollar + 2
        elif following == "{":
            end = value.find("}", dollar + 2)
            if end < 0:
                literal("$")
                index = dollar + 1
                continue
            name = value[dollar + 2 : end]
            if _NAME.fullmatch(name):
                parts.append(_Variable(name))
            else:
                literal(value[dollar : end + 1])
            index = end + 1
        else:
            match = _NAME.match(value, dollar + 1)
            if match:
                parts.append(_Variable(match.group()))
                index = match.end()
            else:
                literal("$")
                index = dollar + 1
    return parts


def is_command(value: str) -> bool:
    return value.startswith("!")


def variable_names(value: str) -> list[str]:
    """The environment variables a template reads, first mention first (none for commands)."""
    if is_command(value):
        return []
    names: list[str] = []
    for part in _template(value):
        if isinstance(part, _Variable) and part.name not in names:
            names.append(part.name)
    return names


def _lookup(name: str, scoped: Mapping[str, str] | None, environ: Mapping[str, str]) -> str | None:
    return (scoped or {}).get(name) or environ.get(name) or None


def is_configured(
    value: str, scoped: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether ``value`` can have a value without running anything (Pi's availability check:
    commands count as configured, templates need every variable they name)."""
    env = os.environ if environ is None else environ
    return all(_lookup(name, scoped, env) for name in variable_names(value))


def _run(command: str) -> str | None:
    try:
        result = subprocess.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def resolve(
    value: str,
    scoped: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    cached: bool = True,
) -> str | None:
    """The value ``value`` stands for, or ``None`` when it has none.

    :param scoped: variables that win over the process environment (a credential's ``env``).
    :param cached: reuse a command's output for the rest of the process (Pi does for keys;
        not for header values, which it runs on every request).
    """
    if is_command(value):
        command = value[1:]
        if not cached:
            return _run(command)
        if value not in _command_results:
            _command_results[value] = _run(command)
        return _command_results[value]
    env = os.environ if environ is None else environ
    resolved = []
    for part in _template(value):
        if isinstance(part, str):
            resolved.append(part)
            continue
        found = _lookup(part.name, scoped, env)
        if found is None:
            return None
        resolved.append(found)
    return "".join(resolved)


def unresolved_reason(
    value: str, scoped: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """Why ``value`` has no value, in a clause (never the value itself)."""
    if is_command(value):
        return f"the command `{value[1:]}` failed or printed nothing"
    env = os.environ if environ is None else environ
    missing = [name for name in variable_names(value) if not _lookup(name, scoped, env)]
    if missing:
        return f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set"
    return "it is empty"


def resolve_or_raise(
    value: str,
    description: str,
    scoped: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """``value``'s value (commands run every time), or Pi's error saying which command or
    variables failed ``description`` (``resolveConfigValueOrThrow``).

    :raises ValueError: the value has no value.
    """
    resolved = resolve(value, scoped, environ, cached=False)
    if resolved is not None:
        return resolved
    if is_command(value):
        raise ValueError(f"Failed to resolve {description} from shell command: {value[1:]}")
    env = os.environ if environ is None else environ
    missing = [name for name in variable_names(value) if not _lookup(name, scoped, env)]
    if len(missing) == 1:
        raise ValueError(f"Failed to resolve {description} from environment variable: {missing[0]}")
    if missing:
        raise ValueError(
            f"Failed to resolve {description} from environment variables: {', '.join(missing)}"
        )
    raise ValueError(f"Failed to resolve {description}")
