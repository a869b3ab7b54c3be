"""Strict tool schemas: JSON-schema constrained sampling, as pi-ai 0.85 asks for it.

A tool may ask for constrained sampling with ``constrainedSampling: {"type": "json_schema",
"strict": "prefer" | "require"}``. On a server with strict mode (``supportsStrictMode``) its
schema is rewritten to the subset strict sampling accepts — every object closed
(``additionalProperties: false``) and every property required, an optional one made nullable
instead — and sent with ``strict: true``. A schema that cannot be rewritten (``$ref``,
``oneOf``, open ``additionalProperties``, object unions, tuples, …) is sent unchanged and not
strict when the tool only prefers it, and fails the request when the tool requires it; so
does a required strict tool on a server without strict mode.
"""

from __future__ import annotations

import copy
from typing import Any

from ctxmodes.providers.wire import WireError

#: Keywords strict sampling does not accept anywhere in a schema.
UNSUPPORTED_KEYWORDS = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)


class UnsupportedStrictSchema(Exception):
    """The schema has no strict form; the message says why."""


def _types(schema: dict[str, Any]) -> list[Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return list(kind) if isinstance(kind, list) else []


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    types = _types(schema)
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "null" in _types(schema) or ("const" in schema and schema["const"] is None):
        return True
    if isinstance(schema.get("enum"), list) and None in schema["enum"]:
        return True
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(variant) for variant in variants)


def _make_strict(schema: Any) -> None:
    """Rewrite ``schema`` in place. Keys keep their places and new ones go last, as in
    pi-ai, so the JSON sent is the same byte for byte."""
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    # A key that is present counts even when null (pi-ai tests ``!== undefined``).
    for keyword in UNSUPPORTED_KEYWORDS:
        if keyword in schema:
            raise UnsupportedStrictSchema(f"{keyword} schemas are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _make_strict(variant)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _make_strict(schema["items"])
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise UnsupportedStrictSchema("properties require type object")
    if not is_object:
        return
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise UnsupportedStrictSchema("schema-valued or true additionalProperties is unsupported")
    properties = schema.get("properties")
    if "properties" in schema and not isinstance(properties, dict):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required = schema.get("required")
    if "required" in schema and (
        not isinstance(required, list) or not all(isinstance(key, str) for key in required)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    properties = properties or {}
    wanted = set(required or ())
    if any(key not in properties for key in wanted):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, value in properties.items():
        _make_strict(value)
        if key not in wanted and not _allows_null(value):
            properties[key] = {"anyOf": [value, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def strict_schema(schema: Any) -> dict[str, Any]:
    """A strict copy of a tool's parameter schema.

    :raises UnsupportedStrictSchema: the schema has no strict form.
    """
    copied = copy.deepcopy(schema)
    if not isinstance(copied, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    _make_strict(copied)
    if copied.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return copied


def resolve_strict(tool: dict[str, Any], supports_strict: bool) -> bool | None:
    """``True`` when ``tool`` is to be sent strict; ``None`` when it asks nothing (or only
    prefers strictness it cannot have).

    :raises WireError: the tool requires strict sampling it cannot have (pi-ai's message).
    """
    config = tool.get("constrainedSampling")
    if not isinstance(config, dict) or config.get("type") != "json_schema":
        return None
    required = config.get("strict") == "require"
    if not supports_strict:
        if required:
            raise WireError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, '
                "but strict tools are unsupported."
            )
        return None
    try:
        strict_schema(tool["parameters"])
    except UnsupportedStrictSchema as error:
        if required:
            raise WireError(
                f'Tool "{tool["name"]}" requires JSON-schema constrained sampling, but {error}.'
            ) from None
        return None
    return True


def tool_parameters(tool: dict[str, Any], strict: bool | None) -> Any:
    """The schema to send: the strict form for a strict tool, else the tool's own."""
    return strict_schema(tool["parameters"]) if strict is True else tool["parameters"]
