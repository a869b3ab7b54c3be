"""An emulator of the Codex history/notes backend's wire contract, and a Codex-shaped model.

The live backend cannot be reached from here, so Remote is tested against this emulator:

* ``POST /backend-api/codex/alpha/{history|notes}/v2/{operation}`` and
  ``alpha/notes/v2/thread_hint``, authenticated by bearer token, one account per token;
* encrypted arguments and outputs as Fernet tokens under a key per account: a value that
  another key made (another account, a wrong key) or that was altered is refused with 400
  ``invalid_encrypted_content``, never decrypted into garbage;
* notes with the contract's semantics (the same notes store Local uses), history recorded
  from the model traffic that asked for it (``history_ingest_requested``), as the real
  service records it from ``/responses``;
* injectable failures: a status, a non-JSON body, a JSON array, a dropped connection, an
  answer that never comes.

It is a WSGI application, so the same object serves real loopback sockets
(:class:`LoopbackServer`) and in-process requests (``httpx.WSGITransport``).
:class:`CodexDouble` is the scripted model presented as a model on the Codex transport
whose provider reaches this backend.
"""

from __future__ import annotations

import dataclasses
import socket
import socketserver
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

import httpx
import orjson
from cryptography.fernet import Fernet, InvalidToken

from ctxmodes.abort import AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.backend import BackendRoute
from ctxmodes.providers.base import (
    DeveloperMessage,
    EncryptedToolOutput,
    ModelCapabilities,
    ModelInfo,
    ModelRequest,
    StreamEvent,
)
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.models import AssistantMessage, TextContent, ToolCall, UserMessage
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.notes import NotesStore
from ctxmodes.windows.retrieval import answer_notes, run_history
from ctxmodes.windows.tools import OPERATIONS
from ctxmodes.windows.window_log import WindowLog

BASE_PATH = "/backend-api/codex"
ENCRYPTED_ARGS = {("history", "search_contents"): "query", ("notes", "search_contents"): "query"}
ENCRYPTED_ARGS |= {("notes", "append_to_file"): "text", ("notes", "write_file"): "text"}
CODEX_API = "openai-codex-responses"

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


@dataclass
class Account:
    account_id: str
    token: str
    fernet: Fernet


@dataclass
class RecordedCall:
    """One request the emulator received, as it arrived."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
@dataclass
class _Window:
    window_id: str
    recorded: int = 0  # how many of the window's request messages are recorded


@dataclass
class _Session:
    notes: NotesStore = field(default_factory=NotesStore)
    #: History with the contract's semantics (the same window log the service keeps).
    log: WindowLog = field(default_factory=WindowLog)
    windows: dict[str, _Window] = field(default_factory=dict)
    entries: int = 0


class _Dropped(Exception):
    """Close the connection without an answer."""


class CodexBackendEmulator:
    """The backend (see the module docstring). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accounts: dict[str, Account] = {}
        self._sessions: dict[tuple[str, str], _Session] = {}
        self.calls: list[RecordedCall] = []
        self._failure: Callable[[], tuple[str, bytes]] | None = None
        self._failure_only: str | None = None
        #: Set to let hanging requests go; ``hanging`` is set once one hangs.
        self.release = threading.Event()
        self.hanging = threading.Event()
        self._clock = 1_700_000_000_000

    # -- accounts and ciphertext --------------------------------------------------------

    def add_account(self, account_id: str) -> Account:
        account = Account(account_id, f"token-{account_id}", Fernet(Fernet.generate_key()))
        self._accounts[account.token] = account
        return account

    def encrypt(self, account: Account, plaintext: str) -> str:
        return account.fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, account: Account, ciphertext: str) -> str:
        return account.fernet.decrypt(ciphertext.encode()).decode()

    def decrypt_json(self, account: Account, ciphertext: str) -> Any:
        return orjson.loads(self.decrypt(account, ciphertext))

    # -- failures -----------------------------------------------------------------------

    def fail_with_status(self, status: int) -> None:
        self._failure = lambda: (f"{status} Failure", b'{"detail":"scripted failure"}')

    def fail_with_body(self, body: bytes) -> None:
        self._failure = lambda: ("200 OK", body)

    def hang(self, only: str | None = None) -> None:
        """Answer nothing until :attr:`release` is set (only paths ending in ``only``)."""
        self._failure_only = only

        def wait() -> tuple[str, bytes]:
            self.hanging.set()
            self.release.wait(30)
            raise _Dropped()

        self._failure = wait

    def drop_connections(self) -> None:
        def drop() -> tuple[str, bytes]:
            raise _Dropped()

        self._failure = drop

    def heal(self) -> None:
        self._failure = None

    # -- history from model traffic -----------------------------------------------------

    def ingest(self, account: Account, request: ModelRequest) -> None:
        """Record a turn the model served, when its metadata asks for it."""
        raw = request.headers.get("x-codex-turn-metadata")
        if raw is None:
            return
        metadata = orjson.loads(raw)
        if metadata.get("history_ingest_requested") is not True:
            return
        with self._lock:
            session = self._session(account, metadata["session_id"])
            window_id = metadata["context_window_id"]
            window = session.windows.get(window_id)
            if window is None:
                window = session.windows[window_id] = _Window(window_id)
                session.log.open_window(window_id)
            elif session.log.current is None or session.log.current.window_id != window_id:
                return  # a window that is over takes nothing more, as in the service
            texts = [_message_item(m) for m in request.messages]
            fresh = [t for t in texts if t is not None][window.recorded :]
            window.recorded += len(fresh)
            for role, text in fresh:
                session.entries += 1
                session.log.append_item(f"item-{session.entries:04d}", role, text)

    def _session(self, account: Account, session_id: str) -> _Session:
        return self._sessions.setdefault((account.account_id, session_id), _Session())

    # -- WSGI ---------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        headers = {
            key[5:].replace("_", "-").lower(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if "CONTENT_TYPE" in environ:
            headers["content-type"] = environ["CONTENT_TYPE"]
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = {"_invalid": raw.decode(errors="replace")}
        with self._lock:
            self.calls.append(RecordedCall(path, headers, body))
        failure = self._failure
        if self._failure_only is not None and not path.endswith(self._failure_only):
            failure = None
        if failure is not None:
            status, payload = failure()
            return _answer(start_response, status, payload)
        status, answer = self._handle(path, headers, body)
        return _answer(start_response, status, orjson.dumps(answer))

    def _handle(self, path: str, headers: dict[str, str], body: Any) -> tuple[str, dict[str, Any]]:
        account = self._accounts.get(headers.get("authorization", "").removeprefix("Bearer "))
        if account is None:
            return "401 Unauthorized", {"detail": "unauthorized"}
        parts = path.removeprefix(BASE_PATH + "/").split("/")
        if len(parts) != 4 or parts[0] != "alpha" or parts[2] != "v2":
            return "404 Not Found", {"detail": "Not found"}
        family, action = parts[1], parts[3]
        context = body.get("context") if isinstance(body, dict) else None
        if not isinstance(context, dict) or not isinstance(context.get("session_id"), str):
            return "400 Bad Request", {"detail": "context required"}
        if (family, action) == ("notes", "thread_hint"):
            return "200 OK", self._thread_hint(account, context["session_id"])
        if family not in OPERATIONS or action not in OPERATIONS[family]:
            return "404 Not Found", {"detail": "Not found"}
        arguments = {k: v for k, v in body.items() if k != "context"}
        encrypted_field = ENCRYPTED_ARGS.get((family, action))
        if encrypted_field is not None:
            if headers.get("x-openai-encrypted-tool-arguments") != "true":
                return "400 Bad Request", {"detail": "encrypted arguments header required"}
            try:
                arguments[encrypted_field] = self.decrypt(account, str(arguments[encrypted_field]))
            except (InvalidToken, KeyError):
                return "400 Bad Request", {"detail": "invalid_encrypted_content"}
        with self._lock:
            session = self._session(account, context["session_id"])
            result = self._run(session, family, action, arguments)
        return "200 OK", {"encrypted_output": self.encrypt(account, orjson.dumps(result).decode())}

    def _run(self, session: _Session, family: str, action: str, arguments: dict[str, Any]) -> Any:
        if family == "notes":

            def persist(prepared: Any) -> str:
                session.entries += 1
                return f"note-{session.entries:04d}"

            self._clock += 1000
            clock = self._clock
            answer = answer_notes(session.notes, action, arguments, persist, now_ms=lambda: clock)
            return orjson.loads(answer.text) if not answer.is_error else {"error": answer.text}
        try:
            return dict(run_history(HistoryReader([session.log]), action, arguments))
        except CtxmodesError as error:
            return {"error": str(error)}

    def _thread_hint(self, account: Account, session_id: str) -> dict[str, Any]:
        with self._lock:
            notes = list(self._session(account, session_id).notes)
        if not notes:
            return {"text": ""}
        lines = [f"- {note.path} ({note.line_count()} lines)" for note in notes[:5]]
        return {"text": "Recent notes (up to 5, most-recent first):\n" + "\n".join(lines)}


def _message_item(message: Any) -> tuple[str, str] | None:
    if isinstance(message, UserMessage):
        content = message.content
        text = (
            content
            if isinstance(content, str)
            else "\n".join(b.text for b in content if isinstance(b, TextContent))
        )
        return ("user", text)
    if isinstance(message, AssistantMessage):
        parts = [b.text for b in message.content if isinstance(b, TextContent)]
        parts += [
            orjson.dumps(b.arguments).decode() for b in message.content if isinstance(b, ToolCall)
        ]
        return ("assistant", "\n".join(parts))
    if isinstance(message, DeveloperMessage | EncryptedToolOutput):
        return None
    return None


def _answer(start_response: StartResponse, status: str, payload: bytes) -> list[bytes]:
    start_response(
        status, [("content-type", "application/json"), ("content-length", str(len(payload)))]
    )
    return [payload]


# -- loopback ---------------------------------------------------------------------------


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _DroppingHandler(ServerHandler):
    def handle_error(self) -> None:
        if isinstance(sys.exc_info()[1], _Dropped):
            raise  # no 500 page: the connection is closed without a byte
        super().handle_error()


class _QuietHandler(WSGIRequestHandler):
    """wsgiref's request handler, quiet, and able to drop a connection unanswered."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def handle(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if not self.parse_request():
            return
        handler = _DroppingHandler(
            self.rfile, self.wfile, self.get_stderr(), self.get_environ(), multithread=True
        )
        handler.request_handler = self  # type: ignore[attr-defined]
        try:
            handler.run(self.server.get_app())  # type: ignore[attr-defined]
        except _Dropped:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)


class LoopbackServer:
    """Serves an emulator on 127.0.0.1 at a port the OS chose, on a thread."""

    def __init__(self, app: CodexBackendEmulator) -> None:
        self._app = app
        self._server = make_server(
            "127.0.0.1", 0, app, server_class=_ThreadingServer, handler_class=_QuietHandler
        )
        self.port = self._server.server_address[1]
        # A short poll: shutdown() waits for the next one (0.5 s at the default).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{BASE_PATH}"

    def close(self) -> None:
        self._app.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


# -- the Codex-shaped model ---------------------------------------------------------------


class CodexDouble(ScriptedProvider):
    """The scripted model on the Codex transport, its backend at ``base_url``.

    Every request it serves is also seen by the emulator (the real backend records the
    ``/responses`` traffic it serves).
    """

    def __init__(
        self,
        script: Script,
        emulator: CodexBackendEmulator,
        account: Account,
        *,
        base_url: str,
        client: httpx.Client,
    ) -> None:
        super().__init__(script)
        self.emulator = emulator
        self.account = account
        self.base_url = base_url
        self.client = client
        self.requests: list[ModelRequest] = []

    @property
    def transport(self) -> str:
        return CODEX_API

    @property
    def info(self) -> ModelInfo:
        base = super().info
        return dataclasses.replace(
            base,
            provider="openai-codex",
            api=CODEX_API,
            capabilities=ModelCapabilities(
                developer_role=True, namespaced_tools=False, encrypted_tool_arguments=True
            ),
        )

    def backend_route(self) -> BackendRoute:
        return BackendRoute(
            base_url=self.base_url,
            headers={
                "authorization": f"Bearer {self.account.token}",
                "chatgpt-account-id": self.account.account_id,
                "originator": "ctxmodes",
            },
            client=self.client,
        )

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        self.requests.append(request.model_copy(deep=True))
        self.emulator.ingest(self.account, request)
        return super().stream(request, signal)

    def close(self) -> None:
        self.client.close()
