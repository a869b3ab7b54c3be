"""What the database holds of an account: values sealed with AES-256-GCM, and a blind index.

Each account has two random storage keys, made the first time the account stores anything:
a data key that seals values and an index key that makes the blind index. The database keeps
them only wrapped under the master keys (:meth:`~ctxmodes_remote.service.crypto.KeyRing.wrap`),
so a database, a ``pg_dump`` or a backup without ``master.keys`` opens nothing.

A sealed value is ``version byte · 12-byte random nonce · ciphertext · tag``; its associated
data names the account and the row it belongs to, so a value moved to another row or account
fails to open instead of reading as that row's.

The blind index lets the database find candidates for a literal substring search without
seeing text or query: every distinct 1-, 2- and 3-character piece of an item's content is
turned into a 64-bit token with a keyed BLAKE2b whose key belongs to the account *and* to the
session and agent the item is under. A query of three characters or more asks for the rows
holding the tokens of (up to :data:`QUERY_TOKENS` of) its 3-grams, a shorter one for its one
token; every candidate is then opened and checked with Python's own substring test, so
answers are exact whatever the index returns.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ctxmodes import CtxmodesError

#: Bytes of the random secret an account's storage keys come from (data key · index key).
SECRET_BYTES = 64
#: The longest pieces of text the index holds tokens for.
GRAM = 3
#: The most 3-gram tokens a query asks for: enough to make candidates rare, few enough to keep
#: the database's intersection cheap (every candidate is checked anyway).
QUERY_TOKENS = 12
_VERSION = b"\x01"
_NONCE_BYTES = 12
_SCOPE_KEYS_KEPT = 1024


class SealedValueError(CtxmodesError):
    """A stored value does not open under its account's key (damaged or moved)."""


def new_secret() -> bytes:
    return os.urandom(SECRET_BYTES)


def _utf8(text: str) -> bytes:
    # History text may hold lone surrogates (JSON escapes allow them); they round-trip.
    return text.encode("utf-8", "surrogatepass")


def associated_data(*parts: str) -> bytes:
    """The associated data naming a value's place: its parts, NUL-separated."""
    return b"\0".join(_utf8(part) for part in parts)


def grams(text: str) -> set[str]:
    """Every distinct piece of ``text`` of 1 to :data:`GRAM` characters."""
    found: set[str] = set()
    for size in range(1, GRAM + 1):
        found.update(text[start : start + size] for start in range(len(text) - size + 1))
    return found


def query_grams(query: str) -> list[str]:
    """The pieces whose tokens every item containing ``query`` holds: the query itself when
    shorter than :data:`GRAM`, else up to :data:`QUERY_TOKENS` of its 3-grams, spread from
    its start to its end."""
    if len(query) < GRAM:
        return [query]
    every = list(dict.fromkeys(query[i : i + GRAM] for i in range(len(query) - GRAM + 1)))
    if len(every) <= QUERY_TOKENS:
        return every
    step = (len(every) - 1) / (QUERY_TOKENS - 1)
    return [every[round(n * step)] for n in range(QUERY_TOKENS)]


class AccountSecrets:
    """One account's data key and index key, opened from its secret."""

    __slots__ = ("_aead", "_index_key", "_scope_keys")

    def __init__(self, secret: bytes) -> None:
        if len(secret) != SECRET_BYTES:
            raise SealedValueError("an account's storage secret has the wrong size")
        self._aead = AESGCM(secret[:32])
        self._index_key = secret[32:]
        self._scope_keys: dict[tuple[str, str], bytes] = {}

    def seal(self, plaintext: bytes, place: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return _VERSION + nonce + self._aead.encrypt(nonce, plaintext, place)

    def open(self, sealed: bytes, place: bytes) -> bytes:
        """:raises SealedValueError: damaged, or sealed for another place or account."""
        if len(sealed) < 1 + _NONCE_BYTES or sealed[:1] != _VERSION:
            raise SealedValueError("a stored value is not sealed")
        nonce = sealed[1 : 1 + _NONCE_BYTES]
        try:
            return self._aead.decrypt(nonce, sealed[1 + _NONCE_BYTES :], place)
        except InvalidTag:
            raise SealedValueError(
                "a stored value does not open under its account's key (damaged or moved)"
            ) from None

    def _scope_key(self, session_id: str, agent: str) -> bytes:
        scope = (session_id, agent)
        key = self._scope_keys.get(scope)
        if key is None:
            if len(self._scope_keys) >= _SCOPE_KEYS_KEPT:
                self._scope_keys.clear()
            key = hmac.digest(self._index_key, associated_data("scope", *scope), "sha256")
            self._scope_keys[scope] = key
        return key

    def tokens(self, session_id: str, agent: str, pieces: Iterable[str]) -> list[int]:
        """The index tokens of ``pieces`` under one session's agent (signed 64-bit)."""
        key = self._scope_key(session_id, agent)
        return [
            int.from_bytes(
                hashlib.blake2b(_utf8(piece), digest_size=8, key=key).digest(), "big", signed=True
            )
            for piece in pieces
        ]
