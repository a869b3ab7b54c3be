from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import (
    Tool,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
    TypedTool,
)


class _Args(ToolArguments):
    name: str = Field(description="Who to greet")
    times: int | None = Field(default=None, ge=1, description="How often")
    loud: bool = False


class _Greet(TypedTool[_Args]):
    name = "greet"
    label = "Greet"
    description = "Says hello."

    def __init__(self) -> None:
        super().__init__(_Args)

    def run(self, args: _Args, context: ToolContext) -> ToolResult:
        if args.name == "nobody":
            raise ToolError("Nobody to greet", details={"why": "empty"})
        return ToolResult.text(" ".join([f"hello {args.name}"] * (args.times or 1)))


def _context(aborted: bool = False) -> ToolContext:
    controller = AbortController()
    if aborted:
        controller.abort()
    return ToolContext(cwd=Path("."), signal=controller.signal)


def _text(result: ToolResult) -> str:
    block = result.content[0]
    assert block.type == "text"
    return block.text


def test_schema_has_no_titles_or_null_branches():
    schema: dict[str, Any] = _Greet().parameters
    assert schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet"},
            "times": {"type": "integer", "minimum": 1, "description": "How often"},
            "loud": {"type": "boolean", "default": False},
        },
        "required": ["name"],
    }


def test_typed_tool_satisfies_the_protocol():
    assert isinstance(_Greet(), Tool)


def test_valid_arguments_run():
    result = _Greet().execute("c", {"name": "ada", "times": 2, "extra": "ignored"}, _context())
    assert not result.is_error
    assert _text(result) == "hello ada hello ada"


def test_invalid_arguments_name_every_problem():
    result = _Greet().execute("c", {"times": 0}, _context())
    assert result.is_error
    assert _text(result) == (
        "Invalid arguments for greet: name: Field required; "
        "times: Input should be greater than or equal to 1"
    )


def test_tool_error_becomes_an_error_result_with_details():
    result = _Greet().execute("c", {"name": "nobody"}, _context())
    assert result.is_error
    assert _text(result) == "Nobody to greet"
    assert result.details == {"why": "empty"}


def test_aborted_signal_short_circuits():
    result = _Greet().execute("c", {"name": "ada"}, _context(aborted=True))
    assert result.is_error
    assert _text(result) == "Operation aborted"


def test_result_defaults():
    result = ToolResult.text("x")
    assert (result.details, result.is_error, result.terminate) == (None, False, False)
    assert ToolResult.error("bad").is_error
