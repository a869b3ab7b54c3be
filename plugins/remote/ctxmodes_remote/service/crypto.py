"""Per-account encryption of everything the client may only carry, never read.

Values leave the service as Fernet tokens (AES-128-CBC with HMAC-SHA256, ``gAAAAA…``, the
shape Codex's own encrypted values have). Each account has its own key, derived with HKDF
from a master key, so a token minted for one account is refused under every other. The
keyring holds several master keys, newest first: new tokens use the newest, and tokens made
under any older key still open (:class:`~cryptography.fernet.MultiFernet`), so rotation loses
nothing. A token that was tampered with, truncated or made under a foreign key raises
:class:`CiphertextError`; it never decrypts to garbage.
"""

from __future__ import annotations

import base64
import contextlib
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ctxmodes import CtxmodesError

MASTER_KEY_BYTES = 32
_HKDF_SALT = b"ctxmodes-serve account key v1"
#: A different salt for the keys that wrap each account's storage keys, so the key that
#: seals outputs for the client never also opens what the database holds.
_WRAPPING_SALT = b"ctxmodes-serve at-rest wrapping key v1"


class CiphertextError(CtxmodesError):
    """A value that should be this account's ciphertext is not."""


class KeyFileError(CtxmodesError):
    """The master key file is missing, unreadable or malformed."""


class AccountKeyError(CtxmodesError):
    """An account's stored data is wrapped under a master key the keyring does not hold."""


def _account_key(master: bytes, account_id: str, salt: bytes = _HKDF_SALT) -> Fernet:
    derived = HKDF(
        algorithm=hashes.SHA256(),
        length=32,
        salt=salt,
        info=account_id.encode("utf-8"),
    ).derive(master)
    return Fernet(base64.urlsafe_b64encode(derived))


class KeyRing:
    """Master keys, newest first, and the account keys derived from them."""

    def __init__(self, masters: Sequence[bytes]) -> None:
        if not masters:
            raise KeyFileError("the keyring holds no master key")
        if any(len(key) != MASTER_KEY_BYTES for key in masters):
            raise KeyFileError(f"master keys must be {MASTER_KEY_BYTES} bytes")
        self._masters = tuple(masters)
        self._accounts: dict[str, MultiFernet] = {}
        self._wrapping: dict[str, tuple[Fernet, MultiFernet]] = {}

    @property
    def key_count(self) -> int:
        return len(self._masters)

    def _fernet(self, account_id: str) -> MultiFernet:
        fernet = self._accounts.get(account_id)
        if fernet is None:
            fernet = MultiFernet([_account_key(key, account_id) for key in self._masters])
            self._accounts[account_id] = fernet
        return fernet

    def encrypt(self, account_id: str, plaintext: bytes) -> str:
        return self._fernet(account_id).encrypt(plaintext).decode("ascii")

    def decrypt(self, account_id: str, token: object) -> bytes:
        """:raises CiphertextError: not a token of this account (under any master key)."""
        if not isinstance(token, str) or not token:
            raise CiphertextError("expected encrypted content")
        try:
            return self._fernet(account_id).decrypt(token.encode("ascii"))
        except (InvalidToken, UnicodeEncodeError):
            # Said to the user of a session that resends it: after a key was dropped too
            # early, that is the one cause the user cannot see for themselves.
            raise CiphertextError(
                "encrypted content is invalid for this account (another account's, altered, "
                "or made under a master key since dropped from the service's key file)"
            ) from None

    # -- wrapping the storage keys of accounts ---------------------------------------------

    def _wrappers(self, account_id: str) -> tuple[Fernet, MultiFernet]:
        """The newest master's wrapping key of the account, and all of them."""
        wrappers = self._wrapping.get(account_id)
        if wrappers is None:
            keys = [_account_key(key, account_id, _WRAPPING_SALT) for key in self._masters]
            wrappers = (keys[0], MultiFernet(keys))
            self._wrapping[account_id] = wrappers
        return wrappers

    def wrap(self, account_id: str, secret: bytes) -> str:
        """``secret`` sealed under the account's wrapping key of the newest master key."""
        return self._wrappers(account_id)[0].encrypt(secret).decode("ascii")

    def unwrap(self, account_id: str, wrapped: str) -> bytes:
        """:raises AccountKeyError: no master key of the keyring wrapped it."""
        try:
            return self._wrappers(account_id)[1].decrypt(wrapped.encode("ascii"))
        except (InvalidToken, UnicodeEncodeError):
            raise AccountKeyError(
                f"the stored data of account {account_id} is encrypted under a master key "
                "that master.keys does not hold (a replaced key file, or a key dropped before "
                "the service re-wrapped it); it cannot be read"
            ) from None

    def rewrap(self, account_id: str, wrapped: str) -> str | None:
        """``wrapped`` re-sealed under the newest master key, or ``None`` when it is already.

        :raises AccountKeyError: no master key of the keyring wrapped it."""
        newest, every = self._wrappers(account_id)
        try:
            newest.decrypt(wrapped.encode("ascii"))
            return None
        except (InvalidToken, UnicodeEncodeError):
            pass
        self.unwrap(account_id, wrapped)
        return every.rotate(wrapped.encode("ascii")).decode("ascii")


# -- the key file -------------------------------------------------------------------------
#
# One base64url master key per line, newest first. Owner-only: whoever reads it can decrypt
# every account's outputs.

KEY_FILE_NAME = "master.keys"


def write_owner_only(path: Path, data: bytes, *, replace: bool = True) -> None:
    """``data`` in ``path``, whole or not at all. Without ``replace``, a file already there
    is kept: of processes creating the file at once, the first one's stands.

    :raises FileExistsError: not ``replace``, and ``path`` exists."""
    # A name of this process's own: another process writing its file at the same moment
    # neither truncates this one nor moves it away.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            os.write(descriptor, data)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails when the file exists, unlike a rename
    finally:
        temporary.unlink(missing_ok=True)


def _read_keys(path: Path) -> list[bytes]:
    try:
        mode = path.stat().st_mode
        lines = path.read_text("ascii").split()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"cannot read {path}: {exc}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"{path} is readable by others; make it owner-only (chmod 600)")
    try:
        return [base64.urlsafe_b64decode(line) for line in lines]
    except ValueError:
        raise KeyFileError(f"{path} holds a line that is not a base64 key") from None


def load_keyring(directory: Path) -> KeyRing:
    """The keyring kept in ``directory``.

    :raises KeyFileError: there is none, or it cannot be read."""
    return KeyRing(_read_keys(directory / KEY_FILE_NAME))


def load_or_create_keyring(directory: Path) -> KeyRing:
    """The keyring kept in ``directory``; a first start creates it with one new key."""
    path = directory / KEY_FILE_NAME
    if not path.exists():
        key = base64.urlsafe_b64encode(os.urandom(MASTER_KEY_BYTES)) + b"\n"
        with contextlib.suppress(FileExistsError):  # another process made it first: use it
            write_owner_only(path, key, replace=False)
    return KeyRing(_read_keys(path))


def rotate_master_key(directory: Path) -> int:
    """Put a new master key in front of the old ones; returns how many keys there are now."""
    path = directory / KEY_FILE_NAME
    old = _read_keys(path) if path.exists() else []
    keys = [os.urandom(MASTER_KEY_BYTES), *old]
    write_owner_only(path, b"".join(base64.urlsafe_b64encode(key) + b"\n" for key in keys))
    return len(keys)
