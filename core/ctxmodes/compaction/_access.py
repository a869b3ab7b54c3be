"""Uniform, JavaScript-like field access over typed models and raw stored JSON.

The computations accept entries and messages as typed models or as the JSON objects they
are stored as. A record that does not fit its declared shape is kept by the session store as
an ``UnknownMessage`` / ``UnknownEntry`` / ``UnknownContent`` holding the stored fields, and
the content blocks inside an unknown message stay plain dicts. Pi reads all of these the same
way, field by field, and only fails when it touches a field that is not there; these helpers
let the computations do the same, whatever form a record comes in.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Final

from pydantic import BaseModel, PlainSerializer, SkipValidation
from pydantic.alias_generators import to_snake

from ctxmodes.compaction.errors import MalformedMessageError
from ctxmodes.session.models import AgentMessage, SessionEntry, to_json

JsonObject = dict[str, Any]
#: A message as a model or as the JSON object it is stored as.
MessageLike = AgentMessage | JsonObject
#: An entry as a model or as the JSON object it is stored as.
EntryLike = SessionEntry | JsonObject


def _stored_forms(records: list[Any]) -> list[JsonObject]:
    return [as_json(record) for record in records]


# Fields holding session records as they were found. They are not validated again: a record
# the store kept as unknown may carry a known role or type, which the discriminated unions
# would reject. They serialize to their stored JSON form.
#: A list of messages inside a result model.
MessageList = Annotated[
    list[AgentMessage], SkipValidation, PlainSerializer(_stored_forms, return_type=list[JsonObject])
]
#: A list of entries inside a result model.
EntryList = Annotated[
    list[EntryLike], SkipValidation, PlainSerializer(_stored_forms, return_type=list[JsonObject])
]


class _Missing:
    """JavaScript's ``undefined``: the field is absent."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()


@functools.cache
def _attribute_name(name: str) -> str:
    return to_snake(name)


def field(record: Any, name: str) -> Any:
    """``record[name]`` for a stored field ``name`` (camelCase), or :data:`MISSING`.

    Typed models expose the field under its snake_case attribute; unknown records (and
    unknown fields of typed ones) keep the stored camelCase name.
    """
    if isinstance(record, dict):
        return record.get(name, MISSING)
    if record is None or isinstance(record, str | int | float | list):
        return MISSING
    value = getattr(record, _attribute_name(name), MISSING)
    if value is MISSING:
        value = getattr(record, name, MISSING)
    return value


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness (``""``, ``0``, ``NaN``, ``null`` and ``undefined`` are false)."""
    if value is None or value is MISSING or value is False:
        return False
    if isinstance(value, int | float):
        return value == value and value != 0
    if isinstance(value, str):
        return value != ""
    return True


def require_str(record: Any, name: str, where: str) -> str:
    """The string field ``name``; raises where Pi would fail reading its ``length``."""
    value = field(record, name)
    if not isinstance(value, str):
        raise MalformedMessageError(f"{where}: field {name!r} is not a string")
    return value


def is_object(value: Any) -> bool:
    """True for anything JavaScript would treat as an object (a dict or a model)."""
    return value is not None and value is not MISSING and not isinstance(value, str | int | float)


def as_json(record: BaseModel | JsonObject) -> JsonObject:
    """The stored JSON form of a record (the record itself when it already is JSON)."""
    return record if isinstance(record, dict) else to_json(record)
