"""The scripted model's file format, validated with pydantic.

::

    {"responses": [{"text"?, "thinking"?, "tool_calls"?: [{"name", "arguments"?,
                    "namespace"?, "id"?}], "stop_reason"?, "error_message"?, "usage"?}],
     "summaries"?: [str], "model"?: str, "context_window"?: int, "max_tokens"?: int,
     "reasoning"?: bool}

``reasoning`` makes the scripted model a reasoning model (one that takes a thinking level).

Unknown keys are errors, so a typo fails loudly instead of silently changing a test. ``usage``
takes Pi's field names (``input``, ``cacheRead``, ``totalTokens``, ``cost`` ...) and overrides
the estimate field by field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxmodes.providers.base import ProviderError
from ctxmodes.session.regular_file import read_regular


class ScriptError(ProviderError):
    """The script file is missing or invalid."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ScriptedToolCall(_Strict):
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    namespace: str | None = None
    id: str | None = Field(default=None, min_length=1)


class ScriptedCost(_Strict):
    # int | float: a cost written as 1 stays 1 in the session file (as Pi would write it).
    input: int | float | None = None
    output: int | float | None = None
    cache_read: int | float | None = Field(default=None, alias="cacheRead")
    cache_write: int | float | None = Field(default=None, alias="cacheWrite")
    total: int | float | None = None


class ScriptedUsage(_Strict):
    """Overrides for the estimated usage, with Pi's field names."""

    input: int | None = Field(default=None, ge=0)
    output: int | None = Field(default=None, ge=0)
    cache_read: int | None = Field(default=None, ge=0, alias="cacheRead")
    cache_write: int | None = Field(default=None, ge=0, alias="cacheWrite")
    total_tokens: int | None = Field(default=None, ge=0, alias="totalTokens")
    cost: ScriptedCost | None = None


class ScriptedResponse(_Strict):
    text: str | None = None
    thinking: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    stop_reason: Literal["stop", "length", "toolUse", "error", "aborted"] | None = None
    error_message: str | None = None
    usage: ScriptedUsage | None = None


class Script(_Strict):
    responses: list[ScriptedResponse] = Field(default_factory=list)
    summaries: list[str] | None = None
    model: str = Field(default="scripted", min_length=1)
    context_window: int = Field(default=128_000, gt=0)
    max_tokens: int = Field(default=16_384, gt=0)
    reasoning: bool = False


def load_script(path: str | Path) -> Script:
    """Read and validate a script file.

    :raises ScriptError: unreadable file, invalid JSON or invalid shape (one line).
    """
    try:
        raw = read_regular(path)
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror or exc}") from None
    try:
        return Script.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ScriptError(f"invalid script {path}: {where}: {first['msg']}{more}") from None
