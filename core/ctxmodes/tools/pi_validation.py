"""Tool-argument validation as Pi's agent loop does it, for schemas of objects, arrays and
strings.

Pi checks a tool call's arguments against the tool's TypeBox schema before running it
(``validateToolArguments`` of pi-ai): a clone of the arguments is first converted where the
schema asks for another JSON type (``Value.Convert``: a number, boolean or ``null`` where a
string belongs becomes its ``String()``, a non-array where an array belongs becomes a
one-element array; objects are converted in place, a value at the root is not), then checked.
A failure is the tool's error result::

    Validation failed for tool "edit":
      - edits.0.newText: must have required properties newText

    Received arguments:
    {<the arguments, JSON.stringify(args, null, 2)>}

One line per error, in TypeBox's order: an object's missing required properties first (one
line naming all of them, placed at the first), then its present properties in schema order,
then an array's elements in order. Paths join the instance path with dots; the root is
``root``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxmodes.session import codec

JsonSchema = Mapping[str, Any]


class ToolArgumentsInvalid(ValueError):
    """The arguments do not fit the schema; ``str()`` is Pi's error text."""


def validate_arguments(tool_name: str, schema: JsonSchema, arguments: Any) -> Any:
    """The converted arguments, or :class:`ToolArgumentsInvalid` with Pi's text.

    ``arguments`` is what the tool call carries after the tool's own preparation (Pi's
    ``prepareArguments``); it is not modified.
    """
    converted = copy.deepcopy(arguments)
    if isinstance(converted, dict):
        _convert_properties(schema, converted)
    problems = list(_errors(schema, converted, ""))
    if not problems:
        return converted
    lines = "\n".join(f"  - {where}: {message}" for where, message in problems)
    shown = codec.dumps_indented(arguments)
    raise ToolArgumentsInvalid(
        f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{shown}'
    )


# --------------------------------------------------------------------------- conversion


def _converted(schema: JsonSchema, value: Any) -> Any:
    wanted = schema.get("type")
    if wanted == "string":
        return _as_string(value)
    if wanted == "array":
        items = value if isinstance(value, list) else [value]
        item_schema = schema.get("items")
        if isinstance(item_schema, Mapping):
            items[:] = [_converted(item_schema, item) for item in items]
        return items
    if wanted == "object" and isinstance(value, dict):
        _convert_properties(schema, value)
    return value


def _convert_properties(schema: JsonSchema, value: dict[str, Any]) -> None:
    for name, property_schema in schema.get("properties", {}).items():
        if name in value:
            value[name] = _converted(property_schema, value[name])


def _as_string(value: Any) -> Any:
    # JavaScript's String() of a JSON scalar; objects and arrays are left for the check.
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf if value > 0 else -math.inf
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return "NaN" if math.isnan(number) else codec.js_number(number)
    return value


# --------------------------------------------------------------------------- checking

_TYPE_CHECKS: Mapping[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}


def _errors(schema: JsonSchema, value: Any, path: str) -> Iterator[tuple[str, str]]:
    wanted = schema.get("type")
    check = _TYPE_CHECKS.get(wanted) if isinstance(wanted, str) else None
    if check is None:
        raise ValueError(f"schema type {wanted!r} is not supported")
    if not check(value):
        yield (path or "root", f"must be {wanted}")
        return
    if wanted == "object":
        properties = schema.get("properties", {})
        missing = [name for name in schema.get("required", ()) if name not in value]
        if missing:
            yield (_join(path, missing[0]), "must have required properties " + ", ".join(missing))
        for name, property_schema in properties.items():
            if name in value:
                yield from _errors(property_schema, value[name], _join(path, name))
    elif wanted == "array":
        item_schema = schema.get("items")
        if isinstance(item_schema, Mapping):
            for position, item in enumerate(value):
                yield from _errors(item_schema, item, _join(path, str(position)))


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
