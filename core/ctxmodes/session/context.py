"""What the model sees at a position of the session tree (Pi's ``buildSessionContext``).

For a leaf, the *path* is the chain of entries from the root down to it. The *context entries*
are the whole path, unless the path contains a compaction: then they are the latest compaction
on the path, followed by the path entries from its ``firstKeptEntryId`` up to (not including)
the compaction, followed by everything after it. If ``firstKeptEntryId`` is not on the path
before the compaction nothing before it is kept. Each context entry projects to zero or one
message (:func:`entry_to_context_messages`). The thinking level and the model come from the
whole path: the last ``thinking_level_change`` (default ``"off"``), and the last
``model_change`` or assistant message (default none).

Everything here works on the stored JSON, exactly as Pi does, so odd records behave as they
do in Pi; :class:`SessionContext` offers typed views on top.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import repeat
from operator import is_, itemgetter
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar, overload

from ctxmodes.collector import collector_paused
from ctxmodes.session import codec
from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.index_arrays import IndexRuns
from ctxmodes.session.jsvalues import js_truthy
from ctxmodes.session.store import NO_ENTRY, ActivePath, EntryTable

if TYPE_CHECKING:
    # Loaded (with pydantic) when a message is first asked for as a model.
    from ctxmodes.session.models import AgentMessage, ModelRef

__all__ = [
    "ContextBuilder",
    "SessionContext",
    "build_context_entries",
    "build_session_context",
    "entry_to_context_messages",
]

JsonObject = dict[str, Any]
_T = TypeVar("_T")

_MISSING: Final = object()
# Entries read from the file in one go while iterating a context.
_READ_BLOCK: Final = 512
_MESSAGE: Final = itemgetter("message")
_is_none: Final = partial(is_, None)
_COMPACTION: Final = "compaction"
_THINKING: Final = "thinking"
_MODEL: Final = "model"


def message_from_json(value: JsonObject) -> AgentMessage:
    """The message model of stored JSON (the models, and pydantic, load on the first call)."""
    from ctxmodes.session import models

    return models.message_from_json(value)


def entry_to_context_messages(entry: JsonObject) -> list[JsonObject]:
    """The messages one context entry contributes (Pi's ``sessionEntryToContextMessages``)."""
    entry_type = entry.get("type")
    if entry_type == "message":
        message = entry.get("message")
        if not isinstance(message, dict):
            return []
        if message.get("role") in ("user", "assistant", "toolResult") and (
            message.get("content") is None
        ):
            return [{**message, "content": []}]
        return [message]
    if entry_type == "custom_message":
        content = entry.get("content")
        return [
            _present(
                role="custom",
                customType=entry.get("customType", _MISSING),
                content=[] if content is None else content,
                display=entry.get("display", _MISSING),
                details=entry.get("details", _MISSING),
                timestamp=timestamp_ms(entry.get("timestamp")),
            )
        ]
    if entry_type == "branch_summary" and js_truthy(entry.get("summary")):
        return [
            _present(
                role="branchSummary",
                summary=entry["summary"],
                fromId=entry.get("fromId", _MISSING),
                timestamp=timestamp_ms(entry.get("timestamp")),
            )
        ]
    if entry_type == "compaction":
        return [
            _present(
                role="compactionSummary",
                summary=entry.get("summary", _MISSING),
                tokensBefore=entry.get("tokensBefore", _MISSING),
                timestamp=timestamp_ms(entry.get("timestamp")),
            )
        ]
    return []


def _present(**fields: Any) -> JsonObject:
    # JSON.stringify drops undefined properties; _MISSING stands for undefined here.
    return {key: value for key, value in fields.items() if value is not _MISSING}


class _MessageLog:
    """The messages of one build of a context, in order, read from the entries they come from.

    A log holds the index of each message's entry; the message is projected from the entry
    when it is read, and the entry decoded from the session file then (without filling the
    store's cache), so a context of a million messages costs a list of a million integers
    until somebody reads it. Models built by indexing are kept (they are frozen, and the
    positions asked for are few: the ends of the context); iteration builds them as it goes
    and keeps none. Builds after an append extend the same log, so a context is a prefix of
    its log and costs nothing to create.

    A log made from messages held in memory (:class:`SessionContext`'s constructor) reads
    them from its list instead.
    """

    __slots__ = ("_json", "_models", "_table", "sources")

    def __init__(
        self,
        table: EntryTable | None,
        sources: array[int],
        json: list[JsonObject] | None = None,
    ) -> None:
        self._table = table
        self.sources = sources
        self._json = json
        self._models: dict[int, AgentMessage] = {}

    @classmethod
    def of_messages(cls, messages: list[JsonObject]) -> _MessageLog:
        return cls(None, array("q"), messages)

    def __len__(self) -> int:
        return len(self.sources) if self._json is None else len(self._json)

    def json(self, position: int) -> JsonObject:
        if self._json is not None:
            return self._json[position]
        assert self._table is not None
        return _message_of(self._table.peek([self.sources[position]])[0])

    def model(self, position: int) -> AgentMessage:
        model = self._models.get(position)
        if model is None:
            model = self._models[position] = message_from_json(self.json(position))
        return model

    def iter_json(self, start: int, stop: int) -> Iterator[JsonObject]:
        """Messages ``start`` to ``stop``, their entries read a block at a time."""
        if self._json is not None:
            yield from self._json[start:stop]
            return
        assert self._table is not None
        peek = self._table.peek
        sources = self.sources
        for block in range(start, stop, _READ_BLOCK):
            for entry in peek(sources[block : min(stop, block + _READ_BLOCK)]):
                yield _message_of(entry)

    def iter_stringified(self, start: int, stop: int) -> Iterator[bytes]:
        """Messages ``start`` to ``stop`` as ``JSON.stringify`` writes them, a block at a time
        (comma-separated, without brackets). Entries read from the file are decoded for
        encoding alone (:meth:`EntryTable.peek_to_restringify`), which spares searching the
        output for numbers orjson writes otherwise; a block that cannot be read that way
        takes the general encoder."""
        for block in range(start, stop, _READ_BLOCK):
            end = min(stop, block + _READ_BLOCK)
            if self._json is not None:
                yield codec.dumps_items(self._json[block:end])
                continue
            assert self._table is not None
            # JSON holds no cycles, yet the objects a block builds set off collections,
            # whose full passes walk every id of the session's index (a sixth of the time
            # of writing out a context of 20,000 messages at a million entries).
            with collector_paused():
                encoded = _stringified(self._table, self.sources[block:end])
            yield encoded

    def iter_models(self, start: int, stop: int) -> Iterator[AgentMessage]:
        models = self._models
        for position, message in enumerate(self.iter_json(start, stop), start):
            model = models.get(position)
            yield message_from_json(message) if model is None else model


def _stringified(table: EntryTable, sources: Sequence[int]) -> bytes:
    """The messages of the entries at ``sources``, comma-separated as ``JSON.stringify``
    writes them."""
    entries = table.peek_to_restringify(sources)
    if entries is not None:
        encoded = codec.dumps_restringified(_messages_of(entries))
        if encoded is not None:
            return encoded
    return codec.dumps_items(_messages_of(table.peek(sources)))


def _messages_of(entries: list[JsonObject]) -> list[JsonObject]:
    """:func:`_message_of` of each entry: for a block of ``message`` entries that all hold
    their content, as most blocks are, their ``message`` members taken in C."""
    if list(map(dict.get, entries, repeat("type"))).count("message") == len(entries):
        messages = list(map(_MESSAGE, entries))
        # Entries that project to a message hold a message object (see EntryTable.bare).
        if not any(map(_is_none, map(dict.get, messages, repeat("content")))):
            return messages
    return list(map(_message_of, entries))


def _message_of(entry: JsonObject) -> JsonObject:
    """The message of an entry known to project to exactly one."""
    if entry.get("type") == "message":
        message = entry["message"]
        if message.get("content") is not None:
            return message  # type: ignore[no-any-return]
    return entry_to_context_messages(entry)[0]


class _Prefix(Sequence[_T]):
    """The first ``length`` items of a message log, as JSON or as models."""

    __slots__ = ("_get", "_iterate", "_length")

    def __init__(
        self, get: Callable[[int], _T], iterate: Callable[[int, int], Iterator[_T]], length: int
    ) -> None:
        self._get = get
        self._iterate = iterate
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...
    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        if isinstance(index, slice):
            positions = range(self._length)[index]
            if positions.step == 1:
                # A window of the context: read in blocks, like iteration.
                return list(self._iterate(positions.start, positions.stop))
            return [self._get(position) for position in positions]
        position = range(self._length)[index]
        return self._get(position)

    def __iter__(self) -> Iterator[_T]:
        return self._iterate(0, self._length)


class SessionContext:
    """Messages, thinking level and model at one position of the session.

    :attr:`message_json` holds the messages as Pi would send them to ``convertToLlm`` (possibly
    shared with the session's cache: treat them as read-only). :attr:`messages` gives the same
    messages as validated models. Both are read from the session when accessed, so holding a
    context of a long session costs little (iterating reads it through once); a context
    read from a session file can be read while that session is open.
    """

    __slots__ = ("_length", "_log", "_model_json", "_thinking_json")

    def __init__(
        self,
        message_json: Sequence[JsonObject] = (),
        thinking_level: Any = "off",
        model: JsonObject | None = None,
    ) -> None:
        self._log = _MessageLog.of_messages(list(message_json))
        self._length = len(self._log)
        self._thinking_json = thinking_level
        self._model_json = model

    @classmethod
    def _of_log(cls, log: _MessageLog, thinking_level: Any, model: JsonObject | None) -> Self:
        context = cls.__new__(cls)
        context._log = log
        context._length = len(log)
        context._thinking_json = thinking_level
        context._model_json = model
        return context

    @property
    def message_json(self) -> Sequence[JsonObject]:
        return _Prefix(self._log.json, self._log.iter_json, self._length)

    def stringified_messages(self, start: int = 0, stop: int | None = None) -> Iterator[bytes]:
        """:attr:`message_json` (or its messages ``start`` to ``stop``) as ``JSON.stringify``
        writes each message, a block of messages at a time, comma-separated without brackets
        (read through once, as iterating does)."""
        last = self._length if stop is None else min(stop, self._length)
        return self._log.iter_stringified(start, last)

    @property
    def messages(self) -> Sequence[AgentMessage]:
        return _Prefix(self._log.model, self._log.iter_models, self._length)

    @property
    def thinking_level(self) -> str:
        """The thinking level (``"off"`` when the path sets none or sets a non-string)."""
        level = self._thinking_json
        return level if isinstance(level, str) else "off"

    @property
    def model(self) -> ModelRef | None:
        from ctxmodes.session.models import ModelRef

        if self._model_json is None:
            return None
        return ModelRef.model_validate(self._model_json, strict=False)

    def to_json(self) -> JsonObject:
        """``{messages, thinkingLevel, model}`` as Pi's ``buildSessionContext`` returns it."""
        return {"messages": list(self._log.iter_json(0, self._length)), **self.settings_json()}

    def settings_json(self) -> JsonObject:
        """:meth:`to_json` without the messages: ``{thinkingLevel, model}``, where
        ``thinkingLevel`` is left out when the path's last change set it to undefined."""
        out: JsonObject = {}
        if self._thinking_json is not _MISSING:
            out["thinkingLevel"] = self._thinking_json
        out["model"] = self._model_json
        return out


def _is_model_source(table: EntryTable) -> Callable[[int], bool]:
    types = table.types

    def matches(index: int) -> bool:
        entry_type = types[index]
        if entry_type == "model_change":
            return True
        if entry_type != "message":
            return False
        message = table.entry(index).get("message")
        return isinstance(message, dict) and message.get("role") == "assistant"

    return matches


def latest_compaction(table: EntryTable, path: ActivePath) -> int:
    """The latest compaction entry on ``path`` (``NO_ENTRY`` if none)."""
    leaf = path.leaf
    if leaf is None:
        return NO_ENTRY
    return table.nearest(leaf, _COMPACTION, "compaction", path.indexes)


def context_entry_indexes(table: EntryTable, path: ActivePath) -> IndexRuns:
    """Pi's ``buildContextEntries`` for the leaf of ``path``, as entry indexes."""
    leaf = path.leaf
    if leaf is None:
        return IndexRuns([])
    runs = IndexRuns(table.path_runs(leaf))
    compaction = latest_compaction(table, path)
    if compaction == NO_ENTRY:
        return runs
    at = path.position(compaction)
    assert at is not None
    selected = [range(compaction, compaction + 1)]
    first_kept_id = table.entry(compaction).get("firstKeptEntryId")
    first_kept = table.index_of(first_kept_id) if isinstance(first_kept_id, str) else None
    kept_from = path.position(first_kept) if first_kept is not None else None
    if kept_from is not None and kept_from < at:
        selected += runs.between(kept_from, at).runs
    selected += runs.between(at + 1, len(runs)).runs
    return IndexRuns(selected)


def path_model(table: EntryTable, path: ActivePath) -> JsonObject | None:
    """The ``{provider, modelId}`` of ``path``'s context (:attr:`SessionContext.model`'s
    JSON) without building the context: the nearest model source above the leaf."""
    return _settings(table, path)[1]


def _settings(table: EntryTable, path: ActivePath) -> tuple[Any, JsonObject | None]:
    leaf = path.leaf
    if leaf is None:
        return "off", None
    thinking: Any = "off"
    source = table.nearest(leaf, _THINKING, "thinking_level_change", path.indexes)
    if source != NO_ENTRY:
        thinking = table.entry(source).get("thinkingLevel", _MISSING)
    model: JsonObject | None = None
    source = table.nearest(leaf, _MODEL, _is_model_source(table), path.indexes)
    if source != NO_ENTRY:
        entry = table.entry(source)
        if entry.get("type") == "model_change":
            model = _present(
                provider=entry.get("provider", _MISSING),
                modelId=entry.get("modelId", _MISSING),
            )
        else:
            message = entry["message"]
            model = _present(
                provider=message.get("provider", _MISSING),
                modelId=message.get("model", _MISSING),
            )
    return thinking, model


class ContextBuilder:
    """Builds the context of a session's active path, reusing the previous result.

    After an append the new context is the previous one plus the new entry's messages (unless
    the new entry is a compaction), so building it again costs O(1) instead of O(context).
    """

    def __init__(self, table: EntryTable) -> None:
        self._table = table
        self._leaf: int | None = None
        self._compaction = NO_ENTRY
        self._log = _MessageLog(table, array("q"))

    def build(self, path: ActivePath) -> SessionContext:
        table = self._table
        leaf = path.leaf
        if leaf is None:
            return SessionContext([], "off", None)
        compaction = latest_compaction(table, path)
        if (
            self._leaf is not None
            and table.parents[leaf] == self._leaf
            and compaction == self._compaction
            and leaf != compaction
        ):
            self._log.sources.extend(table.message_sources((leaf,)))
        else:
            sources = table.message_sources(context_entry_indexes(table, path))
            self._log = _MessageLog(table, sources)
            self._compaction = compaction
        self._leaf = leaf
        thinking, model = _settings(table, path)
        return SessionContext._of_log(self._log, thinking, model)

    def context_at(self, leaf: int | None) -> SessionContext:
        """The context at any entry, without touching the cached active-path result."""
        table = self._table
        path = ActivePath(table, leaf)
        if leaf is None:
            return SessionContext([], "off", None)
        log = _MessageLog(table, table.message_sources(context_entry_indexes(table, path)))
        thinking, model = _settings(table, path)
        return SessionContext._of_log(log, thinking, model)


_UNSET: Final = object()


def _leaf_for(table: EntryTable, leaf_id: Any) -> int | None:
    # Pi: null means "before the first entry"; absent or unknown means the last entry.
    if leaf_id is None:
        return None
    if leaf_id is not _UNSET:
        index = table.index_of(leaf_id)
        if index is not None:
            return index
    return len(table) - 1 if len(table) else None


def build_context_entries(entries: Sequence[JsonObject], leaf_id: Any = _UNSET) -> list[JsonObject]:
    """Pi's free ``buildContextEntries(entries, leafId)`` over stored entry objects."""
    table = EntryTable.from_entries(entries)
    path = ActivePath(table, _leaf_for(table, leaf_id))
    return table.entries(context_entry_indexes(table, path))


def build_session_context(entries: Sequence[JsonObject], leaf_id: Any = _UNSET) -> SessionContext:
    """Pi's free ``buildSessionContext(entries, leafId)`` over stored entry objects.

    ``leaf_id`` ``None`` gives the empty context; omitted or unknown means the last entry.
    """
    table = EntryTable.from_entries(entries)
    return ContextBuilder(table).context_at(_leaf_for(table, leaf_id))
