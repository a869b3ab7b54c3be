"""The tool contract: what a tool is, what it gets when it runs, and what it returns.

A tool is any object satisfying :class:`Tool`. Most tools derive from :class:`TypedTool`,
which validates the model's arguments against a pydantic model (whose JSON schema is the
``parameters`` the model sees) and turns the expected failures into error results: a tool
never raises for bad arguments, a missing file or an abort; the model gets a
``ToolResult`` with ``is_error=True`` and a one-line reason instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from ctxmodes.abort import AbortedError, AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.models import ImageContent, TextContent

if TYPE_CHECKING:
    from ctxmodes.events import (
        NewContextOutcome,
        NewContextRequest,
        RetrievalRequest,
        RetrievalResult,
    )

#: The text of the error result for a tool call stopped by the abort signal.
ABORTED_MESSAGE = "Operation aborted"


class ToolResult(BaseModel):
    """The outcome of one tool call, before it becomes a ``toolResult`` message.

    ``content`` is what the model sees; ``details`` is structured metadata kept in the
    session (for renderers and plugins) but never sent to the model. ``terminate`` asks the
    host to end the run once the current batch of tool calls is done (Pi's ``terminate``).
    """

    model_config = ConfigDict(frozen=True)

    content: list[TextContent | ImageContent]
    details: Any = None
    is_error: bool = False
    terminate: bool = False

    @classmethod
    def text(cls, text: str, *, details: Any = None, is_error: bool = False) -> ToolResult:
        return cls(content=[TextContent(text=text)], details=details, is_error=is_error)

    @classmethod
    def error(cls, message: str, *, details: Any = None) -> ToolResult:
        return cls.text(message, details=details, is_error=True)


def _discard_update(_partial: ToolResult) -> None:
    return None


def _no_session_environment() -> Mapping[str, str]:
    return {}


class ToolHooks(Protocol):
    """The hooks a tool may call while it runs. The host serializes them with every other
    hook call, so an implementation never runs concurrently with another hook."""

    def new_context(self, request: NewContextRequest) -> NewContextOutcome | None:
        """``ctx_new_context``: every plugin sees the request; the active mode answers."""

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult | None:
        """``ctx_retrieve``: every plugin sees the request; the active mode answers."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What the host hands a tool for one call.

    :ivar cwd: the session's working directory; relative paths resolve against it.
    :ivar signal: aborted when the run is cancelled; long-running tools must stop promptly.
    :ivar on_update: receives partial results (e.g. output so far) while the tool runs;
        may be called from the tool's thread only, and never after ``execute`` returned.
    :ivar session: the host session, opaque here; plugins' tools may know its type.
    :ivar hooks: the hooks a tool may call; ``None`` where no host runs the tool.
    :ivar session_environment: the ``PI_*`` variables describing the session as it is when
        called (Pi's shell tool session environment: ``PI_SESSION_ID``, ``PI_SESSION_FILE``,
        ``PI_PROVIDER``, ``PI_MODEL``, ``PI_REASONING_LEVEL``, each only when it has a
        value); a tool calls it as it starts a command, so a model switched meanwhile is
        the one given. Empty where no host runs the tool. :func:`ctxmodes.shell_environment`
        builds a whole environment from it.
    """

    cwd: Path
    signal: AbortSignal
    on_update: Callable[[ToolResult], None] = _discard_update
    session: object = None
    hooks: ToolHooks | None = None
    session_environment: Callable[[], Mapping[str, str]] = _no_session_environment


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call.

    A tool may also have a ``strict_sampling`` attribute (``"prefer"`` or ``"require"``) to
    ask for strict, schema-constrained arguments where the model's server offers them
    (:class:`ctxmodes.providers.base.ToolSchema`), and an ``exposes_session_environment``
    attribute, true when the commands it runs see the session's ``PI_*`` variables
    (:func:`ctxmodes.shell_environment`): the built-in system prompt then tells the model it
    can read them.
    """

    @property
    def name(self) -> str:
        """The name the model calls it by; unique in a session."""

    @property
    def label(self) -> str:
        """A short human-readable name for displays."""

    @property
    def description(self) -> str:
        """What the tool does, for the model."""

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments object."""

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run one call. Expected failures come back as error results, not exceptions."""


class ToolError(CtxmodesError):
    """Raised inside :meth:`TypedTool.run` to end the call with an error result."""

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


class ToolArguments(BaseModel):
    """Base for argument models: unknown keys are ignored, as Pi's tools ignore them."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The model-facing schema: pydantic's, without titles and without null branches.

        Optional fields are simply not ``required``; ``anyOf [X, null]`` would only confuse
        models and strict providers. Nested models are written in place, as Pi's schemas
        are, rather than as ``$ref`` into ``$defs``.
        """
        schema = cls.model_json_schema(by_alias=True)
        definitions = schema.pop("$defs", {})
        cleaned = _clean_schema(_inline_refs(schema, definitions))
        assert isinstance(cleaned, dict)
        return cleaned


ArgsT = TypeVar("ArgsT", bound=ToolArguments)


class TypedTool(ABC, Generic[ArgsT]):
    """A :class:`Tool` whose arguments are validated into ``arguments_model`` first."""

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]

    def __init__(self, arguments_model: type[ArgsT]) -> None:
        self._arguments_model = arguments_model
        self._parameters = arguments_model.json_schema()

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        try:
            args = self._arguments_model.model_validate(arguments)
        except ValidationError as exc:
            return ToolResult.error(describe_invalid_arguments(self.name, exc))
        try:
            context.signal.raise_if_aborted()
            return self.run(args, context)
        except AbortedError:
            return ToolResult.error(ABORTED_MESSAGE)
        except ToolError as exc:
            return ToolResult.error(str(exc), details=exc.details)

    @abstractmethod
    def run(self, args: ArgsT, context: ToolContext) -> ToolResult:
        """Do the work; raise :class:`ToolError` (or let ``AbortedError`` out) to fail."""


def describe_invalid_arguments(tool_name: str, exc: ValidationError) -> str:
    """One line naming every invalid argument, e.g. ``command: Field required``."""
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return f"Invalid arguments for {tool_name}: " + "; ".join(problems)


def _inline_refs(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline_refs(item, definitions) for item in node]
    if not isinstance(node, Mapping):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        target = definitions[reference.removeprefix("#/$defs/")]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inline_refs({**target, **rest}, definitions)
    return {key: _inline_refs(value, definitions) for key, value in node.items()}


def _clean_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    branches = node.get("anyOf")
    if isinstance(branches, list) and node.get("default", ...) is None:
        non_null = [b for b in branches if b != {"type": "null"}]
        if len(non_null) == 1:
            merged = {**non_null[0], **{k: v for k, v in node.items() if k != "anyOf"}}
            return _clean_schema({k: v for k, v in merged.items() if k != "default"})
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, Mapping):
            cleaned[key] = {name: _clean_schema(schema) for name, schema in value.items()}
        else:
            cleaned[key] = _clean_schema(value)
    return cleaned
