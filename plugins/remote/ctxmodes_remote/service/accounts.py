"""Bearer tokens and the accounts they stand for.

A token is shaped as a JWT (``header.claims.secret``) because the Codex CLI reads its access
token's claims (plan, account id, expiry) before it talks to a backend; the claims say
nothing the service trusts. What authenticates is the whole token: the service stores only
its SHA-256 and looks the hash up on every request, so a token is revoked by deleting its
row and a leaked database holds nothing that can be replayed.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass

from ctxmodes.session import codec
from ctxmodes_remote.service.storage import Account, Storage

#: How long the claims say a token lives; the service itself does not expire tokens.
TOKEN_CLAIMED_LIFETIME_S = 10 * 365 * 86_400
#: The plan the claims name: Codex enables its context feature for Plus, Pro and ProLite.
CLAIMED_PLAN = "pro"


def _segment(value: object) -> str:
    return base64.urlsafe_b64encode(codec.dumps(value)).rstrip(b"=").decode("ascii")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


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
        "https://api.openai.com/auth": {
            "chatgpt_plan_type": CLAIMED_PLAN,
            "chatgpt_account_id": account.account_id,
            "chatgpt_user_id": account.account_id,
        },
    }
    header = {"alg": "none", "typ": "JWT", "kid": "ctxmodes-serve"}
    return f"{_segment(header)}.{_segment(claims)}.{secrets.token_urlsafe(32)}"


def create_token(storage: Storage, name: str, *, now_s: int | None = None) -> IssuedToken:
    """A new token for the account ``name``, creating the account on first use."""
    now = int(time.time()) if now_s is None else now_s
    account = storage.account_by_name(name) or storage.create_account(new_account_id(), name)
    token = token_for(account, now)
    storage.add_token(account.account_id, token_hash(token), now)
    return IssuedToken(account, token)


def authenticate(storage: Storage, authorization: str | None) -> Account | None:
    """The account an ``Authorization: Bearer …`` header stands for, else ``None``."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return storage.account_for_token(token_hash(token.strip()))
