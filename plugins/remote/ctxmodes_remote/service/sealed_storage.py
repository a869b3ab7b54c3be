"""The plaintext storage interface the engine uses, over a backend that holds only sealed
values (encryption at rest).

Every note (path and text) and every recorded item (content, tool arguments and outputs,
images) is sealed with its account's data key before it reaches the backend, and opened on
the way back; searches go through the blind index and check each candidate after opening it
(see :mod:`ctxmodes_remote.service.sealing`). The account's storage secret is made on its
first write and kept in the backend wrapped under the master keys; opening a service re-wraps
secrets still wrapped under an older master key, so after a rotation the old key can be
dropped once every process has started (or reloaded its keys) with the new one.

A wrong or missing master key never yields plaintext: the account's secret does not unwrap,
and every use of its data raises :class:`~ctxmodes_remote.service.crypto.AccountKeyError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from ctxmodes.session import codec
from ctxmodes_remote.service.candidates import CandidateChecker
from ctxmodes_remote.service.crypto import AccountKeyError, KeyRing
from ctxmodes_remote.service.sealing import (
    AccountSecrets,
    SealedValueError,
    associated_data,
    new_secret,
)
from ctxmodes_remote.service.storage import (
    Account,
    CandidatePage,
    HistorySearch,
    LoopNoteReads,
    LoopNotes,
    NoteEvent,
    RecordedImage,
    RecordedItem,
    SealedItem,
    SealedNote,
    Storage,
)

_log = logging.getLogger("ctxmodes.serve")

#: Candidates a search fetches first: most searches end within one page. Each further page
#: is twice as large, up to the backend's ``search_page_max``: where the database finds the
#: candidates anew for every page, a search through many pays for few.
SEARCH_PAGE = 200

#: The row of ``account_keys`` that records which master key the database was set up with:
#: a random value wrapped under it by the first process to start (no account id looks like
#: it). A process whose key file does not open it would make account keys of its own and
#: split the database between two key files, so it refuses to start instead; rotation
#: re-wraps it like an account's keys.
KEY_CHECK_ID = "master-key-check"

WRONG_KEY_FILE = (
    "master.keys opens none of this database's data: it was encrypted under other master "
    "keys (start with the key file it was made with; every process needs the same one)"
)


def _log_unreadable(unreadable: Sequence[str]) -> None:
    if unreadable:
        _log.error(
            "%d account(s) hold data under a master key master.keys does not have; "
            "their data is refused",
            len(unreadable),
        )


def _note_place(account_id: str, session_id: str) -> bytes:
    return associated_data("note", account_id, session_id)


def _item_place(account_id: str, session_id: str, agent: str, window_id: str, key: str) -> bytes:
    return associated_data("item", account_id, session_id, agent, window_id, key)


def _sealed_note(
    secrets: AccountSecrets, account_id: str, session_id: str, path: str, text: str
) -> bytes:
    plain = codec.dumps({"path": path, "text": text})
    return secrets.seal(plain, _note_place(account_id, session_id))


def _opened_notes(
    secrets: AccountSecrets,
    account_id: str,
    session_id: str,
    stored: Sequence[tuple[int, SealedNote]],
) -> list[tuple[int, NoteEvent]]:
    place = _note_place(account_id, session_id)
    events: list[tuple[int, NoteEvent]] = []
    for seq, note in stored:
        value = codec.loads(secrets.open(note.sealed, place))
        events.append((seq, NoteEvent(note.action, value["path"], value["text"], note.timestamp)))
    return events


def _image_values(images: Sequence[RecordedImage]) -> list[dict[str, Any]]:
    return [{"data": i.data, "mime_type": i.mime_type, "detail": i.detail} for i in images]


class SealedStorage:
    """Notes and history in plaintext for the engine, sealed in ``backend``."""

    def __init__(
        self, backend: Storage, keyring: KeyRing, checker: CandidateChecker | None = None
    ) -> None:
        self.backend = backend
        self._keyring = keyring
        self._checker = checker or CandidateChecker()
        self._secrets: dict[str, AccountSecrets] = {}
        recorded = backend.account_key(KEY_CHECK_ID)
        if recorded is not None:
            self._open_key_check(recorded)
        # A database from before encryption at rest is sealed in place before first use
        # (and an index of an earlier tokenisation rebuilt).
        backend.upgrade(self)
        unreadable = self._rewrap()
        accounts = [key for key in backend.account_keys() if key[0] != KEY_CHECK_ID]
        if unreadable and len(unreadable) == len(accounts):
            raise AccountKeyError(WRONG_KEY_FILE)  # the one line, with no log line before it
        _log_unreadable(unreadable)
        if recorded is None:
            # Two processes starting at once on a new database: the first row stays, and the
            # other process, if its key file differs, refuses here.
            made = self._keyring.wrap(KEY_CHECK_ID, new_secret())
            self._open_key_check(backend.add_account_key(KEY_CHECK_ID, made))

    def _open_key_check(self, wrapped: str) -> None:
        try:
            self._keyring.unwrap(KEY_CHECK_ID, wrapped)
        except AccountKeyError:
            raise AccountKeyError(WRONG_KEY_FILE) from None

    def replace_keyring(self, keyring: KeyRing) -> None:
        """Use ``keyring`` from now on: re-wrap under its newest key, and open every
        account's keys again with it (a key dropped from the file stops opening data here
        too, not only after a restart)."""
        self._keyring = keyring
        self.forget_keys()
        self.rewrap_account_keys()

    def forget_keys(self) -> None:
        """Read the account keys from the backend again on next use (a key made in a
        transaction that failed is not there)."""
        self._secrets.clear()

    def rewrap_account_keys(self) -> list[str]:
        """Re-wrap account secrets still under an older master key with the newest; returns
        the accounts whose secret no master key of the keyring opens (and logs them)."""
        unreadable = self._rewrap()
        _log_unreadable(unreadable)
        return unreadable

    def _rewrap(self) -> list[str]:
        unreadable: list[str] = []
        for account_id, wrapped in self.backend.account_keys():
            try:
                rewrapped = self._keyring.rewrap(account_id, wrapped)
            except AccountKeyError:
                if account_id != KEY_CHECK_ID:
                    unreadable.append(account_id)
                continue
            if rewrapped is not None:
                self.backend.replace_account_key(account_id, wrapped, rewrapped)
        return unreadable

    def _account(self, account_id: str) -> AccountSecrets:
        """The account's storage keys, made on its first write.

        :raises AccountKeyError: they are wrapped under a master key the keyring lacks."""
        secrets = self._secrets.get(account_id)
        if secrets is None:
            wrapped = self.backend.account_key(account_id)
            if wrapped is None:
                made = self._keyring.wrap(account_id, new_secret())
                wrapped = self.backend.add_account_key(account_id, made)
            secrets = AccountSecrets(self._keyring.unwrap(account_id, wrapped))
            self._secrets[account_id] = secrets
        return secrets

    # -- sealing (also what the migration from plaintext uses) ----------------------------------

    def seal_note(self, account_id: str, session_id: str, path: str, text: str) -> bytes:
        return _sealed_note(self._account(account_id), account_id, session_id, path, text)

    def seal_item(
        self, account_id: str, session_id: str, agent: str, item: RecordedItem
    ) -> SealedItem:
        secrets = self._account(account_id)
        value: dict[str, Any] = {"content": item.content}
        if item.images:
            value["images"] = _image_values(item.images)
        place = _item_place(account_id, session_id, agent, item.window_id, item.item_key)
        return SealedItem(
            item.window_id,
            item.item_key,
            item.role,
            item.tool_name,
            item.tool_namespace,
            secrets.seal(codec.dumps(value), place),
            secrets.item_tokens(session_id, agent, item.content),
        )

    def item_tokens(
        self, account_id: str, session_id: str, agent: str, stored: SealedItem
    ) -> bytes:
        """The blind-index tokens of a stored item, opened first."""
        item = self._open_item(account_id, session_id, agent, stored)
        return self._account(account_id).item_tokens(session_id, agent, item.content)

    def _open_item(
        self, account_id: str, session_id: str, agent: str, stored: SealedItem
    ) -> RecordedItem:
        place = _item_place(account_id, session_id, agent, stored.window_id, stored.item_key)
        value = codec.loads(self._account(account_id).open(stored.sealed, place))
        images = tuple(
            RecordedImage(image["data"], image["mime_type"], image.get("detail"))
            for image in value.get("images", ())
        )
        return RecordedItem(
            stored.window_id,
            stored.item_key,
            stored.role,
            value["content"],
            stored.tool_name,
            stored.tool_namespace,
            images,
        )

    # -- accounts and tokens pass through: they hold no content ----------------------------------

    def create_account(self, account_id: str, name: str) -> Account:
        return self.backend.create_account(account_id, name)

    def account_by_name(self, name: str) -> Account | None:
        return self.backend.account_by_name(name)

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None:
        self.backend.add_token(account_id, token_hash, created_at)

    def account_for_token(self, token_hash: str) -> Account | None:
        return self.backend.account_for_token(token_hash)

    def ping(self) -> None:
        self.backend.ping()

    def close(self) -> None:
        self._checker.close()
        self.backend.close()

    # -- notes ----------------------------------------------------------------------------------

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, NoteEvent]]:
        stored = self.backend.note_events(account_id, session_id, after)
        if not stored:
            return []
        return _opened_notes(self._account(account_id), account_id, session_id, stored)

    def append_note_event(
        self, account_id: str, session_id: str, event: NoteEvent, after: int
    ) -> int | None:
        """See :meth:`Storage.append_note_event`."""
        sealed = self.seal_note(account_id, session_id, event.path, event.text)
        note = SealedNote(event.action, event.timestamp, sealed)
        return self.backend.append_note_event(account_id, session_id, note, after)

    # -- notes on the event loop ------------------------------------------------------------

    async def _account_on_loop(self, notes: LoopNoteReads, account_id: str) -> AccountSecrets:
        """:meth:`_account` for a read on the loop: the key is read there too (a stored
        note's key is committed with it or before it).

        :raises AccountKeyError: it is wrapped under a master key the keyring lacks.
        :raises SealedValueError: the account has notes but no key."""
        secrets = self._secrets.get(account_id)
        if secrets is None:
            wrapped = await notes.account_key(account_id)
            if wrapped is None:
                raise SealedValueError(f"account {account_id} has stored notes but no key")
            secrets = AccountSecrets(self._keyring.unwrap(account_id, wrapped))
            self._secrets[account_id] = secrets
        return secrets

    async def note_events_on_loop(
        self, notes: LoopNoteReads, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, NoteEvent]]:
        """:meth:`note_events` through the backend's :meth:`Storage.loop_notes`."""
        stored = await notes.note_events(account_id, session_id, after)
        if not stored:
            return []
        secrets = await self._account_on_loop(notes, account_id)
        return _opened_notes(secrets, account_id, session_id, stored)

    async def append_note_event_on_loop(
        self, notes: LoopNotes, account_id: str, session_id: str, event: NoteEvent, after: int
    ) -> int | None:
        """:meth:`append_note_event` through the backend's :meth:`Storage.loop_notes` (an
        account's first write makes its key, off the loop)."""
        secrets = self._secrets.get(account_id)
        if secrets is None:
            secrets = await asyncio.to_thread(self._account, account_id)
        sealed = _sealed_note(secrets, account_id, session_id, event.path, event.text)
        note = SealedNote(event.action, event.timestamp, sealed)
        return await notes.append_note_event(account_id, session_id, note, after)

    # -- history --------------------------------------------------------------------------------

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, RecordedItem]]:
        return [
            (seq, self._open_item(account_id, session_id, agent, stored))
            for seq, stored in self.backend.history_items(account_id, session_id, agent, after)
        ]

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[RecordedItem]
    ) -> None:
        """Persist items durably, in order (an item already recorded is left as it is)."""
        if items:
            sealed = [self.seal_item(account_id, session_id, agent, item) for item in items]
            self.backend.append_history_items(account_id, session_id, agent, sealed)

    def search_history(
        self, account_id: str, session_id: str, agent: str, search: HistorySearch
    ) -> list[RecordedItem]:
        """The agent's recorded items ``search`` selects, in arrival order: candidates from
        the blind index, each opened and checked for the literal substring (see
        :class:`~ctxmodes_remote.service.candidates.CandidateChecker`). Found items leave
        their images out (only ``read_item`` answers them)."""
        secrets = self._account(account_id)
        tokens = secrets.query_tokens(session_id, agent, search.text)
        found: list[RecordedItem] = []
        cursor: int | None = None
        size = SEARCH_PAGE
        while len(found) < search.limit:
            page = CandidatePage(search, tokens, cursor, size)
            candidates = self.backend.search_candidates(account_id, session_id, agent, page)
            matches = self._checker.check(
                secrets.data_key,
                secrets.aead,
                [stored.sealed for _, stored in candidates],
                [
                    _item_place(account_id, session_id, agent, stored.window_id, stored.item_key)
                    for _, stored in candidates
                ],
                search.text,
                search.limit - len(found),
            )
            for index, content in matches:
                stored = candidates[index][1]
                found.append(
                    RecordedItem(
                        stored.window_id,
                        stored.item_key,
                        stored.role,
                        content,
                        stored.tool_name,
                        stored.tool_namespace,
                    )
                )
            if len(candidates) < size:
                break
            cursor = candidates[-1][0]
            size = max(SEARCH_PAGE, min(size * 2, self.backend.search_page_max))
        return found[::-1] if search.newest_first else found
