"""Plugins' user interface in RPC mode: Pi's ``extension_ui_request`` lines.

A notice becomes a ``notify`` request, a status text ``setStatus``, text put in the editor
``set_editor_text``: the client shows them or not, and answers nothing. A confirmation is a
``confirm`` dialog: the plugin waits until the client's ``extension_ui_response`` with the
dialog's ``id`` arrives; a cancelled dialog, or input that ends first, answers no.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from typing import Any

from ctxmodes.hostapi import NotifyLevel
from ctxmodes.rpc.framing import OutputLines
from ctxmodes.rpc.protocol import JsonObject
from ctxmodes.sdk.events import AgentEvent, Notice, StatusChanged


class _Dialog:
    def __init__(self) -> None:
        self.answered = threading.Event()
        self.answer: Mapping[str, Any] | None = None


class Dialogs:
    """The requests sent to the client and the dialogs waiting for its answer."""

    def __init__(self, lines: OutputLines) -> None:
        self._lines = lines
        self._lock = threading.Lock()
        self._waiting: dict[str, _Dialog] = {}
        self._ended = False

    def on_event(self, event: AgentEvent) -> None:
        """An agent listener: notices and status texts go to the client."""
        if isinstance(event, Notice):
            self.notify(event.message, event.level)
        elif isinstance(event, StatusChanged):
            self._request("setStatus", {"statusKey": event.key, "statusText": event.text})

    def notify(self, message: str, level: NotifyLevel) -> None:
        self._request("notify", {"message": message, "notifyType": level})

    def set_editor_text(self, text: str) -> None:
        self._request("set_editor_text", {"text": text})

    def confirm(self, title: str, message: str) -> bool:
        """Ask the client; False when it cancels or the input ended."""
        dialog = _Dialog()
        with self._lock:
            if self._ended:
                return False
            request_id = str(uuid.uuid4())
            self._waiting[request_id] = dialog
        self._request("confirm", {"title": title, "message": message}, request_id)
        dialog.answered.wait()
        answer = dialog.answer
        if answer is None or answer.get("cancelled") is True:
            return False
        return answer.get("confirmed") is True

    def answer(self, response: Mapping[str, Any]) -> None:
        """The client's ``extension_ui_response``; one for no dialog waiting is ignored, as
        Pi ignores it."""
        with self._lock:
            dialog = self._waiting.pop(str(response.get("id")), None)
        if dialog is not None:
            dialog.answer = response
            dialog.answered.set()

    def end(self) -> None:
        """The input ended: every waiting dialog is answered as cancelled."""
        with self._lock:
            self._ended = True
            waiting, self._waiting = self._waiting, {}
        for dialog in waiting.values():
            dialog.answered.set()

    def _request(self, method: str, fields: JsonObject, request_id: str | None = None) -> None:
        request: JsonObject = {
            "type": "extension_ui_request",
            "id": request_id or str(uuid.uuid4()),
            "method": method,
        }
        # JSON.stringify leaves out what is undefined, such as a cleared status.
        request.update((key, value) for key, value in fields.items() if value is not None)
        self._lines.write(request)
