"""``/login`` and ``/logout``.

``/login`` lists every provider and how it logs in; picking a subscription (Claude Pro/Max,
ChatGPT Plus/Pro) prints the sign-in URL, opens the browser and waits for its callback
while a field takes a pasted redirect URL instead; picking an API key asks for it in a
field that shows dots. ``/login PROVIDER`` goes straight to its login (the subscription
where there is one), ``/login PROVIDER key`` to storing a key. The work that waits on the
network runs on a thread of its own, so the terminal keeps drawing.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes.tui.key_hints import CANCEL, CONFIRM, key_hint, list_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.providers.login import LoginChoice
    from ctxmodes.tui.app import TerminalSession

SUBSCRIPTION = "subscription"
API_KEY = "key"
#: A subscription whose login only Pi performs (GitHub Copilot, xAI …): listed, and chosen,
#: it says so instead of leaving the provider's API key as the only way in sight.
PI_ONLY = "pi"


def _choices(session: TerminalSession) -> list[LoginChoice]:
    from ctxmodes.providers.login import login_choices

    custom = sorted({model.provider for model in session.agent.models()})
    return login_choices(custom)


def login(session: TerminalSession, args: str) -> None:
    from ctxmodes.providers.credentials import CredentialError
    from ctxmodes.providers.login import login_choice

    provider, _, method = args.strip().partition(" ")
    if provider:
        try:
            choice = login_choice(provider, sorted({m.provider for m in session.agent.models()}))
        except CredentialError as error:
            session.notify(str(error), "error")
            return
        wants_key = method.strip() == API_KEY or not choice.subscription
        _start(session, choice.provider, API_KEY if wants_key else SUBSCRIPTION)
        return
    _open_choices(session)


def _open_choices(session: TerminalSession) -> None:
    from ctxmodes.providers.auth import AuthResolver

    resolver = AuthResolver()
    rows: list[PickerItem] = []
    for choice in _choices(session):
        status = resolver.status(choice.provider)
        mark = [("class:picker.hint", f"  ({status})")] if status else []
        if choice.subscription:
            text = f"{choice.provider} · {choice.subscription} subscription"
            rows.append(PickerItem((choice.provider, SUBSCRIPTION), text.lower(), [("", text)]))
        if choice.api_key:
            text = f"{choice.provider} · API key"
            rows.append(PickerItem((choice.provider, API_KEY), text.lower(), [("", text), *mark]))
        if choice.pi_only_login:
            text = f"{choice.provider} · {choice.pi_only_login}: log in with Pi"
            fragments = [("class:picker.hint", text)]
            rows.append(PickerItem((choice.provider, PI_ONLY), text.lower(), fragments))
    session.open_picker(
        Picker(
            "Log in to",
            lambda query: [row for row in rows if query.lower() in row.text],
            lambda item: _start(session, *item.key),
            hint=list_hint(session.keymap, "choose"),
        )
    )


def _start(session: TerminalSession, provider: str, method: str) -> None:
    if method == SUBSCRIPTION:
        _subscription(session, provider)
    elif method == PI_ONLY:
        session.notify(
            f"Only Pi performs {provider}'s sign-in: log in once with Pi (`pi`, then /login); "
            "ctxmodes uses the token Pi stores while it is valid",
            "warning",
        )
    else:
        _ask_key(session, provider)


def _ask(
    session: TerminalSession,
    title: str,
    on_answer: Callable[[str], None],
    *,
    secret: bool = False,
) -> None:
    keymap = session.keymap
    # Pi's login prompt's words.
    hint = f"({key_hint(keymap, CANCEL, 'to cancel,')} {key_hint(keymap, CONFIRM, 'to submit')})"

    def cancelled() -> None:
        session.notify("Login cancelled")

    session.open_picker(
        Picker(
            title,
            lambda _query: [],
            lambda item: on_answer(str(item.key)),
            on_cancel=cancelled,
            hint=hint,
            free_text=True,
            secret=secret,
        )
    )


def _ask_key(session: TerminalSession, provider: str) -> None:
    from ctxmodes.providers.login import EXTRA_SETTINGS

    settings: dict[str, str] = {}
    names = list(EXTRA_SETTINGS.get(provider, ()))

    def save(key: str) -> None:
        from ctxmodes.providers.credentials import CredentialError
        from ctxmodes.providers.login import save_api_key

        try:
            path = save_api_key(provider, key, settings)
        except CredentialError as error:
            session.notify(str(error), "error")
            return
        session.notify(f"Stored an API key for {provider} in {path}")
        start_on_default_model(session, provider)

    def next_setting(key: str) -> None:
        if not names:
            save(key)
            return
        name = names.pop(0)

        def keep(value: str) -> None:
            if value.strip():
                settings[name] = value.strip()
            next_setting(key)

        _ask(session, f"{name} for {provider}", keep)

    _ask(session, f"API key for {provider} (not shown)", next_setting, secret=True)


def _subscription(session: TerminalSession, provider: str) -> None:
    import webbrowser

    from ctxmodes.providers.credentials import CredentialError
    from ctxmodes.providers.login import SUBSCRIPTIONS, start_browser_login

    try:
        started = start_browser_login(provider)
    except CredentialError as error:
        session.notify(str(error), "error")
        return
    if started.server_error is not None:
        session.notify(f"{started.server_error}; paste the URL the browser ends on", "warning")
    session.notify(f"Sign in to {SUBSCRIPTIONS[provider]} in your browser:")
    # Unwrapped, so the terminal's own wrapping keeps it one URL when copied (it is
    # percent-encoded: nothing in it can act as a terminal escape).
    session.print_blocks([started.url])
    threading.Thread(target=webbrowser.open, args=(started.url,), daemon=True).start()
    pasted: queue.Queue[str | None] = queue.Queue()
    cancelled = threading.Event()

    def cancel() -> None:
        # An empty answer ends the wait (no code in it); the flag says it was a cancel.
        cancelled.set()
        pasted.put("")

    picker = Picker(
        f"Signing in to {provider}: finish in the browser, or paste the URL it ends on",
        lambda _query: [],
        lambda item: pasted.put(str(item.key)),
        on_cancel=cancel,
        # Pi's words while it waits for the browser or a pasted URL.
        hint=f"({key_hint(session.keymap, CANCEL, 'to cancel')})",
        free_text=True,
    )
    session.open_picker(picker)

    def done(message: str, level: str = "info") -> None:
        def show() -> None:
            if session.picker is picker:
                session.close_picker()
            session.notify(message, level)
            if level == "info":
                start_on_default_model(session, provider)

        session.call_soon(show)

    def wait() -> None:
        import httpx

        try:
            with httpx.Client() as client:
                started.finish(pasted.get, client)
        except CredentialError as error:
            done("Login cancelled" if cancelled.is_set() else str(error), "error")
            return
        done(f"Logged in to {provider}")

    threading.Thread(target=wait, name="login", daemon=True).start()


def start_on_default_model(session: TerminalSession, provider: str) -> None:
    """After a login to ``provider``, a session that has no model yet takes the provider's
    default one, as Pi does (its ``defaultModelPerProvider``); a session with a model keeps
    it."""
    from ctxmodes.providers.catalog import default_models

    agent = session.agent
    if agent.session.model is not None:
        return
    model_id = default_models().get(provider)
    spec = f"{provider}/{model_id}"
    if model_id is None or spec not in agent.model_refs():
        session.notify(f"{provider} has no default model here: /model picks one", "warning")
        return

    def switch() -> None:
        agent.switch_model(spec)
        agent.session.ui.notify(f"Model: {spec}")

    agent.change_soon(switch)


def logout(session: TerminalSession, args: str) -> None:
    from ctxmodes.providers.login import forget

    provider = args.strip()
    if not provider:
        session.notify("/logout PROVIDER forgets what /login stored for it", "warning")
        return
    removed, path = forget(provider)
    session.notify(
        f"Logged out of {provider} (removed from {path})"
        if removed
        else f"Not logged in to {provider} with ctxmodes ({path} has no entry)"
    )
