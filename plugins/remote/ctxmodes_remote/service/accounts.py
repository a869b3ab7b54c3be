"""Bearer tokens and the accounts they stand for.

A token is shaped as a JWT (``header.claims.secret``) because the Codex CLI reads its access
token's claims (plan, account id, expiry) before it talks to a backend; the claims say
nothing the service trusts. What authenticates is the whole token: the service stores only
its SHA-256, so a leaked database holds nothing that can be replayed, and a token is revoked
by deleting its row (``serve token revoke``). A process remembers a token it found for at
most :data:`TOKEN_CACHE_S` seconds (:class:`TokenCache`), so every process refuses a revoked
token within that bound, without a database lookup on every request.
A token's id, which ``serve token list`` shows and ``revoke`` takes, is the start of its
hash: it names the token without being able to stand for it.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ctxmodes import CtxmodesError
from ctxmodes.session import codec
from ctxmodes_remote.service.storage import TOKEN_ID_DIGITS, Account, Storage

#: How long the claims say a token lives; the service itself does not expire tokens.
TOKEN_CLAIMED_LIFETIME_S = 10 * 365 * 86_400
#: Seconds a process keeps a token it found in storage: a revoked token is refused by every
#: process within this bound.
TOKEN_CACHE_S = 2.0
#: Tokens a process keeps at most (the least recently used leaves first).
TOKEN_CACHE_SIZE = 4096
#: What a token's header names as its key: tokens of the service are told by it.
TOKEN_KEY_ID = "ctxmodes-serve"
#: The claim a token holds its account under (Codex's own claim name).
AUTH_CLAIM = "https://api.openai.com/auth"
#: The plan the claims name: Codex enables its context feature for Plus, Pro and ProLite.
CLAIMED_PLAN = "pro"


def _segment(value: object) -> str:
    return base64.urlsafe_b64encode(codec.dumps(value)).rstrip(b"=").decode("ascii")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_id(token: str) -> str:
    return token_hash(token)[:TOKEN_ID_DIGITS]


def new_account_id() -> str:
    return "acct_" + secrets.token_hex(12)


@dataclass(frozen=True, slots=True)
class IssuedToken:
    account: Account
    token: str


def token_for(account: Account, now_s: int) -> str:
    claims = {
        "sub": account.account_id,
        "iat": now_s,
        "exp": now_s + TOKEN_CLAIMED_LIFETIME_S,
        "email": f"{account.name}@ctxmodes-serve.invalid",
        AUTH_CLAIM: {
            "chatgpt_plan_type": CLAIMED_PLAN,
            "chatgpt_account_id": account.account_id,
            "chatgpt_user_id": account.account_id,
        },
    }
    header = {"alg": "none", "typ": "JWT", "kid": TOKEN_KEY_ID}
    return f"{_segment(header)}.{_segment(claims)}.{secrets.token_urlsafe(32)}"


def create_token(storage: Storage, name: str, *, now_s: int | None = None) -> IssuedToken:
    """A new token for the account ``name``, creating the account on first use."""
    now = int(time.time()) if now_s is None else now_s
    account = storage.account_by_name(name) or storage.create_account(new_account_id(), name)
    token = token_for(account, now)
    storage.add_token(account.account_id, token_hash(token), now)
    return IssuedToken(account, token)


def revoke(storage: Storage, *, token: str | None = None, account: str | None = None) -> int:
    """Revoke the token whose id is ``token``, or every token of the account named
    ``account``; returns how many were revoked.

    :raises CtxmodesError: not a token id, or nothing matched.
    """
    if token is not None:
        if len(token) != TOKEN_ID_DIGITS or any(c not in "0123456789abcdef" for c in token):
            raise CtxmodesError(
                f"a token id is {TOKEN_ID_DIGITS} hex digits, as `serve token list` shows it"
            )
        count = storage.revoke_token(token)
        if count == 0:
            raise CtxmodesError(f"no token has the id {token}")
        return count
    if account is None:
        raise CtxmodesError("name a token id or an --account")
    found = storage.account_by_name(account)
    if found is None:
        raise CtxmodesError(f"no account is named {account!r}")
    return storage.revoke_account_tokens(found.account_id)


def bearer_hash(authorization: str | None) -> str | None:
    """The hash of the token an ``Authorization: Bearer …`` header carries, else ``None``."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token_hash(token.strip())


def authenticate(storage: Storage, authorization: str | None) -> Account | None:
    """The account an ``Authorization: Bearer …`` header stands for, else ``None``."""
    hashed = bearer_hash(authorization)
    return None if hashed is None else storage.account_for_token(hashed)


class TokenCache:
    """Tokens found in storage in the last :data:`TOKEN_CACHE_S` seconds, at most
    :data:`TOKEN_CACHE_SIZE` of them. Only tokens storage knew are kept, so requests with
    made-up tokens cannot grow it. They are kept by the ``Authorization`` header that
    carried them, so a request whose token is known costs a dictionary lookup, not a hash.
    Safe to use from several threads."""

    def __init__(
        self,
        *,
        lifetime_s: float = TOKEN_CACHE_S,
        size: int = TOKEN_CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lifetime_s = lifetime_s
        self._size = size
        self._clock = clock
        self._found: OrderedDict[str, tuple[Account, float]] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, authorization: str | None) -> Account | None:
        """The account, if the token was found in storage within the bound; else ``None``
        (unknown here: ask :meth:`authenticate`)."""
        if not authorization:
            return None
        with self._lock:
            entry = self._found.get(authorization)
            if entry is None:
                return None
            if entry[1] <= self._clock():
                del self._found[authorization]
                return None
            self._found.move_to_end(authorization)
            return entry[0]

    def authenticate(self, storage: Storage, authorization: str | None) -> Account | None:
        """The account the header stands for: from memory within the bound, else looked up
        (and remembered when found)."""
        account = self.cached(authorization)
        if account is not None:
            return account
        hashed = bearer_hash(authorization)
        if hashed is None or authorization is None:
            return None
        # The bound counts from before the lookup: a revocation racing it is still seen in
        # time.
        expires = self._clock() + self._lifetime_s
        account = storage.account_for_token(hashed)
        if account is not None:
            with self._lock:
                self._found[authorization] = (account, expires)
                self._found.move_to_end(authorization)
                while len(self._found) > self._size:
                    self._found.popitem(last=False)
        return account

    def clear(self) -> None:
        with self._lock:
            self._found.clear()
