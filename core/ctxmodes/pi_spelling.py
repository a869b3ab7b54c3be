"""Settings that a file may spell as ctxmodes does (``max_retries``) or as Pi's
``settings.json`` does (``maxRetries``, the field's alias), but not both ways at once.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class PiSpelledSettings(BaseModel):
    """A frozen settings table whose fields take Pi's spelling as their alias; an unknown
    key is an error, and so is one setting given under both its names (which would leave
    one of the two values unused without a word)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, values: Any) -> Any:
        if isinstance(values, dict):
            for name, field in cls.model_fields.items():
                if field.alias not in (None, name) and name in values and field.alias in values:
                    raise ValueError(f"{name} and {field.alias} are one setting: keep one of them")
        return values
