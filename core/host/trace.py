"""A listener that writes every model request as one JSON line (``ctxmodes run --trace``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ctxmodes.errors import CtxmodesError
from ctxmodes.host.records import HostRecord, ProviderRequested
from ctxmodes.providers.base import ModelRequest
from ctxmodes.session.models import to_json


def request_json(request: ModelRequest, transport: str) -> dict[str, Any]:
    """Exactly what the model was sent: purpose, system prompt, messages (after projection
    and shaping, in their stored JSON form), tool schemas and the output cap."""
    traced: dict[str, Any] = {
        "purpose": request.purpose,
        "transport": transport,
        "system_prompt": request.system_prompt,
        "max_tokens": request.max_tokens,
        "tools": [tool.model_dump() for tool in request.tools],
        "messages": [to_json(message) for message in request.messages],
    }
    # Only a mode that shapes the request identity sets these; most traces never have them.
    if request.headers:
        traced["headers"] = dict(request.headers)
    if request.client_metadata:
        traced["client_metadata"] = dict(request.client_metadata)
    return traced


class RequestTrace:
    """Appends one line per ``provider_request`` record to a file; close it when done."""

    def __init__(self, path: Path) -> None:
        try:
            self._file: BinaryIO = path.open("ab")
        except OSError as exc:
            raise CtxmodesError(f"cannot open trace file {path}: {exc.strerror or exc}") from None

    def __call__(self, record: HostRecord) -> None:
        if isinstance(record, ProviderRequested):
            line = orjson.dumps(request_json(record.request, record.transport))
            self._file.write(line + b"\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()
