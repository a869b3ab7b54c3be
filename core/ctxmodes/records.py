"""Immutable records for what plugins declare, without the dataclasses module.

``ModeSpec`` and ``CliCommand`` are built while ``ctxmodes --help`` and ``ctxmodes modes``
start, and importing :mod:`dataclasses` imports :mod:`inspect` (with ``ast``, ``dis`` and
``tokenize``), a fifth of such a start. A record here behaves as a frozen dataclass does:
fields set once by ``__init__``, assignment refused, equality, hashing and ``repr`` by field.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from typing import Any, ClassVar


class FrozenRecord:
    """Base of an immutable record: a subclass lists its fields in ``__slots__`` and
    ``_fields`` and sets them in ``__init__`` with :meth:`_set`."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _set(self, **values: Any) -> None:
        for field in self._fields:
            object.__setattr__(self, field, values[field])

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to {name!r}: a {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete {name!r}: a {type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenRecord) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in self._fields)
        return f"{type(self).__name__}({shown})"
