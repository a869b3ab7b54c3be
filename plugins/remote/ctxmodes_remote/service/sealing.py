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
turned into a 32-bit token, the first four bytes of the piece's block (its code points and
its length, four 32-bit words) enciphered with AES-256 under a key that belongs to the
account *and* to the session and agent the item is under: a keyed pseudorandom permutation,
one cipher call for all the pieces of an item (blocks are laid out with array slicing, not a
loop per piece). A query of three characters or more asks for the rows holding the tokens of
(up to :data:`QUERY_TOKENS` of) its 3-grams, a shorter one for its one token; every
candidate is then opened and checked with Python's own substring test, so answers are exact
whatever the index returns.
"""

from __future__ import annotations

import hmac
import os
import struct
import sys
from array import array
from typing import Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
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
#: Bytes of one token, and of the cipher block a piece is laid out in (32-bit words).
TOKEN_BYTES = 4
_BLOCK = 16
_WORDS = _BLOCK // 4
#: The array type code of an unsigned 32-bit word on this platform.
_WORD: Literal["I", "L"] = "I" if array("I").itemsize == 4 else "L"


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


def _blocks(code_points: array[int], size: int) -> array[int]:
    """The blocks of every piece of ``size`` characters: ``size`` code points, zeros, then
    ``size`` (so pieces of different lengths never share a block), four words each."""
    count = len(code_points) - size + 1
    blocks = array(_WORD, bytes(_BLOCK * max(count, 0)))
    if count <= 0:
        return blocks
    for offset in range(size):
        blocks[offset::_WORDS] = code_points[offset : offset + count]
    blocks[_WORDS - 1 :: _WORDS] = array(_WORD, [size]) * count
    return blocks


def _code_points(text: str) -> array[int]:
    # UTF-32 code units are the code points (lone surrogates included), one word each.
    return array(_WORD, text.encode("utf-32-le", "surrogatepass"))


def open_sealed(aead: AESGCM, sealed: bytes, place: bytes) -> bytes:
    """The plaintext of a value sealed with ``aead``'s key for ``place``.

    :raises SealedValueError: damaged, or sealed for another place or account."""
    if len(sealed) < 1 + _NONCE_BYTES or sealed[:1] != _VERSION:
        raise SealedValueError("a stored value is not sealed")
    nonce = sealed[1 : 1 + _NONCE_BYTES]
    try:
        return aead.decrypt(nonce, sealed[1 + _NONCE_BYTES :], place)
    except InvalidTag:
        raise SealedValueError(
            "a stored value does not open under its account's key (damaged or moved)"
        ) from None


class AccountSecrets:
    """One account's data key and index key, opened from its secret."""

    __slots__ = ("_aead", "_data_key", "_index_key", "_scope_ciphers")

    def __init__(self, secret: bytes) -> None:
        if len(secret) != SECRET_BYTES:
            raise SealedValueError("an account's storage secret has the wrong size")
        self._data_key = secret[:32]
        self._aead = AESGCM(self._data_key)
        self._index_key = secret[32:]
        self._scope_ciphers: dict[tuple[str, str], Cipher[modes.ECB]] = {}

    def seal(self, plaintext: bytes, place: bytes) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        return _VERSION + nonce + self._aead.encrypt(nonce, plaintext, place)

    def open(self, sealed: bytes, place: bytes) -> bytes:
        """:raises SealedValueError: damaged, or sealed for another place or account."""
        return open_sealed(self._aead, sealed, place)

    @property
    def data_key(self) -> bytes:
        """The key values are sealed with (for a helper process that opens them)."""
        return self._data_key

    @property
    def aead(self) -> AESGCM:
        return self._aead

    def _scope_cipher(self, session_id: str, agent: str) -> Cipher[modes.ECB]:
        scope = (session_id, agent)
        cipher = self._scope_ciphers.get(scope)
        if cipher is None:
            if len(self._scope_ciphers) >= _SCOPE_KEYS_KEPT:
                self._scope_ciphers.clear()
            key = hmac.digest(self._index_key, associated_data("scope", *scope), "sha256")
            # ECB on purpose: each block is one distinct piece, enciphered on its own.
            cipher = Cipher(algorithms.AES(key), modes.ECB())
            self._scope_ciphers[scope] = cipher
        return cipher

    def _tokens(self, session_id: str, agent: str, blocks: array[int]) -> bytes:
        """The first four bytes of every enciphered block, in order."""
        if not blocks:
            return b""
        if sys.byteorder == "big":
            blocks.byteswap()  # the blocks are the same bytes on every machine
        enciphered = self._scope_cipher(session_id, agent).encryptor().update(blocks.tobytes())
        return memoryview(enciphered).cast(_WORD)[::_WORDS].tobytes()

    def item_tokens(self, session_id: str, agent: str, text: str) -> bytes:
        """The tokens of every distinct piece of ``text`` of 1 to :data:`GRAM` characters,
        under one session's agent, packed :data:`TOKEN_BYTES` bytes each."""
        code_points = _code_points(text)
        blocks = array(_WORD)
        for size in range(1, GRAM + 1):
            blocks += _blocks(code_points, size)
        tokens = self._tokens(session_id, agent, blocks)
        distinct = array(_WORD, set(memoryview(tokens).cast(_WORD)))
        return distinct.tobytes()

    def query_tokens(self, session_id: str, agent: str, query: str) -> bytes:
        """Tokens every item containing ``query`` holds: the query's own when it is shorter
        than :data:`GRAM`, else up to :data:`QUERY_TOKENS` of its 3-grams', spread from its
        start to its end."""
        code_points = _code_points(query)
        size = min(len(code_points), GRAM)
        tokens = self._tokens(session_id, agent, _blocks(code_points, size))
        every = list(dict.fromkeys(memoryview(tokens).cast(_WORD)))
        if len(every) > QUERY_TOKENS:
            step = (len(every) - 1) / (QUERY_TOKENS - 1)
            every = [every[round(n * step)] for n in range(QUERY_TOKENS)]
        return array(_WORD, every).tobytes()


def token_array(tokens: bytes) -> str:
    """Packed tokens as a Postgres ``integer[]`` literal (signed 32-bit values): built in
    one pass here, parsed by the server, cheaper than adapting a list value by value."""
    values = struct.unpack(f">{len(tokens) // TOKEN_BYTES}i", tokens)
    return "{" + ",".join(map(str, values)) + "}"


def token_words(tokens: bytes) -> list[str]:
    """Packed tokens as words of eight hex digits (for a full-text index)."""
    return tokens.hex(" ", TOKEN_BYTES).split(" ") if tokens else []
