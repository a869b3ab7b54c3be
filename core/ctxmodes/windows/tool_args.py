"""Validation of ``history``/``notes`` calls, and the lenient reading of optional arguments.

Validation is deliberately narrow, as in the shared contract: the action must be known, no
field outside the operation's set may appear, and required fields must be strings (non-empty
unless the operation allows empty text). Optional fields are not type-checked here; the
operations read them leniently (a non-integer limit means the default), because models do
send ``"10"`` or ``null`` and a refusal would cost a turn for no benefit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxmodes.errors import CtxmodesError
from ctxmodes.windows.tools import OPERATIONS, Family, Operation


class ToolArgumentError(CtxmodesError):
    """A ``history`` or ``notes`` call the contract rejects; the message goes to the model."""


@dataclass(frozen=True, slots=True)
class ValidatedCall:
    """A call that passed validation: its operation and its arguments without ``action``."""

    operation: Operation
    arguments: dict[str, Any]

    @property
    def family(self) -> Family:
        return self.operation.family

    @property
    def action(self) -> str:
        return self.operation.action


def validate_call(family: Family, arguments: Mapping[str, Any]) -> ValidatedCall:
    """Check a flat-router call (``{"action": ..., ...fields}``).

    :raises ToolArgumentError: ``"<family> requires a supported action"``,
        ``"<family> <action> does not accept <field>"`` or
        ``"<family> <action> requires <field>"`` (fields checked in alphabetical order).
    """
    fields = {key: value for key, value in arguments.items() if key != "action"}
    return validate_action(family, arguments.get("action"), fields)


def validate_action(family: Family, action: object, arguments: Mapping[str, Any]) -> ValidatedCall:
    """Check a call given its action separately (a namespaced call, or a routed one)."""
    operation = OPERATIONS[family].get(action) if isinstance(action, str) else None
    if operation is None:
        raise ToolArgumentError(f"{family} requires a supported action")
    return validate_operation(operation, arguments)


def validate_operation(operation: Operation, arguments: Mapping[str, Any]) -> ValidatedCall:
    """Check the arguments of one operation (a namespaced call, or a flat call's fields)."""
    prefix = f"{operation.family} {operation.action}"
    for field in arguments:
        if field not in operation.fields:
            raise ToolArgumentError(f"{prefix} does not accept {field}")
    for field in operation.fields:
        if field not in operation.required:
            continue
        value = arguments.get(field)
        if not isinstance(value, str) or (not value and field not in operation.allow_empty):
            raise ToolArgumentError(f"{prefix} requires {field}")
    return ValidatedCall(operation, dict(arguments))


def integer_argument(value: object, default: int) -> int:
    """An integer argument as the operations read it: anything but an integer is ``default``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    # JSON has one number type: 10.0 is the integer 10, as JavaScript sees it.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def optional_integer(value: object) -> int | None:
    """A nullable integer argument (line bounds): anything but an integer is ``None``."""
    result = integer_argument(value, 0)
    return result or None


def filter_argument(value: object) -> str | None:
    """A string filter: a non-empty string filters, anything else means no filter."""
    return value if isinstance(value, str) and value else None


def string_argument(value: object) -> str:
    return value if isinstance(value, str) else ""
