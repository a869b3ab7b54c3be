"""The parts of the Remote mode.

Remote keeps Local's windows — the same markers on the same branch, the same latest-window
projection, ``new_context`` appending the next marker at once (marked for the one-time
trim), the same budget reminder and fallback, the same compaction policy — and differs in
where ``history`` and ``notes`` live: in the Codex history/notes backend of the model's
provider, reached with the provider's credentials. The model gets Codex's native encrypted
namespaces and the backend's ciphertext; the session file keeps that ciphertext and never a
plaintext note or query. Each new window's marker carries the backend's thread hint.

Remote is the kit's same-branch rollover and compaction policy (with the backend's thread hint
in each new marker) plus its own retrieval (:class:`RemoteRetrieval`) and request shaping
(:class:`RemoteShaping`). It runs only on the Codex transport and never falls back: another
model is refused when the session starts, a failing backend is an error result the model
sees, and nothing is ever answered from the session file instead.
"""

from __future__ import annotations

import logging

from ctxmodes import (
    ABORTED_MESSAGE,
    AbortedError,
    AbortSignal,
    CtxmodesError,
    HostSession,
    ProviderRequestEvent,
    RetrievalRequest,
    RetrievalResult,
)
from ctxmodes.providers import BackendAccess, ModelInfo, RequestMessage
from ctxmodes.windows import (
    OPERATIONS,
    ManagedMode,
    SameBranchRollover,
    TrimOnceCompaction,
    WindowMarker,
    WindowStrategies,
    namespaced_tools,
    next_identity,
    window_marker,
)
from ctxmodes_remote.backend import (
    BACKEND_TIMEOUT_SECONDS,
    CallerContext,
    HistoryNotesBackend,
)
from ctxmodes_remote.results import retrieval_result
from ctxmodes_remote.shaping import identity_headers, replay_messages

_log = logging.getLogger(__name__)

#: The refusal of any model not on the Codex transport (the TypeScript extension's words).
CODEX_TRANSPORT_REQUIRED = "Remote history and notes require Codex transport"
#: What the refusal goes on to say: which models Remote takes, and where to find one.
CODEX_TRANSPORT_HINT = (
    "Use an openai-codex model (`ctxmodes login openai-codex`), or a provider with "
    'api = "openai-codex-responses" pointed at `ctxmodes serve`, which fronts any model'
)
#: A Codex-shaped model whose provider cannot reach a Codex backend.
CODEX_BACKEND_REQUIRED = "History and notes require the OpenAI Codex backend"
#: What ``ctxmodes history`` / ``notes`` say on a Remote session, where nothing is local.
CONTENT_IN_SERVICE = (
    "Remote history and notes live in the Codex history and notes service, not in the "
    "session file (it keeps only their ciphertext); they can only be read by the model "
    "through that service"
)


def require_codex_transport(session: HostSession) -> None:
    """Refuse a session whose model is not on the Codex transport.

    A session without a model (opened offline for inspection) is accepted: it never reaches
    the backend, and its ``history`` and ``notes`` say where the content lives.

    :raises CtxmodesError: :data:`CODEX_TRANSPORT_REQUIRED`, then the model refused and
        :data:`CODEX_TRANSPORT_HINT`.
    """
    model = session.model
    if model is not None and not model.capabilities.encrypted_tool_arguments:
        raise CtxmodesError(codex_transport_refusal(model))


def codex_transport_refusal(model: ModelInfo | None) -> str:
    """Why Remote refuses ``model`` (``None``: a model not known here), and what would do."""
    if model is None:
        return f"{CODEX_TRANSPORT_REQUIRED}. {CODEX_TRANSPORT_HINT}"
    refused = f"{model.provider}/{model.id} is on the {model.api} api"
    return f"{CODEX_TRANSPORT_REQUIRED}: {refused}. {CODEX_TRANSPORT_HINT}"


class RemoteRetrieval:
    """``history`` and ``notes`` answered by the provider's Codex backend, and the
    backend's thread hint for each new window's marker.

    :param timeout: the deadline of one backend call, in seconds.
    """

    def __init__(self, mode: ManagedMode, *, timeout: float = BACKEND_TIMEOUT_SECONDS) -> None:
        self._mode = mode
        self._timeout = timeout

    def _caller(self) -> CallerContext:
        return CallerContext(session_id=self._mode.session.session_manager.session_id)

    def _backend(self) -> HistoryNotesBackend:
        """The provider's backend.

        :raises CtxmodesError: offline (no provider), or a provider without a Codex backend.
        """
        provider = self._mode.session.provider
        if provider is None:
            raise CtxmodesError(CONTENT_IN_SERVICE)
        if not isinstance(provider, BackendAccess):
            raise CtxmodesError(CODEX_BACKEND_REQUIRED)
        return HistoryNotesBackend(provider, timeout=self._timeout)

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """Run one ``history`` or ``notes`` call on the backend."""
        family = request.family
        if request.action not in OPERATIONS[family]:
            return RetrievalResult(text=f"{family} requires a supported action", is_error=True)
        try:
            backend = self._backend()
            answer = backend.call(
                family, request.action, request.arguments, self._caller(), request.signal
            )
            return retrieval_result(family, answer)
        except AbortedError:
            return RetrievalResult(text=ABORTED_MESSAGE, is_error=True)
        except CtxmodesError as error:  # BackendFailure, or no backend at all
            return RetrievalResult(text=str(error), is_error=True)

    def _thread_hint(self, signal: AbortSignal | None) -> str | None:
        try:
            return self._backend().thread_hint(self._caller(), signal)
        except CtxmodesError as error:  # AbortedError included: an aborted hint is no hint
            _log.info("no thread hint: %s", error)
            return None

    def new_window_marker(
        self, trim_previous_window: bool, signal: AbortSignal | None = None
    ) -> WindowMarker:
        """The marker of the window opened now, with the backend's thread hint.

        :param signal: the run's abort signal (``new_context``); an abort ends the wait for
            the hint at once and the window opens without one, as after any failed hint.
        """
        identity = next_identity(self._mode.windows.current)
        return window_marker(
            identity, self._thread_hint(signal), trim_previous_window=trim_previous_window
        )


class RemoteShaping:
    """Codex's encrypted namespaces, calls replayed as the backend expects, and the window
    identity in the headers of every turn request."""

    def __init__(self, mode: ManagedMode) -> None:
        self._mode = mode

    def shape(self, event: ProviderRequestEvent, messages: list[RequestMessage]) -> None:
        if not event.capabilities.encrypted_tool_arguments:
            # The model changed under the session: refuse rather than send plaintext tools.
            raise CtxmodesError(codex_transport_refusal(self._mode.session.model))
        request = event.request
        request.messages = replay_messages(messages, images=event.capabilities.images)
        request.tools = namespaced_tools(request.tools, encrypted=True)
        window = self._mode.windows.current
        if request.purpose == "turn" and window is not None:
            session_id = self._mode.session.session_manager.session_id
            identity = identity_headers(session_id, window)
            request.headers.update(identity)
            request.client_metadata.update(identity)


def remote_mode(session: HostSession, *, timeout: float = BACKEND_TIMEOUT_SECONDS) -> ManagedMode:
    """Remote mode for one session (built by the mode registry when the session starts).

    :param timeout: the deadline of one backend call, in seconds.
    :raises CtxmodesError: the session's model is not on the Codex transport.
    """
    require_codex_transport(session)

    def assemble(mode: ManagedMode) -> WindowStrategies:
        remote = RemoteRetrieval(mode, timeout=timeout)
        new_window = remote.new_window_marker
        return WindowStrategies.defaults(
            mode,
            rollover=SameBranchRollover(mode, new_window),
            compaction=TrimOnceCompaction(mode, new_window),
            retrieval=remote,
            shaping=RemoteShaping(mode),
        )

    return ManagedMode(session, assemble)
