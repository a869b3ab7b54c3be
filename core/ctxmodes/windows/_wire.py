"""The base for data this package persists or returns to the model.

Persisted shapes are shared byte for byte with sessions written by the TypeScript extension,
so every wire model follows the same rules: camelCase (or snake_case) keys through aliases,
keys in declaration order, optional keys omitted rather than written as ``null`` (JavaScript's
``undefined``), and strict types when reading (a string ``"3"`` is not a window number).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class WireModel(BaseModel):
    """A frozen, strict pydantic model whose ``dump()`` is its exact wire form."""

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        populate_by_name=True,
        extra="ignore",
    )

    @model_validator(mode="before")
    @classmethod
    def _optional_keys_are_omitted(cls, data: Any) -> Any:
        # An optional key is either absent or holds a value; an explicit null never
        # came from a writer of this format, so it marks the data as malformed.
        if isinstance(data, dict):
            for name, field in cls.model_fields.items():
                if field.is_required() or field.default is not None:
                    continue
                key = field.alias or name
                if key in data and data[key] is None:
                    raise ValueError(f"{key} must be omitted, not null")
        return data

    def dump(self) -> dict[str, Any]:
        """The wire form: aliased keys in declaration order, absent optionals left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
