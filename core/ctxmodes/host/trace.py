"""A listener that writes every model request as one JSON line (``ctxmodes run --trace``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ctxmodes.errors import CtxmodesError
from ctxmodes.host.records import HostRecord, ProviderRequested
from ctxmodes.providers.base import ModelRequest
from ctxmodes.providers.secrets import redact_headers
from ctxmodes.session.models import to_json


def request_json(request: ModelRequest, transport: str) -> dict[str, Any]:
    """Exactly what the model was sent: purpose, system prompt, messages (after projection
    and shaping, in their stored JSON form), tool schemas, the output cap and, when one is
    asked for, the thinking level (and the user's thinking budgets); the values of
    credential headers are redacted."""
    traced: dict[str, Any] = {
        "purpose": request.purpose,
        "transport": transport,
        "system_prompt": request.system_prompt,
        "max_tokens": request.max_tokens,
        "tools": [tool.model_dump() for tool in request.tools],
        "messages": [to_json(message) for message in request.messages],
    }
    if request.reasoning not in (None, "off"):
        traced["reasoning"] = request.reasoning
    if request.thinking_budgets:
        traced["thinking_budgets"] = dict(request.thinking_budgets)
    # Only a mode that shapes the request identity sets these; most traces never have them.
    if request.headers:
        traced["headers"] = redact_headers(request.headers)
    if request.client_metadata:
        traced["client_metadata"] = dict(request.client_metadata)
    return traced


class RequestTrace:
    """Appends one line per ``provider_request`` record to a file; close it when done.

    A listener cannot stop the run it listens to, so a request that cannot be written (a
    full disk) is remembered instead, and :meth:`raise_if_failed` reports it: a trace never
    loses a request without a word.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._failure: CtxmodesError | None = None
        try:
            self._file: BinaryIO = path.open("ab")
        except OSError as exc:
            raise CtxmodesError(f"cannot open trace file {path}: {exc.strerror or exc}") from None

    def __call__(self, record: HostRecord) -> None:
        if not isinstance(record, ProviderRequested) or self._failure is not None:
            return
        try:
            line = orjson.dumps(request_json(record.request, record.transport))
            self._file.write(line + b"\n")
            self._file.flush()
        except (OSError, orjson.JSONEncodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            self._failure = CtxmodesError(f"cannot write trace file {self._path}: {reason or exc}")

    def raise_if_failed(self) -> None:
        """:raises CtxmodesError: a request could not be written to the trace."""
        if self._failure is not None:
            raise self._failure

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as exc:
            # After a failed write the lost bytes are still buffered; that is already known.
            if self._failure is None:
                raise CtxmodesError(
                    f"cannot write trace file {self._path}: {exc.strerror or exc}"
                ) from None
