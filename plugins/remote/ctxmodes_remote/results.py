"""What a backend answer becomes: the tool result persisted in the session, and what the model
is sent for it.

An answer carrying ``encrypted_output`` (a string) is opaque: the persisted result is the
text ``"<family> operation completed"`` with ``details = {"codexHistoryNotes":
{"encrypted_output": ...}}`` (the ciphertext and nothing else, so no plaintext the backend
may have added reaches the session file), and the model gets the ciphertext back as an
``encrypted_content`` item (:func:`encrypted_output_of`). ``images`` become image blocks of
the result.

Any other answer (no ``encrypted_output``, or one that is not a string) is plaintext, and
Remote refuses it: the call fails with :data:`PLAINTEXT_REFUSED`, the model sees only that
text, and nothing of the answer reaches the session file. Codex itself shows such answers to
the model; Remote does not, because a session file that keeps only ciphertext is what it
promises (a backend that answers in plaintext is one to fix, or to use through Local).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxmodes import RetrievalResult
from ctxmodes.session import ImageContent, ToolResultMessage
from ctxmodes.windows import DETAILS_KEY, FAMILIES, Family
from ctxmodes_remote.backend import BackendFailure
from ctxmodes_remote.result_keys import ENCRYPTED_OUTPUT_KEY

INVALID_IMAGES = "Unable to perform operation: The backend returned invalid image content."
PLAINTEXT_REFUSED = (
    "Unable to perform operation: The backend answered in plaintext; Remote keeps only the "
    "backend's encrypted output."
)


def completed_text(family: Family) -> str:
    return f"{family} operation completed"


class _BackendImage(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    # Raw base64, not a data: URL (Codex cannot use one either).
    data: str = Field(min_length=1, pattern=r"^[A-Za-z0-9+/=\s]+$")
    mime_type: str = Field(pattern=r"^image/[A-Za-z0-9.+-]+$")
    detail: Literal["auto", "high", "low", "original"] | None = None


def _images(raw: object) -> list[ImageContent]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BackendFailure(INVALID_IMAGES)
    try:
        images = [_BackendImage.model_validate(item) for item in raw]
    except ValidationError:
        raise BackendFailure(INVALID_IMAGES) from None
    return [ImageContent(data=image.data, mime_type=image.mime_type) for image in images]


def retrieval_result(family: Family, answer: Mapping[str, Any]) -> RetrievalResult:
    """The result of one successful backend answer.

    :raises BackendFailure: a plaintext answer (:data:`PLAINTEXT_REFUSED`), or ``images``
        present but malformed.
    """
    encrypted = answer.get(ENCRYPTED_OUTPUT_KEY)
    if not isinstance(encrypted, str) or not encrypted:
        raise BackendFailure(PLAINTEXT_REFUSED)
    return RetrievalResult(
        text=completed_text(family),
        details={DETAILS_KEY: {ENCRYPTED_OUTPUT_KEY: encrypted}},
        images=tuple(_images(answer.get("images"))),
    )


def encrypted_output_of(message: ToolResultMessage) -> str | None:
    """The ciphertext a persisted Remote result carries, ``None`` for any other result."""
    if message.is_error or message.tool_name not in FAMILIES:
        return None
    details = message.details
    if not isinstance(details, dict):
        return None
    result = details.get(DETAILS_KEY)
    if not isinstance(result, dict):
        return None
    encrypted = result.get(ENCRYPTED_OUTPUT_KEY)
    return encrypted if isinstance(encrypted, str) else None
