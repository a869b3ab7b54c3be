"""Logging in to providers, shared by ``ctxmodes login`` and the terminal's ``/login``.

What Pi's ``/login`` offers, in ctxmodes: the subscription logins whose flows ctxmodes
implements (ChatGPT Plus/Pro and Claude Pro/Max, browser PKCE with a pasted-URL fallback),
and storing an API key for any provider. Credentials go to ctxmodes' own credential file
(:func:`~ctxmodes.providers.credentials.ctxmodes_credentials_path`, Pi's ``auth.json``
format, owner-only, changed under Pi's lock), which is read before Pi's ``auth.json``; Pi's
own file is never changed by a login or a logout.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.providers import anthropic_oauth, codex_oauth, oauth
from ctxmodes.providers.catalog import builtin_providers
from ctxmodes.providers.credential_store import Credential, FileCredentialStore
from ctxmodes.providers.credentials import CredentialError, ctxmodes_credentials_path

if TYPE_CHECKING:
    import httpx

#: Moves the loopback callback off the registered port (tests, port clashes behind proxies).
CALLBACK_PORT_ENV: Final = "CTXMODES_OAUTH_CALLBACK_PORT"
#: Pi's variable for the address the callback server listens on.
CALLBACK_HOST_ENV: Final = "PI_OAUTH_CALLBACK_HOST"

#: Providers whose subscription login ctxmodes performs, with the name Pi gives it.
SUBSCRIPTIONS: Final = {
    codex_oauth.PROVIDER: "ChatGPT Plus/Pro (Codex)",
    anthropic_oauth.PROVIDER: "Claude Pro/Max",
}
#: Variables a provider needs beside its key, asked for with it (Pi's Cloudflare logins).
EXTRA_SETTINGS: Final = {
    "cloudflare-workers-ai": ("CLOUDFLARE_ACCOUNT_ID",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"),
}


@dataclass(frozen=True)
class LoginChoice:
    """One provider as ``/login`` lists it."""

    provider: str
    name: str
    #: The subscription login ctxmodes can perform, if any.
    subscription: str | None
    #: Whether an API key can be stored (every provider but ChatGPT's).
    api_key: bool
    #: A subscription login only Pi performs (GitHub Copilot, xAI …): log in with Pi.
    pi_only_login: str | None


def login_choices(extra_providers: list[str] | None = None) -> list[LoginChoice]:
    """Every built-in provider (and ``extra_providers``, e.g. custom ones), Pi's order."""
    choices = []
    for info in builtin_providers().values():
        oauth_name = info.oauth.name if info.oauth is not None else None
        choices.append(
            LoginChoice(
                provider=info.id,
                name=info.name,
                subscription=SUBSCRIPTIONS.get(info.id),
                api_key=info.api_key is not None,
                pi_only_login=oauth_name if info.id not in SUBSCRIPTIONS else None,
            )
        )
    known = {choice.provider for choice in choices}
    for provider in extra_providers or []:
        if provider not in known:
            choices.append(LoginChoice(provider, provider, None, True, None))
            known.add(provider)
    return choices


def login_choice(provider: str, extra_providers: list[str] | None = None) -> LoginChoice:
    """:raises CredentialError: no such provider."""
    choices = login_choices(extra_providers)
    for choice in choices:
        if choice.provider == provider:
            return choice
    near = difflib.get_close_matches(provider, [choice.provider for choice in choices], n=1)
    guess = f"did you mean {near[0]}? " if near else ""
    raise CredentialError(f"unknown provider {provider!r}; {guess}`ctxmodes login` lists them")


def _store(environ: Mapping[str, str] | None) -> FileCredentialStore:
    return FileCredentialStore(ctxmodes_credentials_path(environ))


def save_credential(
    provider: str, credential: Credential, environ: Mapping[str, str] | None = None
) -> Path:
    """Store ``credential`` as ``provider``'s; the file it went to.

    :raises CredentialError: the file cannot be written or is corrupt (never replaced).
    """
    store = _store(environ)
    try:
        store.modify(provider, lambda _current: credential)
    except OSError as error:
        raise CredentialError(f"cannot write {store.path}: {error.strerror or error}") from None
    return store.path


def save_api_key(
    provider: str,
    key: str,
    settings: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Store an API key (and provider-scoped ``settings``, Pi's ``env``) for ``provider``.

    :raises CredentialError: the key is empty, or the file cannot be written.
    """
    key = key.strip()
    if not key:
        raise CredentialError("no key was entered; nothing stored")
    credential: Credential = {"type": "api_key", "key": key}
    if settings:
        credential["env"] = dict(settings)
    return save_credential(provider, credential, environ)


def forget(provider: str, environ: Mapping[str, str] | None = None) -> tuple[bool, Path]:
    """Remove ``provider``'s entry from ctxmodes' credential file: (whether there was one,
    the file)."""
    store = _store(environ)
    return store.remove(provider), store.path


@dataclass(frozen=True)
class BrowserLogin:
    """A subscription login in progress: open ``url``, then :meth:`finish`."""

    provider: str
    url: str
    flow: oauth.AuthorizationFlow
    server: oauth.CallbackServer | None
    #: Why the loopback callback is not listening (only pasting works then).
    server_error: str | None

    def finish(
        self,
        read_pasted: Callable[[], str | None],
        client: httpx.Client,
        *,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 300.0,
    ) -> Credential:
        """Wait for the browser's callback or a pasted URL, exchange the code, store the
        credential; the credential.

        :raises CredentialError: timeout, a foreign state, or a refused exchange.
        """
        from ctxmodes.providers.jsvalues import pi_user_agent
        from ctxmodes.providers.wire import wall_clock_ms

        env = os.environ if environ is None else environ
        try:
            code = oauth.wait_for_code(self.flow, self.server, read_pasted, timeout_s=timeout_s)
        finally:
            self.close()
        if self.provider == anthropic_oauth.PROVIDER:
            credential = anthropic_oauth.exchange_code(
                self.flow,
                code,
                client,
                base=anthropic_oauth.token_base(env),
                now_ms=wall_clock_ms(),
            )
        else:
            credential = codex_oauth.exchange_code(
                self.flow,
                code,
                client,
                base=codex_oauth.auth_base(env),
                now_ms=wall_clock_ms(),
                user_agent=pi_user_agent(),
            )
        save_credential(self.provider, credential, env)
        return credential

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def start_browser_login(provider: str, environ: Mapping[str, str] | None = None) -> BrowserLogin:
    """Begin ``provider``'s subscription login: the URL to open, and the loopback server
    listening for the browser (if its port is free).

    :raises CredentialError: ctxmodes cannot perform this provider's subscription login.
    """
    env = os.environ if environ is None else environ
    host = env.get(CALLBACK_HOST_ENV) or "127.0.0.1"
    server: oauth.CallbackServer | None = None
    error: str | None = None
    if provider == anthropic_oauth.PROVIDER:
        flow = anthropic_oauth.authorization_flow()
        port = int(env.get(CALLBACK_PORT_ENV) or anthropic_oauth.CALLBACK_PORT)
        try:
            server = anthropic_oauth.CallbackServer(flow.state, host=host, port=port)
        except OSError as failure:
            error = f"cannot listen on {host}:{port} ({failure.strerror})"
    elif provider == codex_oauth.PROVIDER:
        flow = codex_oauth.authorization_flow(codex_oauth.auth_base(env))
        port = int(env.get(CALLBACK_PORT_ENV) or codex_oauth.CALLBACK_PORT)
        try:
            server = codex_oauth.CallbackServer(flow.state, host=host, port=port)
        except OSError as failure:
            error = f"cannot listen on {host}:{port} ({failure.strerror})"
    else:
        raise CredentialError(f"ctxmodes has no subscription login for {provider}")
    return BrowserLogin(provider, flow.url, flow, server, error)
