"""The service's operations: the nine ``history``/``notes`` operations, ``thread_hint``, and
recording history from the Responses traffic.

The semantics are the context-window kit's, the same code Local runs over a session file:
arguments are validated and read by :func:`ctxmodes.windows.retrieval.run_history` and
:func:`~ctxmodes.windows.retrieval.run_notes`, notes live in a
:class:`~ctxmodes.windows.notes.NotesStore` replayed from the stored writes, history in a
:class:`~ctxmodes.windows.window_log.WindowLog` per agent. What the service adds is what a
backend must: several sessions and agents, accounts, durable storage, and encryption.

* Agents: ``context.current_agent_name`` (``/root``, ``/root/worker``) is the default agent;
  an ``agent_name`` argument may name another, absolutely or relative to it. Relative note
  paths and prefixes belong to the current agent's notes directory.
* Encryption: the four encrypted fields arrive as this account's ciphertext (when the client
  says so with ``x-openai-encrypted-tool-arguments``) and every result leaves as
  ``{"encrypted_output": <token>}``. Expected failures (a bad path, a note over the size
  limit, an invalid call) are results too, ``{"error": "…"}`` inside the ciphertext: the
  client never shows a status to the model, only what the service answered.

Threads: the HTTP layer runs the calls about one session one at a time, in arrival order;
most on that session's worker thread (one per connection the storage allows, see
:attr:`ServiceEngine.workers`), and, where the storage answers on the event loop, note reads
(both storages) and writes (Postgres) on the loop itself (:meth:`ServiceEngine.alpha_on_loop`),
with no trip to a thread. So a session's state is only ever touched by one call at a time;
what sessions share (the cache of sessions, the token cache, the account keys) is safe to use
from several threads.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxmodes import CtxmodesError
from ctxmodes.session import codec
from ctxmodes.windows import (
    NOTE_PROTOCOL,
    OPERATIONS,
    HistoryReader,
    LogWindow,
    NoteEntryData,
    NotesStore,
    PreparedNoteWrite,
    PreviousWindowIds,
    WindowLog,
    prepare_notes_write,
    render_thread_hint,
    run_history,
    run_notes,
)
from ctxmodes_remote.service import accounts
from ctxmodes_remote.service.candidates import CandidateChecker
from ctxmodes_remote.service.crypto import AccountKeyError, CiphertextError, KeyRing
from ctxmodes_remote.service.sealed_storage import SealedStorage
from ctxmodes_remote.service.sealing import SealedValueError
from ctxmodes_remote.service.storage import (
    Account,
    HistorySearch,
    LoopNoteReads,
    LoopNotes,
    NoteEvent,
    RecordedImage,
    RecordedItem,
    Storage,
    StorageUnavailableError,
)

#: Failures the engine never turns into a result for the model: the request fails whole.
_REQUEST_FAILURES = (CiphertextError, StorageUnavailableError, AccountKeyError, SealedValueError)

#: What results say they come from (Local's say ``pi-session``).
SOURCE = "ctxmodes-serve"
ROOT_AGENT = "/root"
#: Rows a history search fetches: the most items a search answers (the kit's
#: ``MAX_ITEM_LIMIT``), so any limit the call asks for is served from them.
SEARCH_ROWS = 25
#: Sessions kept in memory; older ones are rebuilt from storage when used again.
CACHED_SESSIONS = 256
#: Sessions whose worker is remembered (the least recently used is forgotten first).
PLACED_SESSIONS = 65_536
#: The notes operations that write.
_WRITE_OPERATIONS = frozenset({"write_file", "append_to_file"})
#: The notes operations answered on the event loop where the storage can (see
#: :meth:`ServiceEngine.alpha_on_loop`): reads wherever the storage reads on the loop; writes
#: where it writes there too (Postgres). A read, search or listing whose cost grows past a
#: bound with what it goes through is handed to the session's worker instead (see
#: :data:`LOOP_NOTES_MAX_BYTES`).
LOOP_READS = frozenset({"read_file", "search_contents", "list_files_by_prefix"})
#: The most a call on the event loop goes through: a note read of at most so many UTF-8
#: bytes, a search or listing of a session's notes of at most so many files and bytes in all.
#: At the bound a search that finds nothing, a listing by name or the encryption of what a
#: read or search found each take 0.2-0.4 ms; beyond it they go to the session's worker, so
#: that one account's heavy calls do not hold the loop from every other request.
LOOP_NOTES_MAX_FILES = 64
LOOP_NOTES_MAX_BYTES = 64 * 1024
LOOP_OPERATIONS = LOOP_READS | _WRITE_OPERATIONS
#: Tries of a note write that keeps meeting writes of other processes to the same session.
NOTE_WRITE_ATTEMPTS = 20

_PATH_FIELDS = ("path",)
_PREFIX_FIELDS = ("prefix", "path_prefix")


#: Runs a function on the worker of the session a call is about, in its turns (see
#: :meth:`ServiceEngine.alpha_on_loop`).
OnWorker = Callable[[Callable[[], dict[str, Any]]], Awaitable[dict[str, Any]]]


class _StaleNotes(Exception):
    """A note write was refused by storage: another write to the session came first."""


class RequestError(CtxmodesError):
    """A request the service refuses outright (HTTP 400): not the model's mistake to read."""


class UnknownOperationError(CtxmodesError):
    """No such operation (HTTP 404)."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who calls: the ``context`` object the client injects into every alpha body."""

    session_id: str
    agent: str


def parse_context(value: object) -> CallContext:
    """:raises RequestError: no usable ``context``."""
    if not isinstance(value, dict):
        raise RequestError("the body must carry a context object")
    session_id = value.get("session_id")
    agent = value.get("current_agent_name")
    if not isinstance(session_id, str) or not session_id:
        raise RequestError("context.session_id must be a non-empty string")
    if agent is None:
        agent = ROOT_AGENT
    if not is_agent_path(agent):
        raise RequestError("context.current_agent_name must be an agent path such as /root")
    return CallContext(session_id, agent)


def is_agent_path(value: object) -> bool:
    if not isinstance(value, str) or not value.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in value[1:].split("/"))


def resolve_agent(current: str, requested: object) -> str | None:
    """The agent an ``agent_name`` argument names: absent means ``current``; absolute as
    given; relative below ``current``. ``None`` when it names no agent."""
    if requested is None or requested == "":
        return current
    if not isinstance(requested, str):
        return None
    candidate = requested.rstrip("/") if requested.startswith("/") else f"{current}/{requested}"
    return candidate if is_agent_path(candidate) else None


class AgentHistory:
    """One agent's recorded windows: a window log plus the keys already recorded.

    ``seq`` is the storage sequence number it has read up to, ``version`` the storage's data
    version it was brought up to date at (see :meth:`ServiceEngine._agent`)."""

    __slots__ = ("_images", "_keys", "_windows", "log", "seq", "version")

    def __init__(self) -> None:
        self.seq = 0
        self.version: int | None = None
        self.log = WindowLog()
        self._windows: dict[str, LogWindow] = {}
        self._keys: dict[str, set[str]] = {}
        # Only items that have images are here: the log keeps text alone.
        self._images: dict[tuple[str, str], tuple[RecordedImage, ...]] = {}

    def accepts(self, item: RecordedItem) -> bool:
        """Whether ``item`` is new and can be appended (it belongs to the newest window, or
        opens the next one)."""
        window = self._windows.get(item.window_id)
        if window is None:
            return True
        return window is self.log.current and item.item_key not in self._keys[item.window_id]

    def add(self, item: RecordedItem) -> bool:
        if not self.accepts(item):
            return False
        if item.window_id not in self._windows:
            self._windows[item.window_id] = self.log.open_window(item.window_id)
            self._keys[item.window_id] = set()
        self._keys[item.window_id].add(item.item_key)
        if item.images:
            self._images[(item.window_id, item.item_key)] = item.images
        self.log.append_item(
            item.item_key, item.role, item.content, item.tool_name, item.tool_namespace
        )
        return True

    def images(self, window_id: str, item_key: str) -> tuple[RecordedImage, ...]:
        return self._images.get((window_id, item_key), ())

    def previous_window(self) -> PreviousWindowIds | None:
        current = self.log.current
        if current is None:
            return None
        return PreviousWindowIds(current.window_id, current.recent_item_ids("user", 5))


@dataclass
class SessionState:
    """A session's notes and agents as read from storage up to ``note_seq``, when the
    storage's data version was ``version`` (``loop_version`` on the connection the event
    loop reads with, whose versions are its own)."""

    notes: NotesStore = field(default_factory=NotesStore)
    agents: dict[str, AgentHistory] = field(default_factory=dict)
    note_seq: int = 0
    version: int | None = None
    loop_version: int | None = None


def _entry_id(seq: int) -> str:
    return f"n{seq}"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ServiceEngine:
    """Accounts, sessions and operations over one :class:`Storage` backend, which holds
    only what :class:`SealedStorage` sealed.

    ``search_processes`` helper processes check big pages of history search candidates and
    go through the notes of big notes searches (none: every search is done on the calling
    thread).

    :raises AccountKeyError: (on start) the backend's data is wrapped under master keys
        the keyring lacks, for every account that has data.
    """

    def __init__(
        self,
        storage: Storage,
        keyring: KeyRing,
        *,
        now_ms: Callable[[], int] = _now_ms,
        search_processes: int = 0,
    ) -> None:
        self._checker = CandidateChecker(search_processes)
        self._storage = SealedStorage(storage, keyring, self._checker)
        self._loop_reads = storage.loop_notes()
        self._loop_writes = self._loop_reads if isinstance(self._loop_reads, LoopNotes) else None
        self._keyring = keyring
        self._now_ms = now_ms
        self._sessions: OrderedDict[tuple[str, str], SessionState] = OrderedDict()
        self._sessions_lock = threading.Lock()
        self._tokens = accounts.TokenCache()
        self._placement: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._placement_lock = threading.Lock()
        self._next_worker = 0

    @property
    def workers(self) -> int:
        """How many threads may call the engine at once, each for its own sessions (see
        :meth:`worker_of`)."""
        return self._storage.backend.workers

    def worker_of(self, account: Account, session_id: str) -> int:
        """The worker thread (``0`` to ``workers - 1``) that serves the session: sessions
        are dealt to the workers in turn as they first appear (a hash would leave some with
        twice the sessions of others, and their calls queueing while others idle), and keep
        theirs while in use."""
        if self.workers == 1:
            return 0
        key = (account.account_id, session_id)
        with self._placement_lock:
            worker = self._placement.get(key)
            if worker is None:
                worker = self._next_worker
                self._next_worker = (worker + 1) % self.workers
                self._placement[key] = worker
                if len(self._placement) > PLACED_SESSIONS:
                    # The least recently used: none of its calls can still be under way.
                    self._placement.popitem(last=False)
            else:
                self._placement.move_to_end(key)
        return worker

    @property
    def keyring(self) -> KeyRing:
        return self._keyring

    def replace_keyring(self, keyring: KeyRing) -> None:
        """Use ``keyring`` from now on. Sessions in memory are dropped and read again under
        it, so what its keys no longer open is no longer served."""
        self._keyring = keyring
        with self._sessions_lock:
            self._sessions.clear()
        self._storage.replace_keyring(keyring)

    def close(self) -> None:
        self._storage.close()

    async def close_loop_storage(self) -> None:
        """Close the connections of the calls answered on the event loop (on that loop,
        before :meth:`close`)."""
        if self._loop_reads is not None:
            await self._loop_reads.close()

    # -- group commit ------------------------------------------------------------------------

    def group_commits(self) -> bool:
        """Have the storage hold commits, if it gains from that (SQLite): the caller then
        answers a call only after :meth:`commit_writes` has returned (see
        :class:`~ctxmodes_remote.service.workers.FairWorker`). ``False``: every write is
        committed before its call returns."""
        return self._storage.backend.group_commits()

    def writes_pending(self) -> bool:
        """Whether the calls run since the last :meth:`commit_writes` wrote (or read what
        was written) and wait for it before they may be answered."""
        return self._storage.backend.uncommitted

    def commit_writes(self) -> None:
        """Commit the held writes.

        :raises StorageUnavailableError: none of them is on disk. Memory forgets what it
            learnt since, so it holds no more than storage does.
        """
        try:
            self._storage.backend.commit_group()
        except StorageUnavailableError:
            with self._sessions_lock:
                self._sessions.clear()
            self._storage.forget_keys()
            raise

    def ping(self) -> None:
        """:raises StorageUnavailableError: the storage does not answer."""
        self._storage.ping()

    async def ping_loop_storage(self) -> None:
        """:raises StorageUnavailableError: the storage does not answer on the event loop
        (where it answers there)."""
        if self._loop_reads is not None:
            await self._loop_reads.ping()

    # -- accounts --------------------------------------------------------------------------

    def authenticate(self, authorization: str | None) -> Account | None:
        """The account a request's ``Authorization`` header stands for, else ``None``; a
        token found within :data:`~ctxmodes_remote.service.accounts.TOKEN_CACHE_S` seconds
        is not looked up again."""
        return self._tokens.authenticate(self._storage.backend, authorization)

    def cached_account(self, authorization: str | None) -> Account | None:
        """The account, when the token was found within the bound; ``None``: ask
        :meth:`authenticate`. Touches no storage, so any thread may call it."""
        return self._tokens.cached(authorization)

    # -- encryption --------------------------------------------------------------------------

    def encrypt_text(self, account: Account, text: str) -> str:
        return self._keyring.encrypt(account.account_id, text.encode("utf-8", "surrogatepass"))

    def decrypt_text(self, account: Account, token: object) -> str:
        """:raises CiphertextError: not this account's ciphertext."""
        return _decrypted(self._keyring, account, token)

    # -- sessions ----------------------------------------------------------------------------

    def _session(self, account: Account, session_id: str, *, refresh: bool = True) -> SessionState:
        """The session's state, brought up to date with storage (unless ``refresh`` is false
        and the session is in memory already).

        Other service processes may share the storage, so a use reads what was written
        since (one indexed query), unless the storage can tell that no other connection has
        written since the last read (its data version is the same); writes of this process
        are not applied twice.
        """
        state, new = self._cached_session(account, session_id)
        if not (refresh or new):
            return state
        # Read before the query: a write landing in between is caught on the next use.
        version = self._storage.backend.data_version()
        if version is None or version != state.version:
            _apply_notes(
                state, self._storage.note_events(account.account_id, session_id, state.note_seq)
            )
            state.version = version
        return state

    def _cached_session(self, account: Account, session_id: str) -> tuple[SessionState, bool]:
        """The session's state in memory, and whether it was just made (empty)."""
        key = (account.account_id, session_id)
        with self._sessions_lock:
            state = self._sessions.get(key)
            if state is not None:
                self._sessions.move_to_end(key)
                return state, False
            state = SessionState(notes=NotesStore(self._checker.matching_texts))
            self._sessions[key] = state
            if len(self._sessions) > CACHED_SESSIONS:
                self._sessions.popitem(last=False)
            return state, True

    def _agent(self, account: Account, session_id: str, agent: str) -> AgentHistory:
        state = self._session(account, session_id)
        history = state.agents.setdefault(agent, AgentHistory())
        if state.version is None or state.version != history.version:
            for seq, item in self._storage.history_items(
                account.account_id, session_id, agent, history.seq
            ):
                history.add(item)
                history.seq = seq
            history.version = state.version
        return history

    # -- the alpha operations ------------------------------------------------------------------

    def alpha(
        self,
        account: Account,
        family: str,
        operation: str,
        body: Mapping[str, Any],
        *,
        encrypted_arguments: bool,
    ) -> dict[str, Any]:
        """Answer ``POST alpha/<family>/v2/<operation>``.

        :raises UnknownOperationError: no such family or operation.
        :raises RequestError: no usable ``context``.
        :raises CiphertextError: an encrypted field is not this account's ciphertext.
        :raises StorageUnavailableError: storage failed; nothing was written.
        """
        if family == "notes" and operation == "thread_hint":
            return self.thread_hint(account, parse_context(body.get("context")))
        keyring = self._keyring
        context, arguments = _call_arguments(
            keyring, account, family, operation, body, encrypted_arguments
        )
        images: tuple[RecordedImage, ...] = ()
        try:
            if family == "history":
                result, images = self._history(account, context, operation, arguments)
            else:
                result = self._notes(account, context, operation, arguments)
        except _REQUEST_FAILURES:
            raise
        except CtxmodesError as error:
            result = {"error": str(error)}
        return _answer(keyring, account, result, images)

    def runs_on_loop(self, family: str, operation: str) -> bool:
        """Whether the call is answered by :meth:`alpha_on_loop`: a note read where the
        storage reads on the event loop, a note write where it writes there too."""
        if family != "notes":
            return False
        if operation in LOOP_READS:
            return self._loop_reads is not None
        return operation in _WRITE_OPERATIONS and self._loop_writes is not None

    async def alpha_on_loop(
        self,
        account: Account,
        family: str,
        operation: str,
        body: Mapping[str, Any],
        *,
        encrypted_arguments: bool,
        on_worker: OnWorker,
    ) -> dict[str, Any]:
        """:meth:`alpha` on the event loop, for a call :meth:`runs_on_loop` names: the same
        answer and the same failures, its storage round trip awaited instead of holding a
        thread. A read of a big note, or a search or listing of big notes (see
        :data:`LOOP_NOTES_MAX_BYTES`), is answered by ``on_worker``, which runs a function on
        the session's worker. It uses one
        keyring throughout, the one in use when it began."""
        notes = self._loop_reads
        if notes is None or not self.runs_on_loop(family, operation):
            raise UnknownOperationError(f"{family}/{operation} is not answered on the loop")
        keyring = self._keyring
        context, arguments = _call_arguments(
            keyring, account, family, operation, body, encrypted_arguments
        )

        def answer(result: Mapping[str, Any]) -> dict[str, Any]:
            return _answer(keyring, account, result, ())

        try:
            if operation in _WRITE_OPERATIONS:
                return answer(await self._write_on_loop(account, context, operation, arguments))
            _qualify_note_paths(context, operation, arguments)
            state = await self._session_on_loop(notes, account, context.session_id, refresh=True)

            def read() -> dict[str, Any]:
                now_ms = self._now_ms
                found = run_notes(state.notes, operation, arguments, _no_writes, now_ms=now_ms)
                return answer(_with_source(found))

            if _cheap(state.notes, operation, arguments):
                return read()
            return await on_worker(read)
        except _REQUEST_FAILURES:
            raise
        except CtxmodesError as error:
            return answer({"error": str(error)})

    def _history(
        self, account: Account, context: CallContext, operation: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[RecordedImage, ...]]:
        """The plain result, and the images of the item a ``read_item`` read."""
        agent = resolve_agent(context.agent, arguments.pop("agent_name", None))
        if agent is None:
            key = "windows" if operation == "list_windows" else "items"
            return {"source": SOURCE, key: []}, ()
        search = _history_search(operation, arguments)
        if search is not None:
            # The database finds the matches; the kit answers over just those, so the
            # answer is the one the whole session would give.
            found = self._storage.search_history(
                account.account_id, context.session_id, agent, search
            )
            return _with_source(
                run_history(HistoryReader([_log_of(found)]), operation, arguments)
            ), ()
        history = self._agent(account, context.session_id, agent)
        result = _with_source(run_history(HistoryReader([history.log]), operation, arguments))
        item = result.get("item") if operation == "read_item" else None
        if not isinstance(item, dict):
            return result, ()
        return result, history.images(item["window_id"], item["item_id"])

    def _notes(
        self, account: Account, context: CallContext, operation: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        _qualify_note_paths(context, operation, arguments)
        writing = operation in _WRITE_OPERATIONS
        for attempt in range(NOTE_WRITE_ATTEMPTS):
            # A write may be checked against the notes in memory without asking storage
            # first: storage refuses it if another process wrote since (and then it is checked
            # again against what storage holds), which saves a round trip per write.
            trusting = writing and attempt == 0
            state = self._session(account, context.session_id, refresh=not trusting)

            def persist(prepared: PreparedNoteWrite, state: SessionState = state) -> str:
                seq = self._storage.append_note_event(
                    account.account_id, context.session_id, _note_event(prepared), state.note_seq
                )
                if seq is None:
                    raise _StaleNotes
                state.note_seq = seq
                return _entry_id(seq)

            try:
                return _with_source(
                    run_notes(state.notes, operation, arguments, persist, now_ms=self._now_ms)
                )
            except _StaleNotes:
                # Another process wrote first: the write was checked (sizes, paths) against
                # notes it had not seen. Read them, and check it again.
                state.version = None
            except CtxmodesError:
                # A refusal (a size limit, say) is only answered once checked against what
                # storage holds.
                if not trusting:
                    raise
                state.version = None
        raise StorageUnavailableError("too many concurrent writes to this session's notes")

    async def _write_on_loop(
        self, account: Account, context: CallContext, operation: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """A note write of :meth:`_notes` with the storage awaited: the kit checks it against
        the notes in memory, storage takes it (or refuses it, another process having written
        first), and only then is it applied to them."""
        _qualify_note_paths(context, operation, arguments)
        account_id, session_id = account.account_id, context.session_id
        writes = self._loop_writes
        assert writes is not None, "runs_on_loop sends writes here only where storage takes them"
        for attempt in range(NOTE_WRITE_ATTEMPTS):
            # As in _notes: checked first against memory, which storage then vouches for.
            trusting = attempt == 0
            state = await self._session_on_loop(writes, account, session_id, refresh=not trusting)
            try:
                prepared = prepare_notes_write(
                    state.notes, operation, arguments, now_ms=self._now_ms
                )
            except CtxmodesError:
                if not trusting:
                    raise
                continue
            seq = await self._storage.append_note_event_on_loop(
                writes, account_id, session_id, _note_event(prepared), state.note_seq
            )
            if seq is not None:
                state.note_seq = seq
                state.notes.commit(_entry_id(seq), prepared.data)
                return _with_source(prepared.result)
        raise StorageUnavailableError("too many concurrent writes to this session's notes")

    async def _session_on_loop(
        self, notes: LoopNoteReads, account: Account, session_id: str, *, refresh: bool
    ) -> SessionState:
        """:meth:`_session` for a storage that answers on the loop: what was written since
        is asked for unless the loop's connection says nothing was committed since the last
        time (Postgres cannot say: it always asks)."""
        state, new = self._cached_session(account, session_id)
        if refresh or new:
            # Read before the query: a write landing in between is caught on the next use.
            version = await notes.data_version()
            if version is None or version != state.loop_version or new:
                events = await self._storage.note_events_on_loop(
                    notes, account.account_id, session_id, state.note_seq
                )
                _apply_notes(state, events)
                state.loop_version = version
        return state

    def thread_hint(self, account: Account, context: CallContext) -> dict[str, Any]:
        """``{"text": …}``: the agent's recent notes and the window that just closed (empty
        text when there is nothing to say)."""
        state = self._session(account, context.session_id)
        prefix = f"{context.agent}/notes/"
        notes = [note for note in state.notes if note.path.startswith(prefix)]
        previous = self._agent(account, context.session_id, context.agent).previous_window()
        return {"text": render_thread_hint(notes, previous) or ""}

    # -- recording history ---------------------------------------------------------------------

    def record(
        self, account: Account, session_id: str, agent: str, items: Sequence[RecordedItem]
    ) -> int:
        """Record the items of one ``/responses`` exchange; returns how many were new."""
        history = self._agent(account, session_id, agent)
        fresh = [item for item in items if history.add(item)]
        try:
            self._storage.append_history_items(account.account_id, session_id, agent, fresh)
        except BaseException:
            # Memory must not hold what storage does not: the agent's history is read again
            # on next use, so a resend of these items is recorded, not taken as a repeat.
            self._forget_agent(account, session_id, agent)
            raise
        return len(fresh)

    def _forget_agent(self, account: Account, session_id: str, agent: str) -> None:
        with self._sessions_lock:
            state = self._sessions.get((account.account_id, session_id))
        if state is not None:
            state.agents.pop(agent, None)


def _call_arguments(
    keyring: KeyRing,
    account: Account,
    family: str,
    operation: str,
    body: Mapping[str, Any],
    encrypted_arguments: bool,
) -> tuple[CallContext, dict[str, Any]]:
    """The caller's context and the call's arguments, the encrypted ones decrypted.

    :raises UnknownOperationError: no such family or operation.
    :raises RequestError: no usable ``context``.
    :raises CiphertextError: an encrypted field is not this account's ciphertext.
    """
    known = OPERATIONS.get(family)  # type: ignore[call-overload]
    if known is None or operation not in known:
        raise UnknownOperationError(f"unknown operation {family}/{operation}")
    context = parse_context(body.get("context"))
    arguments = {key: value for key, value in body.items() if key != "context"}
    if encrypted_arguments:
        for name in known[operation].encrypted:
            if name in arguments:
                arguments[name] = _decrypted(keyring, account, arguments[name])
    return context, arguments


def _decrypted(keyring: KeyRing, account: Account, token: object) -> str:
    return keyring.decrypt(account.account_id, token).decode("utf-8", "surrogatepass")


def _answer(
    keyring: KeyRing,
    account: Account,
    result: Mapping[str, Any],
    images: Sequence[RecordedImage],
) -> dict[str, Any]:
    """The answer to an alpha call: its result encrypted, and the images of a ``read_item``
    beside the ciphertext, as the contract has them (the client attaches them to the result
    as images for the model)."""
    answer: dict[str, Any] = {
        "encrypted_output": keyring.encrypt(account.account_id, codec.dumps(result))
    }
    if images:
        answer["images"] = [_image_answer(image) for image in images]
    return answer


def _qualify_note_paths(context: CallContext, operation: str, arguments: dict[str, Any]) -> None:
    """Relative note paths and prefixes (and a missing prefix) belong to the current agent's
    notes directory."""
    notes_dir = f"{context.agent}/notes"
    for name in _PATH_FIELDS:
        value = arguments.get(name)
        if isinstance(value, str) and value and not value.startswith("/"):
            arguments[name] = f"{notes_dir}/{value}"
    accepted = OPERATIONS["notes"][operation].fields
    for name in _PREFIX_FIELDS:
        value = arguments.get(name)
        if name not in accepted:
            continue
        if value is None or value == "":
            arguments[name] = f"{notes_dir}/"
        elif isinstance(value, str) and not value.startswith("/"):
            arguments[name] = f"{notes_dir}/{value}"


def _cheap(notes: NotesStore, operation: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a note read, search or listing of ``notes`` is cheap enough for the event
    loop (see :data:`LOOP_NOTES_MAX_BYTES`)."""
    if operation == "read_file":
        return notes.note_bytes(arguments.get("path")) <= LOOP_NOTES_MAX_BYTES
    return len(notes) <= LOOP_NOTES_MAX_FILES and (
        sum(note.byte_count for note in notes) <= LOOP_NOTES_MAX_BYTES
    )


def _no_writes(prepared: PreparedNoteWrite) -> str:
    raise AssertionError("a notes call that reads persisted a write")


def _note_event(prepared: PreparedNoteWrite) -> NoteEvent:
    data = prepared.data
    return NoteEvent(data.action, data.path, data.text, int(data.timestamp))


def _apply_notes(state: SessionState, events: Sequence[tuple[int, NoteEvent]]) -> None:
    """Apply note writes read from storage, in order, to the session's notes."""
    for seq, event in events:
        state.notes.commit(_entry_id(seq), _note_data(event))
        state.note_seq = seq


def _history_search(operation: str, arguments: Mapping[str, Any]) -> HistorySearch | None:
    """The database search a ``search_contents`` call needs, or ``None`` when the call is
    answered from the session in memory (another operation, or no query text)."""
    query = arguments.get("query")
    if operation != "search_contents" or not isinstance(query, str) or not query:
        return None

    def text(name: str) -> str | None:
        value = arguments.get(name)
        return value if isinstance(value, str) and value else None

    return HistorySearch(
        text=query,
        limit=SEARCH_ROWS,
        window_id=text("window_id"),
        role=text("role"),
        tool_name=text("tool_name"),
        tool_namespace=text("tool_namespace"),
        newest_first=arguments.get("recent_first") is True,
    )


def _log_of(items: Sequence[RecordedItem]) -> WindowLog:
    """A window log of ``items`` (in arrival order), under their windows."""
    log = WindowLog()
    current: str | None = None
    for item in items:
        if item.window_id != current:
            log.open_window(item.window_id)
            current = item.window_id
        log.append_item(item.item_key, item.role, item.content, item.tool_name, item.tool_namespace)
    return log


def _image_answer(image: RecordedImage) -> dict[str, str]:
    # No detail recorded means the Responses default, which the contract spells "auto".
    return {"data": image.data, "mime_type": image.mime_type, "detail": image.detail or "auto"}


def _note_data(event: NoteEvent) -> NoteEntryData:
    return NoteEntryData(
        protocol=NOTE_PROTOCOL,
        action=event.action,
        path=event.path,
        text=event.text,
        timestamp=event.timestamp,
    )


def _with_source(result: Mapping[str, Any]) -> dict[str, Any]:
    answer = dict(result)
    if "source" in answer:
        answer["source"] = SOURCE
    return answer
