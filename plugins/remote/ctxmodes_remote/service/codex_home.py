"""``ctxmodes serve codex-home``: a Codex CLI home whose ChatGPT backend is the service.

The Codex CLI talks to a Codex backend when it is signed in with ChatGPT: its
``config.toml`` names the backend's two base URLs and its ``auth.json`` holds the sign-in.
A token from ``serve token create`` is shaped as the access token Codex reads (its claims
name the account), so the home holds the token as both of the sign-in's tokens, the
account's id, and the time of the sign-in (without one, Codex refuses to use it).

The home is the service's alone: a ``config.toml`` already there is never rewritten, and an
``auth.json`` only when it holds a token of a ``ctxmodes serve`` (a new token after one was
revoked), so a personal ChatGPT sign-in or configuration cannot be lost to this command.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ctxmodes import CtxmodesError
from ctxmodes_remote.service.accounts import AUTH_CLAIM, TOKEN_KEY_ID
from ctxmodes_remote.service.crypto import write_owner_only

#: Where a Codex backend's own routes are; Codex turns its context feature on only for a
#: base that ends so.
CODEX_PATH = "/backend-api/codex"


@dataclass(frozen=True, slots=True)
class CodexBackend:
    """The two base URLs Codex is given: its model and context calls, and its account
    calls (``wham/…``)."""

    openai_base_url: str
    chatgpt_base_url: str

    @classmethod
    def at(cls, url: str) -> CodexBackend:
        """The bases of a service printed as listening on ``url``.

        :raises CtxmodesError: not an HTTPS URL ending in ``/backend-api/codex``.
        """
        base = url.strip().rstrip("/")
        parts = urlsplit(base)
        if parts.scheme != "https" or not parts.hostname:
            raise CtxmodesError(
                f"{url!r} is not an https:// URL: Codex reaches a ChatGPT backend over HTTPS "
                "only (start the service with --tls-cert and --tls-key)"
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise CtxmodesError(f"{url!r}: give the service's URL without credentials or query")
        if not parts.path.endswith(CODEX_PATH):
            raise CtxmodesError(
                f"{url!r} does not end in {CODEX_PATH}: give the URL `ctxmodes serve` printed "
                "as listening on"
            )
        return cls(base, base.removesuffix("codex"))

    def config(self) -> str:
        """The ``config.toml`` of the home: the two bases, and the ChatGPT features the
        service does not serve turned off, so that Codex does not ask it for them."""
        return (
            "# Written by `ctxmodes serve codex-home`: the ChatGPT backend is ctxmodes serve.\n"
            f"openai_base_url = {json.dumps(self.openai_base_url)}\n"
            f"chatgpt_base_url = {json.dumps(self.chatgpt_base_url)}\n"
            "\n[analytics]\nenabled = false\n"
            "\n[features]\napps = false\nplugins = false\n"
        )

    def configured_by(self, config: dict[str, object]) -> bool:
        """Whether a ``config.toml`` read as ``config`` already points at this backend."""
        return (
            config.get("openai_base_url") == self.openai_base_url
            and config.get("chatgpt_base_url") == self.chatgpt_base_url
        )


def account_of(token: str) -> str:
    """The account id a token of ``serve token create`` names in its claims.

    :raises CtxmodesError: not such a token.
    """
    segments = token.split(".")
    refused = CtxmodesError(
        "standard input holds no token of `ctxmodes serve token create` (pipe one in: "
        "`ctxmodes serve codex-home DIR --url URL < token`)"
    )
    if len(segments) != 3 or not _is_service_token(token):
        raise refused
    try:
        claims = _decoded(segments[1])
    except (binascii.Error, ValueError):
        raise refused from None
    auth = claims.get(AUTH_CLAIM) if isinstance(claims, dict) else None
    account = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    if not isinstance(account, str) or not account:
        raise refused
    return account


def sign_in(token: str, account: str, now: datetime) -> bytes:
    """The ``auth.json`` of a ChatGPT sign-in with ``token``, made at ``now``."""
    auth = {
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {
            "id_token": token,
            "access_token": token,
            "refresh_token": "",
            "account_id": account,
        },
        "last_refresh": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    return json.dumps(auth, indent=2).encode() + b"\n"


def _decoded(segment: str) -> object:
    """A JSON segment of a token (base64url without its padding)."""
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def _is_service_token(token: str | None) -> bool:
    """Whether ``token`` was issued by a ``ctxmodes serve`` (a sign-in this command wrote,
    which a new token of the service may replace)."""
    try:
        header = _decoded(token.split(".")[0]) if token else None
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and header.get("kid") == TOKEN_KEY_ID


def _signed_in_with(path: Path) -> str | None:
    """The access token of the sign-in in ``path`` (``None``: none there, or not readable
    as one)."""
    try:
        auth = json.loads(path.read_text(encoding="utf-8"))
        token = auth["tokens"]["access_token"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return token if isinstance(token, str) else None


def write_codex_home(home: Path, backend: CodexBackend, token: str, now: datetime) -> str:
    """Make ``home`` a Codex home signed in to ``backend`` with ``token``; the account id.
    Everything is checked before anything is written.

    :raises CtxmodesError: the token is not the service's; ``home`` already holds another
        sign-in or a configuration that points elsewhere; it cannot be written.
    """
    account = account_of(token)
    config_path, auth_path = home / "config.toml", home / "auth.json"
    write_config = not config_path.exists()
    if not write_config:
        try:
            config = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise CtxmodesError(f"cannot read {config_path}: {error}") from None
        if not backend.configured_by(config):
            raise CtxmodesError(
                f"{config_path} exists and points Codex elsewhere; it is left as it is: give "
                "the service a Codex home of its own (a new folder), or set openai_base_url = "
                f'"{backend.openai_base_url}" and chatgpt_base_url = '
                f'"{backend.chatgpt_base_url}" in it'
            )
    if auth_path.exists() and not _is_service_token(_signed_in_with(auth_path)):
        raise CtxmodesError(
            f"{auth_path} holds another sign-in; it is left as it is: give the service a "
            "Codex home of its own (a new folder)"
        )
    made = _missing_folders(home)
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if write_config:
            write_owner_only(config_path, backend.config().encode())
        write_owner_only(auth_path, sign_in(token, account, now))
    except OSError as error:
        # Leave the place as it was found: no half-made home, signed in to nothing.
        if write_config:
            config_path.unlink(missing_ok=True)
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        reason = error.strerror or error
        raise CtxmodesError(f"cannot write the Codex home {home}: {reason}") from None
    return account


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, innermost first."""
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing
