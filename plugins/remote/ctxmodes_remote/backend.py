"""The client of a Codex history and notes backend (``alpha/history/v2``, ``alpha/notes/v2``).

Every call is ``POST {base}/alpha/{family}/v2/{operation}`` with the model's arguments as
they came (ciphertext stays ciphertext; only the routing ``action`` is dropped), the
``context`` object last, overwriting any the model sent, the provider's credentials, the
truncation-policy header, and ``x-openai-encrypted-tool-arguments: true`` on exactly the
four operations whose arguments Codex encrypts. There is no retry and no fallback: a call
that fails, for whatever reason, is one model-facing error text. The deadline of a call is
35 seconds, and the run's abort signal ends it at once.

Status codes and error bodies never reach the model (as in Codex): a backend that wants to
explain a refusal answers 200 with JSON. They are logged by status only; request and
response bodies, which may hold ciphertext or credentials, are never logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx
import orjson

from ctxmodes import AbortedError, AbortSignal, CtxmodesError
from ctxmodes.providers import BackendAccess, BackendRoute, ProviderError, guarded
from ctxmodes.windows import OPERATIONS, ROOT_AGENT_NAME, THREAD_HINT_MAX_BYTES, Family, utf8_length

_log = logging.getLogger(__name__)

#: Codex's deadline for one history or notes call.
BACKEND_TIMEOUT_SECONDS: Final = 35.0
#: A larger answer is refused rather than held in memory (Codex truncates outputs to the
#: model's policy long before this).
MAX_ANSWER_BYTES: Final = 32 * 1024 * 1024

ENCRYPTED_ARGUMENTS_HEADER: Final = "x-openai-encrypted-tool-arguments"
TRUNCATION_POLICY_HEADER: Final = "x-openai-tool-output-truncation-policy"
THREAD_HINT_PATH: Final = "alpha/notes/v2/thread_hint"
THREAD_HINT_POLICY: Final[Mapping[str, Any]] = {"mode": "bytes", "limit": THREAD_HINT_MAX_BYTES}

#: The model-facing texts of a failed call, as Codex words them.
REQUEST_FAILED: Final = "Unable to perform operation: The backend request failed."
INVALID_ANSWER: Final = "Unable to perform operation: The backend returned invalid JSON."

#: Operations whose arguments carry ciphertext: they get the encrypted-arguments header.
ENCRYPTED_OPERATIONS: Final = frozenset(
    (operation.family, operation.action)
    for family_operations in OPERATIONS.values()
    for operation in family_operations.values()
    if operation.encrypted
)


class BackendFailure(CtxmodesError):
    """A backend call that produced no usable answer; ``str()`` is the model-facing text.

    :ivar status: the HTTP status, when an answer arrived.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class CallerContext:
    """Who is asking: the ``context`` object every call carries."""

    session_id: str
    agent_name: str = ROOT_AGENT_NAME

    def dump(self) -> dict[str, str]:
        return {"session_id": self.session_id, "current_agent_name": self.agent_name}


def operation_path(family: Family, action: str) -> str:
    """``alpha/<family>/v2/<action>`` for a known operation.

    :raises KeyError: ``action`` is not an operation of ``family`` (never sent anywhere).
    """
    operation = OPERATIONS[family][action]
    return f"alpha/{operation.family}/v2/{operation.action}"


def request_body(arguments: Mapping[str, Any], caller: CallerContext) -> bytes:
    """The model's arguments unchanged, minus the routing ``action``, plus ``context`` last."""
    body = {key: value for key, value in arguments.items() if key not in ("action", "context")}
    body["context"] = caller.dump()
    return orjson.dumps(body)


class HistoryNotesBackend:
    """Calls the backend of a provider that implements
    :class:`~ctxmodes.providers.backend.BackendAccess`.

    :param timeout: the deadline of one call, in seconds.
    """

    def __init__(self, access: BackendAccess, *, timeout: float = BACKEND_TIMEOUT_SECONDS) -> None:
        self._access = access
        self._timeout = timeout

    def call(
        self,
        family: Family,
        action: str,
        arguments: Mapping[str, Any],
        caller: CallerContext,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]:
        """Run one operation and return the backend's JSON object.

        :raises BackendFailure: no answer, a non-2xx status, or an answer that is not a
            JSON object.
        :raises AbortedError: ``signal`` aborted first.
        """
        route = self._route()
        headers = {TRUNCATION_POLICY_HEADER: _policy(route.truncation_policy)}
        if (family, action) in ENCRYPTED_OPERATIONS:
            headers[ENCRYPTED_ARGUMENTS_HEADER] = "true"
        path = operation_path(family, action)
        return self._post(route, path, request_body(arguments, caller), headers, signal)

    def thread_hint(self, caller: CallerContext, signal: AbortSignal | None = None) -> str | None:
        """The backend's hint for a new window: its ``text`` when it is a non-empty string of
        at most 4,000 UTF-8 bytes; any failure or other answer means no hint.

        :raises AbortedError: ``signal`` aborted first.
        """
        try:
            route = self._route()
            answer = self._post(
                route,
                THREAD_HINT_PATH,
                request_body({}, caller),
                {TRUNCATION_POLICY_HEADER: _policy(THREAD_HINT_POLICY)},
                signal,
            )
        except BackendFailure:
            return None
        text = answer.get("text")
        if not isinstance(text, str) or not text or utf8_length(text) > THREAD_HINT_MAX_BYTES:
            return None
        return text

    def _route(self) -> BackendRoute:
        try:
            return self._access.backend_route()
        except ProviderError as error:
            _log.warning("history/notes backend unavailable: %s", error)
            raise BackendFailure(REQUEST_FAILED) from None

    def _post(
        self,
        route: BackendRoute,
        path: str,
        body: bytes,
        headers: Mapping[str, str],
        signal: AbortSignal | None,
    ) -> dict[str, Any]:
        all_headers = {**route.headers, "content-type": "application/json", **headers}
        exchange = _Exchange(route.client, route.url(path), body, all_headers, self._timeout)
        status, raw = exchange.run(signal)
        if not 200 <= status < 300:
            _log.warning("history/notes backend answered %s to %s%s", status, path, _said(raw))
            raise BackendFailure(REQUEST_FAILED, status=status)
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError:
            _log.warning("history/notes backend sent invalid JSON for %s", path)
            raise BackendFailure(INVALID_ANSWER, status=status) from None
        if not isinstance(answer, dict):
            _log.warning("history/notes backend sent a non-object for %s", path)
            raise BackendFailure(INVALID_ANSWER, status=status)
        return answer


#: How much of an error answer's own words the log keeps.
_SAID_MAX_CHARS: Final = 200


def _said(raw: bytes) -> str:
    """What an error answer says, for the log line (``": <code>: <message>"``): the
    ``error`` object ``ctxmodes serve`` answers, or the ``detail`` string of the ChatGPT
    backend; nothing when it says neither. Printable characters only, and at most
    :data:`_SAID_MAX_CHARS` of them."""
    try:
        answer = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(answer, dict):
        return ""
    error, detail = answer.get("error"), answer.get("detail")
    if isinstance(error, dict):
        words = [error.get("code"), error.get("message")]
        said = ": ".join(word for word in words if isinstance(word, str) and word)
    else:
        said = detail if isinstance(detail, str) else ""
    said = "".join(char if char.isprintable() else "?" for char in said[:_SAID_MAX_CHARS])
    return f": {said}" if said else ""


def _policy(policy: Mapping[str, Any]) -> str:
    return orjson.dumps(dict(policy)).decode()


class _Exchange:
    """One request on a worker thread, so that the deadline covers the whole exchange and
    an abort returns at once (httpx's own timeouts bound each phase, not the total).

    The worker sends inside :func:`~ctxmodes.providers.http.guarded`, the providers' own
    abort-and-deadline scope, so on real sockets an abandoned request ends at once too; an
    in-process transport finishes on its own, and its outcome is dropped.
    """

    def __init__(
        self,
        client: httpx.Client,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float,
    ) -> None:
        self._client = client
        self._url = url
        self._body = body
        self._headers = dict(headers)
        self._timeout = timeout
        self._finished = threading.Event()
        self._outcome: tuple[int, bytes] | BackendFailure | None = None

    def run(self, signal: AbortSignal | None) -> tuple[int, bytes]:
        unregister = signal.add_callback(self._finished.set) if signal is not None else None
        try:
            worker = threading.Thread(
                target=self._work, args=(signal,), name="remote-backend-call", daemon=True
            )
            worker.start()
            self._finished.wait(self._timeout)
        finally:
            if unregister is not None:
                unregister()
        if signal is not None and signal.aborted:
            raise AbortedError(signal.reason or "aborted")
        outcome = self._outcome
        if outcome is None:
            _log.warning("history/notes backend timed out after %.1f s", self._timeout)
            raise BackendFailure(REQUEST_FAILED)
        if isinstance(outcome, BackendFailure):
            raise outcome
        return outcome

    def _work(self, signal: AbortSignal | None) -> None:
        try:
            with (
                guarded(signal, self._timeout),
                self._client.stream(
                    "POST",
                    self._url,
                    content=self._body,
                    headers=self._headers,
                    timeout=self._timeout,
                ) as response,
            ):
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw += chunk
                    if len(raw) > MAX_ANSWER_BYTES:
                        raise _TooLarge()
                self._outcome = (response.status_code, bytes(raw))
        except _TooLarge:
            _log.warning("history/notes backend answer exceeds %d bytes", MAX_ANSWER_BYTES)
            self._outcome = BackendFailure(REQUEST_FAILED)
        except Exception as error:  # any failure of the exchange is the same model-facing text
            # The class name only: an httpx message may quote the URL, never a body.
            _log.warning("history/notes backend unreachable: %s", type(error).__name__)
            self._outcome = BackendFailure(REQUEST_FAILED)
        finally:
            self._finished.set()


class _TooLarge(Exception):
    pass
