"""The per-session object of the Remote mode.

Remote keeps Local's windows — the same markers on the same branch, the same latest-window
projection, ``new_context`` appending the next marker at once (marked for the one-time
trim), the same budget reminder and fallback, the same compaction policy — and differs in
where ``history`` and ``notes`` live: in the Codex history/notes backend of the model's
provider, reached with the provider's credentials. The model gets Codex's native encrypted
namespaces and the backend's ciphertext; the session file keeps that ciphertext and never a
plaintext note or query. Each new window's marker carries the backend's thread hint.

Remote runs only on the Codex transport and never falls back: another model is refused when
the session starts, a failing backend is an error result the model sees, and nothing is
ever answered from the session file instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ctxmodes import hookimpl
from ctxmodes.abort import AbortedError, AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import (
    CompactionDecision,
    CompactionEvent,
    CompactionRequest,
    ContextProjection,
    NewContextOutcome,
    NewContextRequest,
    ProviderRequestEvent,
    RetrievalRequest,
    RetrievalResult,
    TreeNavigationEvent,
)
from ctxmodes.hostapi import HostSession
from ctxmodes.providers.backend import BackendAccess
from ctxmodes.session.models import AgentMessage, TextContent
from ctxmodes.tools.base import ABORTED_MESSAGE, ToolResult
from ctxmodes.windows.agent_tools import ContextRemainingTool, NewContextTool
from ctxmodes.windows.compaction import is_no_summary_compaction
from ctxmodes.windows.identity import next_identity
from ctxmodes.windows.marker import WindowMarker, window_marker
from ctxmodes.windows.mode import WindowedMode, WindowStateHolder, namespaced_tools
from ctxmodes.windows.projection import latest_boundary_window_id, project_latest_window
from ctxmodes.windows.state import TrackedWindowState
from ctxmodes.windows.tools import OPERATIONS, Family, new_context_outcome
from ctxmodes_remote.backend import (
    BACKEND_TIMEOUT_SECONDS,
    CallerContext,
    HistoryNotesBackend,
)
from ctxmodes_remote.results import tool_result
from ctxmodes_remote.shaping import identity_headers, replay_messages
from ctxmodes_remote.tools import RemoteRetrievalTool

if TYPE_CHECKING:
    from ctxmodes.tools.base import Tool

_log = logging.getLogger(__name__)

#: The refusal of any model not on the Codex transport (the TypeScript extension's words).
CODEX_TRANSPORT_REQUIRED = "Remote history and notes require Codex transport"
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

    :raises CtxmodesError: :data:`CODEX_TRANSPORT_REQUIRED`.
    """
    model = session.model
    if model is not None and not model.capabilities.encrypted_tool_arguments:
        raise CtxmodesError(CODEX_TRANSPORT_REQUIRED)


class RemoteMode(WindowedMode):
    """Remote mode for one session (built by the mode registry when the session starts).

    :param timeout: the deadline of one backend call, in seconds.
    :raises CtxmodesError: the session's model is not on the Codex transport.
    """

    def __init__(self, session: HostSession, *, timeout: float = BACKEND_TIMEOUT_SECONDS) -> None:
        require_codex_transport(session)
        super().__init__(session)
        self._timeout = timeout
        #: The window a ``new_context`` call opened whose marker no request has seen yet.
        self._pending_window_id: str | None = None

    # -- the backend ----------------------------------------------------------------------

    def _caller(self) -> CallerContext:
        return CallerContext(session_id=self.session.session_manager.session_id)

    def _backend(self) -> HistoryNotesBackend:
        """The provider's backend.

        :raises CtxmodesError: offline (no provider), or a provider without a Codex backend.
        """
        provider = self.session.provider
        if provider is None:
            raise CtxmodesError(CONTENT_IN_SERVICE)
        if not isinstance(provider, BackendAccess):
            raise CtxmodesError(CODEX_BACKEND_REQUIRED)
        return HistoryNotesBackend(provider, timeout=self._timeout)

    def call_backend(
        self, family: Family, arguments: Mapping[str, Any], signal: AbortSignal | None
    ) -> ToolResult:
        """Run one ``history`` or ``notes`` call (flat-router arguments) on the backend."""
        action = arguments.get("action")
        if not isinstance(action, str) or action not in OPERATIONS[family]:
            return ToolResult.error(f"{family} requires a supported action")
        try:
            answer = self._backend().call(family, action, arguments, self._caller(), signal)
            return tool_result(family, answer)
        except AbortedError:
            return ToolResult.error(ABORTED_MESSAGE)
        except CtxmodesError as error:  # BackendFailure, or no backend at all
            return ToolResult.error(str(error))

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        arguments = {**request.arguments, "action": request.action}
        result = self.call_backend(request.family, arguments, signal=None)
        text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
        return RetrievalResult(text=text, details=result.details or {}, is_error=result.is_error)

    def _thread_hint(self) -> str | None:
        try:
            return self._backend().thread_hint(self._caller())
        except CtxmodesError as error:
            _log.info("no thread hint: %s", error)
            return None

    # -- windows ----------------------------------------------------------------------------

    def open_state(self, session: HostSession) -> WindowStateHolder:
        self._pending_window_id = None
        return TrackedWindowState(session.session_manager)

    def _next_window_marker(self, *, trim_previous_window: bool) -> WindowMarker:
        """The marker of the window opened now, with the backend's thread hint."""
        identity = next_identity(self.windows.current)
        return window_marker(
            identity, self._thread_hint(), trim_previous_window=trim_previous_window
        )

    def ensure_window(self) -> None:
        if self.windows.current is None:
            self.send_marker(
                self._next_window_marker(trim_previous_window=False), trigger_turn=False
            )

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        messages = project_latest_window(projection.messages)
        if self._pending_window_id is not None and (
            latest_boundary_window_id(messages) == self._pending_window_id
        ):
            self._pending_window_id = None
        return messages

    def start_new_context(self, request: NewContextRequest) -> NewContextOutcome:
        if self._pending_window_id is not None:
            return new_context_outcome(started=False)
        marker = self._next_window_marker(trim_previous_window=True)
        self._pending_window_id = marker.details.context_management.current_window_id
        self.send_marker(marker, trigger_turn=True)
        return new_context_outcome(started=True)

    # -- hooks ------------------------------------------------------------------------------

    @hookimpl
    def ctx_register_tools(self, register: Callable[[Tool], None], session: HostSession) -> None:
        register(NewContextTool(self))
        register(ContextRemainingTool(self))
        register(RemoteRetrievalTool("history", self))
        register(RemoteRetrievalTool("notes", self))

    @hookimpl
    def ctx_provider_request(self, session: HostSession, event: ProviderRequestEvent) -> None:
        if not event.capabilities.encrypted_tool_arguments:
            # The model changed under the session: refuse rather than send plaintext tools.
            raise CtxmodesError(CODEX_TRANSPORT_REQUIRED)
        request = event.request
        promoted = self._bridge.promote(request.messages)
        request.messages = replay_messages(promoted, images=event.capabilities.images)
        request.tools = namespaced_tools(request.tools, encrypted=True)
        window = self.windows.current
        if request.purpose == "turn" and window is not None:
            identity = identity_headers(session.session_manager.session_id, window)
            request.headers.update(identity)
            request.client_metadata.update(identity)

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: TreeNavigationEvent) -> None:
        # The user moved to another branch: its window state is rebuilt on the next access,
        # and it gets a window if it has none.
        self._pending_window_id = None
        self.ensure_window()

    @hookimpl
    def ctx_session_before_compact(
        self, session: HostSession, request: CompactionRequest
    ) -> CompactionDecision | None:
        if request.trigger == "threshold":
            windows = self.windows
            current = windows.current
            trim_due = (
                current is not None and windows.pending_trim_window_id == current.current_window_id
            )
            if not trim_due:
                return CompactionDecision(cancel=True)
        return self.no_summary_compaction(request)

    @hookimpl
    def ctx_session_compact(self, session: HostSession, event: CompactionEvent) -> None:
        if event.trigger == "threshold" or not is_no_summary_compaction(event.entry):
            return  # the one-time trim keeps the current window
        marker = self._next_window_marker(trim_previous_window=False)
        self.send_marker(marker, trigger_turn=event.trigger == "overflow")
