"""Keeping credentials out of what ctxmodes writes: traces, logs, error messages.

Headers are judged by name (``authorization``, anything naming a key, token, secret,
cookie or password); free text — an error body a server echoed a key into — is cleaned of
the exact secrets the call used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

REDACTED: Final = "[redacted]"

_SENSITIVE_HEADER = re.compile(
    r"authorization|api[-_]?key|token|secret|cookie|password|credential", re.IGNORECASE
)
#: Shorter strings are not scrubbed from text: they would mangle ordinary words.
_MIN_SECRET_LENGTH = 8


def is_sensitive_header(name: str) -> bool:
    return bool(_SENSITIVE_HEADER.search(name))


def redact_headers(headers: Mapping[str, str | None]) -> dict[str, str | None]:
    """``headers`` with the value of every sensitive one replaced."""
    return {
        name: (REDACTED if value is not None and is_sensitive_header(name) else value)
        for name, value in headers.items()
    }


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` without any of ``secrets`` (nor their ``Bearer`` form)."""
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, REDACTED)
    return text
