"""Where the service keeps accounts, tokens, notes and recorded history.

:class:`Storage` is the interface of a database backend, implemented in one SQLite file
(:mod:`~ctxmodes_remote.service.sqlite_storage`) and in Postgres
(:mod:`~ctxmodes_remote.service.postgres_storage`). Every read and write
is keyed by account first: no method can reach another account's rows. A backend never
holds a note's or an item's text: it stores values sealed by
:class:`~ctxmodes_remote.service.sealed_storage.SealedStorage`, the plaintext interface the
engine uses, and finds search candidates through their blind-index tokens.

Notes are kept as the sequence of writes and appends that made them, as the session file
keeps them for Local; the engine replays them into the shared notes store. History is kept
as items in arrival order, each under its window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from ctxmodes import CtxmodesError
from ctxmodes.session import codec
from ctxmodes_remote.service.defaults import DEFAULT_CONNECTIONS as DEFAULT_CONNECTIONS

NoteAction = Literal["write", "append"]


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    name: str


@dataclass(frozen=True, slots=True)
class IssuedTokenRecord:
    """A token as ``serve token list`` shows it: never the token, only its id (the start of
    its hash), its account and when it was made."""

    token_id: str
    account: Account
    created_at: int


#: Hex digits of a token's hash that make its id.
TOKEN_ID_DIGITS = 16


@dataclass(frozen=True, slots=True)
class NoteEvent:
    action: NoteAction
    path: str
    text: str
    timestamp: int


@dataclass(frozen=True, slots=True)
class RecordedImage:
    """An image of a recorded item as the contract's ``images`` carry it: raw base64
    ``data``, its ``mime_type``, and the ``detail`` it was sent with (``None``: none)."""

    data: str
    mime_type: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedItem:
    """One history item under its window; ``item_key`` is unique within the window.

    ``content`` holds a placeholder where an image was; the images themselves are in
    ``images``, in order, and only ``read_item`` answers them."""

    window_id: str
    item_key: str
    role: str
    content: str
    tool_name: str | None = None
    tool_namespace: str | None = None
    images: tuple[RecordedImage, ...] = ()


@dataclass(frozen=True, slots=True)
class HistorySearch:
    """Which recorded items a search wants: those whose content contains ``text`` (a
    literal, case-sensitive substring), narrowed by the fields that are not ``None``; the
    first ``limit`` in arrival order, or the last ``limit`` with ``newest_first``."""

    text: str
    limit: int
    window_id: str | None = None
    role: str | None = None
    tool_name: str | None = None
    tool_namespace: str | None = None
    newest_first: bool = False

    def filters(self) -> list[tuple[str, str]]:
        """The ``(column, value)`` pairs a candidate must have."""
        columns = ("window_id", "role", "tool_name", "tool_namespace")
        return [(name, getattr(self, name)) for name in columns if getattr(self, name) is not None]


# -- what a backend holds ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SealedNote:
    """A note write as stored: ``sealed`` holds its path and text."""

    action: NoteAction
    timestamp: int
    sealed: bytes


@dataclass(frozen=True, slots=True)
class SealedItem:
    """A history item as stored: ``sealed`` holds its content and images; ``tokens`` (given
    on writes only) are its blind-index tokens, packed (see
    :func:`~ctxmodes_remote.service.sealing.token_array` and ``token_words``)."""

    window_id: str
    item_key: str
    role: str
    tool_name: str | None
    tool_namespace: str | None
    sealed: bytes
    tokens: bytes = b""


@dataclass(frozen=True, slots=True)
class CandidatePage:
    """One page of search candidates: items holding every token in ``tokens`` that pass the
    filters of ``search``, in its order, after the sequence number ``cursor`` (before it,
    newest first), at most ``size`` of them."""

    search: HistorySearch
    tokens: bytes
    cursor: int | None
    size: int


class Sealer(Protocol):
    """What upgrading a database seals rows with (from before encryption at rest) and
    tokenises them with (a blind index of an earlier tokenisation)."""

    def seal_note(self, account_id: str, session_id: str, path: str, text: str) -> bytes: ...

    def seal_item(
        self, account_id: str, session_id: str, agent: str, item: RecordedItem
    ) -> SealedItem: ...

    def item_tokens(
        self, account_id: str, session_id: str, agent: str, stored: SealedItem
    ) -> bytes: ...


def _images_of_column(value: object) -> tuple[RecordedImage, ...]:
    """The images a plaintext ``images`` column (of a database from before encryption at
    rest) holds: none for ``NULL``."""
    if not isinstance(value, str):
        return ()
    return tuple(
        RecordedImage(image["data"], image["mime_type"], image.get("detail"))
        for image in codec.loads(value)
    )


#: Rows sealed per transaction when a database from before encryption at rest is migrated.
SEAL_BATCH = 500
#: The next batch of plaintext note writes, as :func:`seal_plaintext_note` takes them.
PLAINTEXT_NOTES = (
    "SELECT seq, account_id, session_id, path, text FROM note_events "
    f"WHERE sealed IS NULL ORDER BY seq LIMIT {SEAL_BATCH}"
)
#: The next batch of plaintext items, as :func:`seal_plaintext_item` takes them.
PLAINTEXT_ITEMS = (
    "SELECT seq, account_id, session_id, agent, window_id, item_key, role, content, "
    "tool_name, tool_namespace, images FROM history_items "
    f"WHERE sealed IS NULL ORDER BY seq LIMIT {SEAL_BATCH}"
)


def seal_plaintext_note(sealer: Sealer, row: Sequence[Any]) -> tuple[bytes, int]:
    """The sealed value of a :data:`PLAINTEXT_NOTES` row, and its sequence number."""
    seq, account_id, session_id, path, text = row
    return sealer.seal_note(account_id, session_id, path, text), int(seq)


def seal_plaintext_item(sealer: Sealer, row: Sequence[Any]) -> tuple[SealedItem, int]:
    """The sealed item of a :data:`PLAINTEXT_ITEMS` row, and its sequence number."""
    seq, account_id, session_id, agent, window_id, item_key, role, content = row[:8]
    tool_name, tool_namespace, images = row[8:]
    item = RecordedItem(
        window_id, item_key, role, content, tool_name, tool_namespace, _images_of_column(images)
    )
    return sealer.seal_item(account_id, session_id, agent, item), int(seq)


#: The columns of a stored item that :func:`sealed_item` reads, in its order.
SEALED_ITEM_COLUMNS = "window_id, item_key, role, tool_name, tool_namespace, sealed"


def sealed_item(row: Sequence[Any]) -> SealedItem:
    window_id, item_key, role, tool_name, tool_namespace, sealed = row
    return SealedItem(window_id, item_key, role, tool_name, tool_namespace, bytes(sealed))


@runtime_checkable
class LoopNoteReads(Protocol):
    """Note reads a backend answers on the event loop, holding no thread: the same contract
    as :meth:`Storage.note_events`, seeing every write committed before it began."""

    async def data_version(self) -> int | None:
        """A number that changes whenever another connection (of this process or another)
        has committed since it was last read; ``None`` when the backend cannot say without
        the round trip the read itself would take."""
        ...

    async def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]: ...

    async def account_key(self, account_id: str) -> str | None:
        """The account's wrapped storage secret, as :meth:`Storage.account_key`."""
        ...

    async def ping(self) -> None:
        """A trivial round trip; raises :class:`StorageUnavailableError` when it fails."""
        ...

    async def close(self) -> None:
        """Close its connections (on the loop that used them)."""
        ...


@runtime_checkable
class LoopNotes(LoopNoteReads, Protocol):
    """Note reads and writes a backend answers on the event loop: the write has the
    contract of :meth:`Storage.append_note_event` (durable before it returns)."""

    async def append_note_event(
        self, account_id: str, session_id: str, note: SealedNote, after: int
    ) -> int | None: ...


class Storage(Protocol):
    """Accounts, tokens, wrapped account keys, and sealed notes and history, per account."""

    def create_account(self, account_id: str, name: str) -> Account:
        """:raises AccountExistsError: the name is taken."""
        ...

    def account_by_name(self, name: str) -> Account | None: ...

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None: ...

    def account_for_token(self, token_hash: str) -> Account | None: ...

    def list_tokens(self) -> list[IssuedTokenRecord]:
        """Every token, oldest first."""
        ...

    def revoke_token(self, token_id: str) -> int:
        """Delete the tokens whose hash starts with ``token_id`` (hex); returns how many."""
        ...

    def revoke_account_tokens(self, account_id: str) -> int:
        """Delete every token of the account; returns how many."""
        ...

    def account_key(self, account_id: str) -> str | None:
        """The account's wrapped storage secret, ``None`` before it stored anything."""
        ...

    def add_account_key(self, account_id: str, wrapped: str) -> str:
        """Keep ``wrapped`` unless the account has a key already; returns the one kept (of
        processes racing to make the first, one wins and all use it)."""
        ...

    def account_keys(self) -> list[tuple[str, str]]:
        """Every account's wrapped storage secret."""
        ...

    def replace_account_key(self, account_id: str, old: str, new: str) -> None:
        """Store ``new`` if the account's key is still ``old`` (re-wrapping races are
        harmless: either wrapping opens the same secret)."""
        ...

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        """The session's note writes with a sequence number above ``after``, oldest first."""
        ...

    def append_note_event(
        self, account_id: str, session_id: str, note: SealedNote, after: int
    ) -> int | None:
        """Persist one note write durably, if the session has no note write with a sequence
        number above ``after`` (the writer saw every write before it, so the limits it checked
        hold); returns its sequence number, or ``None`` (nothing written) when another write
        came first. Writes to one session are numbered in the order they commit."""
        ...

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, SealedItem]]:
        """The agent's recorded items with a sequence number above ``after``, in arrival
        order."""
        ...

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[SealedItem]
    ) -> list[bool]:
        """Persist items and their tokens durably, in order, in one transaction; an item
        already recorded (same window and key) is left as it is. Returns, per item, whether
        it was new."""
        ...

    def search_candidates(
        self, account_id: str, session_id: str, agent: str, page: CandidatePage
    ) -> list[tuple[int, SealedItem]]:
        """One page of the agent's items that may match, found through the blind index."""
        ...

    def upgrade(self, sealer: Sealer) -> None:
        """Seal every row a database from before encryption at rest still holds in
        plaintext, then drop the plaintext columns: batch by batch, so an interrupted run
        resumes where it stopped, and safe from several processes at once. Then rebuild a
        blind index an earlier tokenisation made (in one transaction)."""
        ...

    def ping(self) -> None:
        """A trivial round trip; raises :class:`StorageUnavailableError` when it fails."""
        ...

    @property
    def workers(self) -> int:
        """How many threads may use the storage at once."""
        ...

    @property
    def search_page_max(self) -> int:
        """The most search candidates worth fetching in one query (a search's pages grow
        up to it)."""
        ...

    def group_commits(self) -> bool:
        """Hold commits from now on, when the backend gains from it: writes then join one
        open transaction until :meth:`commit_group`, and whoever made them answers none
        before it returns. ``False``: every write commits on its own (Postgres, whose
        connections commit side by side and share their syncs)."""
        ...

    @property
    def uncommitted(self) -> bool:
        """Whether held writes wait for :meth:`commit_group`."""
        ...

    def commit_group(self) -> None:
        """Commit the held writes, all or none.

        :raises StorageUnavailableError: none of them is on disk."""
        ...

    def data_version(self) -> int | None:
        """A number that changes whenever another connection (of this process or another)
        has committed a write since this one last asked, read without a round trip to the
        database; ``None`` when the backend cannot tell so cheaply (a reader then asks the
        database what is new on every use)."""
        ...

    def loop_notes(self) -> LoopNoteReads | None:
        """The backend's note reads (a :class:`LoopNoteReads`) or reads and writes (a
        :class:`LoopNotes`) on the event loop, or ``None`` when its calls run on worker
        threads only."""
        ...

    def close(self) -> None: ...


class AccountExistsError(CtxmodesError):
    """An account of that name exists already."""


class StorageUnavailableError(CtxmodesError):
    """The storage cannot be reached or refused the operation; nothing was half-written."""


def open_storage(
    data: Path, database: str | None = None, *, connections: int = DEFAULT_CONNECTIONS
) -> Storage:
    """The storage a service uses: Postgres when ``database`` is a ``postgresql://`` URL
    (with at most ``connections`` connections), else the SQLite file in ``data``.

    :raises StorageUnavailableError: the database cannot be opened or migrated.
    """
    if database is None:
        from ctxmodes_remote.service.sqlite_storage import SqliteStorage

        return SqliteStorage.in_directory(data)
    if not database.startswith(("postgresql://", "postgres://")):
        raise StorageUnavailableError("--database takes a postgresql:// URL")
    try:
        from ctxmodes_remote.service.postgres_storage import PostgresStorage
    except ImportError as exc:
        # psycopg raises an ImportError of its own, naming no module, when it finds no libpq
        # it can load: the extra is as much missing as when psycopg itself is.
        if (exc.name or "").startswith("ctxmodes"):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "psycopg is missing"
        raise StorageUnavailableError(
            f"Postgres storage needs its extra ({reason}): pip install 'ctxmodes[postgres]'"
        ) from None
    return PostgresStorage(database, max_connections=connections)
