"""Typed views of Pi's session file records (format version 3).

Every model is a frozen pydantic model whose attributes are snake_case with Pi's camelCase
field names as aliases (both accepted on input). Unknown fields are kept (``extra="allow"``)
and validation is strict, so a record read from a file and dumped again with :func:`to_json`
carries the same data. Fields are declared in the order Pi writes them, which makes records
built in Python serialize in Pi's key order.

Records that do not fit their declared shape are not rejected: :func:`entry_from_json` turns
them into :class:`UnknownEntry`, and a message of an unknown role (or a malformed one) becomes
:class:`UnknownMessage`, each holding the stored data untouched. The session store itself works
on the JSON and never depends on these models, exactly as Pi never validates what it reads.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ctxmodes.session.entry_types import ENTRY_TYPES

__all__ = [
    "AgentMessage",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "ContentBlock",
    "Cost",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "ImageContent",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevelChangeEntry",
    "ToolCall",
    "ToolResultMessage",
    "UnknownContent",
    "UnknownEntry",
    "UnknownMessage",
    "Usage",
    "UserMessage",
    "entry_from_json",
    "message_from_json",
    "to_json",
]

Number = int | float


class PiModel(BaseModel):
    """Base of every session model: frozen, strict, camelCase aliases, unknown fields kept."""

    model_config = ConfigDict(
        frozen=True,
        extra="allow",
        strict=True,
        populate_by_name=True,
        alias_generator=to_camel,
        protected_namespaces=(),
    )

    #: Discriminator fields with a default (``type``, ``role``) that must always be written.
    _always_written: ClassVar[tuple[str, ...]] = ()

    def model_post_init(self, context: Any, /) -> None:
        self.__pydantic_fields_set__.update(self._always_written)


class ModelRef(PiModel):
    """The model a session position is using: ``{provider, modelId}``."""

    provider: str | None = None
    model_id: str | None = None


class _Typed(PiModel):
    _always_written: ClassVar[tuple[str, ...]] = ("type",)


class _Role(PiModel):
    _always_written: ClassVar[tuple[str, ...]] = ("role",)


# --------------------------------------------------------------------------- content


class TextContent(_Typed):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(_Typed):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class _KeepsKeyOrder(PiModel):
    """A model written back in the key order it was given. Pi writes an object's keys in the
    order the code that built it added them, and that order differs between the places that
    build the same kind of object; a model validated from a dict (a stored line, a
    transport's message) or built from keyword arguments keeps that order, so that it is
    written back byte for byte.

    The given keys take the places the given keys hold in the declared order, among
    themselves in the order given; keys set otherwise (a discriminator's default, a later
    ``model_copy`` update) keep their declared places. The same holds for the fields named
    in ``_nested_in_order``, whose objects' key order is kept here rather than by a model
    of their own (one hook per message costs less than two)."""

    #: Fields whose own object's key order is kept with this model's, and their models.
    _nested_in_order: ClassVar[dict[str, type[BaseModel]]] = {}

    # A model validated from a dict whose keys are not in the declared order keeps, under
    # ``_given_order`` in pydantic's store of private values, the keys of that dict as they
    # were spelled there, then those of each field of ``_nested_in_order`` (empty when not
    # given as a dict). Only such models get the store: a declared private attribute would
    # set one up for every instance, and a session holds many.

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, value: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        model = handler(value)
        if type(value) is dict:
            nested = tuple(
                tuple(inner) if type(inner := value.get(name)) is dict else ()
                for name in cls._nested_in_order
            )
            given = _order_to_keep(cls, tuple(value), nested)
            if given is not None:
                object.__setattr__(model, "__pydantic_private__", {"_given_order": given})
        return model

    def __eq__(self, other: object) -> bool:
        # The order the keys were given in is how a value is written, not what it is.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and (self.__pydantic_extra__ or {}) == (other.__pydantic_extra__ or {})
        )

    @model_serializer(mode="wrap")
    def _write_in_key_order(self, handler: SerializerFunctionWrapHandler) -> Any:
        dumped = handler(self)
        # Read past pydantic's attribute lookup, which costs more than the rest of this.
        given = (self.__pydantic_private__ or _NOTHING_GIVEN)["_given_order"]
        if not given or type(dumped) is not dict:
            return dumped
        own, *inner = given
        for (name, model), keys in zip(self._nested_in_order.items(), inner, strict=True):
            value = dumped.get(name)
            if keys and type(value) is dict:
                dumped[name] = _in_given_order(model, value, keys)
        return _in_given_order(type(self), dumped, own)


_NOTHING_GIVEN: dict[str, Any] = {"_given_order": ()}


def _in_given_order(
    model: type[BaseModel], dumped: dict[str, Any], given: tuple[str, ...]
) -> dict[str, Any]:
    written = tuple(dumped)
    if written == given:  # the usual case: written back as it was read
        return dumped
    return {key: dumped[key] for key in _given_order_of(model, written, given)}


@functools.lru_cache(maxsize=256)
def _order_to_keep(
    model: type[_KeepsKeyOrder], own: tuple[str, ...], nested: tuple[tuple[str, ...], ...]
) -> tuple[tuple[str, ...], ...] | None:
    """``(own, *nested)`` when a dump in the declared order would not write those keys in
    that order, else ``None``; one object for each shape (a session's answers share a few)."""
    models = (model, *model._nested_in_order.values())
    if all(_in_declared_order(m, keys) for m, keys in zip(models, (own, *nested), strict=True)):
        return None
    return (own, *nested)


def _in_declared_order(model: type[BaseModel], keys: tuple[str, ...]) -> bool:
    """Whether a dump writes ``keys`` in this order (fields in declared order, then the
    keys of no field in the order given)."""
    fields = _fields_by_spelling(model)
    after = len(model.model_fields)
    found = [fields[key][1] if key in fields else after for key in keys]
    return found == sorted(found)


@functools.cache
def _fields_by_spelling(model: type[BaseModel]) -> dict[str, tuple[str, int]]:
    """Each field by its name and by its alias: the key a dump by alias writes for it, and
    its place in the declared order."""
    fields = {}
    for at, (name, field) in enumerate(model.model_fields.items()):
        fields[name] = fields[field.alias or name] = (field.alias or name, at)
    return fields


@functools.lru_cache(maxsize=256)
def _given_order_of(
    model: type[BaseModel], written: tuple[str, ...], given: tuple[str, ...]
) -> tuple[str, ...]:
    """The keys ``written`` with those that were ``given`` in the places given keys take, in
    the order given; the others stay where they are. A few shapes recur (a transport's
    answers, a stored line's), so each is worked out once."""
    fields = _fields_by_spelling(model)
    present = set(written)
    moved = [key for key in (fields[k][0] if k in fields else k for k in given) if key in present]
    taken = set(moved)
    placed = iter(moved)
    return tuple(next(placed) if key in taken else key for key in written)


class ImageContent(_Typed, _KeepsKeyOrder):
    """An image block. Pi writes its two keys in the order of the code that built it:
    ``data`` first for a tool's image (``read``), ``mimeType`` first for an image attached to
    a prompt (``@FILE``)."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ToolCall(_Typed):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]
    thought_signature: str | None = None
    namespace: str | None = None


class UnknownContent(PiModel):
    """A content block of a type this version does not know; kept as stored."""

    type: Any = None


_CONTENT_TYPES = {"text", "thinking", "image", "toolCall"}


def _tag(value: Any, key: str, known: set[str] | frozenset[str]) -> str:
    tag = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
    return tag if isinstance(tag, str) and tag in known else "unknown"


def _content_tag(value: Any) -> str:
    return _tag(value, "type", _CONTENT_TYPES)


ContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ThinkingContent, Tag("thinking")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[ToolCall, Tag("toolCall")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(_content_tag),
]


# --------------------------------------------------------------------------- usage


class Cost(PiModel):
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    total: Number


class Usage(PiModel):
    """Token counts and their cost. Transports add some counts (``cacheWrite1h``,
    ``reasoning``) once the stream reports them, after the others: an answer keeps its
    usage's key order (:class:`AssistantMessage`)."""

    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    cache_write_1h: Number | None = Field(default=None, alias="cacheWrite1h")
    reasoning: Number | None = None
    total_tokens: Number
    cost: Cost


# --------------------------------------------------------------------------- messages


class UserMessage(_Role):
    role: Literal["user"] = "user"
    content: str | list[ContentBlock]
    timestamp: Number


class AssistantMessage(_Role, _KeepsKeyOrder):
    """An answer. Pi's transports start it with the same keys and add the rest (the
    response id, the raw stop reason …) as the stream brings them, so a transport's message
    keeps its order (:class:`_KeepsKeyOrder`), and its usage's."""

    _nested_in_order: ClassVar[dict[str, type[BaseModel]]] = {"usage": Usage}

    role: Literal["assistant"] = "assistant"
    content: list[ContentBlock]
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    provider_thinking_level: str | None = None
    diagnostics: list[Any] | None = None
    usage: Usage
    stop_reason: str
    deferred: dict[str, Any] | None = None
    error_message: str | None = None
    raw_stop_reason: str | None = None
    end_turn: bool | None = None
    timestamp: Number


class ToolResultMessage(_Role):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ContentBlock]
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool
    timestamp: Number


class BashExecutionMessage(_Role):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    exit_code: Number | None = None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None
    timestamp: Number
    exclude_from_context: bool | None = None


class CustomMessage(_Role):
    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[ContentBlock]
    display: bool
    details: Any = None
    # Rebuilt from an entry with an unparsable timestamp this is ``null``, as in Pi.
    timestamp: Number | None


class BranchSummaryMessage(_Role):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    timestamp: Number | None


class CompactionSummaryMessage(_Role):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: Number
    timestamp: Number | None


class UnknownMessage(PiModel):
    """A message of a role this version does not know, or one that does not fit its role."""

    role: Any = None


_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    }
)


def _role_tag(value: Any) -> str:
    return _tag(value, "role", _ROLES)


AgentMessage = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[UnknownMessage, Tag("unknown")],
    Discriminator(_role_tag),
]

_MESSAGE_ADAPTER: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)


def message_from_json(data: Any) -> AgentMessage:
    """Validate a stored message; anything that does not fit becomes :class:`UnknownMessage`."""
    try:
        return _MESSAGE_ADAPTER.validate_python(data)
    except ValidationError:
        if isinstance(data, dict):
            return UnknownMessage.model_validate(data, strict=False)
        raise


# --------------------------------------------------------------------------- header


class SessionHeader(_Typed):
    """First line of a session file."""

    type: Literal["session"] = "session"
    version: Number | None = None
    id: str
    timestamp: str
    cwd: str
    parent_session: str | None = None


# --------------------------------------------------------------------------- entries


class _Entry(_Typed):
    # Declared here so that it stays the first key; every entry type narrows it.
    type: str
    id: str
    parent_id: str | None
    timestamp: str


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: AgentMessage

    @field_validator("message", mode="wrap")
    @classmethod
    def _keep_unfit_messages(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            if isinstance(value, dict):
                return UnknownMessage.model_validate(value, strict=False)
            raise


class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


class CompactionEntry(_Entry):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str
    tokens_before: Number
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class BranchSummaryEntry(_Entry):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


class CustomEntry(_Typed):
    # Pi writes this entry with the extension fields first.
    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class CustomMessageEntry(_Typed):
    # Pi writes this entry with the extension fields first.
    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[ContentBlock]
    display: bool
    details: Any = None
    id: str
    parent_id: str | None
    timestamp: str


class LabelEntry(_Entry):
    type: Literal["label"] = "label"
    target_id: str
    #: Absent when the entry clears the target's label.
    label: str | None = None


class SessionInfoEntry(_Entry):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class UnknownEntry(PiModel):
    """An entry of a type this version does not know (or that does not fit its type).

    Pi keeps such entries as ordinary tree nodes that contribute nothing to the context.
    """

    type: Any = None
    id: str
    parent_id: str | None = None
    timestamp: Any = None


_ENTRY_TYPES = frozenset(ENTRY_TYPES)


def _entry_tag(value: Any) -> str:
    return _tag(value, "type", _ENTRY_TYPES)


SessionEntry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_entry_tag),
]

_ENTRY_ADAPTER: TypeAdapter[SessionEntry] = TypeAdapter(SessionEntry)


def entry_from_json(data: dict[str, Any]) -> SessionEntry:
    """Validate a stored entry; anything that does not fit becomes :class:`UnknownEntry`."""
    try:
        return _ENTRY_ADAPTER.validate_python(data)
    except ValidationError:
        fallback = dict(data)
        if "parentId" in fallback and not isinstance(fallback["parentId"], str):
            fallback["parentId"] = None
        return UnknownEntry.model_validate(fallback, strict=False)


def to_json(model: BaseModel) -> dict[str, Any]:
    """The JSON object Pi would store for ``model``: aliases, unset optional fields omitted."""
    return model.model_dump(by_alias=True, exclude_unset=True)
