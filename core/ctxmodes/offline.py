"""A session opened without an agent: for offline inspection (``ctxmodes history FILE``)
and for testing a mode's hooks in isolation.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmodes.errors import CtxmodesError
from ctxmodes.ui import HeadlessUI

if TYPE_CHECKING:
    from ctxmodes.hostapi import (
        DeliverAs,
        NavigationRequest,
        QueuedMessage,
        StreamingBehavior,
        TreeNavigation,
        TreeNavigationResult,
        UserInterface,
    )
    from ctxmodes.providers.base import ModelInfo, Provider
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.models import CustomMessage, ImageContent, TextContent

_NO_AGENT = "an offline session has no agent: nothing can run or be queued"


class OfflineTurnHold:
    """The hold of a session nobody runs: there is never anything to release."""

    def release(self, *, start_turns: bool = True) -> None:
        return None


class OfflineNavigation:
    """The navigation capability of a session nobody runs: never ready."""

    @property
    def ready(self) -> bool:
        return False

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        raise CtxmodesError("an offline session cannot navigate its tree")


@dataclass
class OfflineSession:
    """Satisfies :class:`~ctxmodes.hostapi.HostSession` for a session nobody is running:
    it is always idle and there is nothing to abort. A custom message without a turn is
    appended to the store; anything that needs the agent raises
    :class:`~ctxmodes.errors.CtxmodesError`."""

    session_manager: SessionManager
    mode_name: str = "off"
    cwd: Path = field(default_factory=Path.cwd)
    ui: UserInterface = field(default_factory=HeadlessUI)
    context_window: int | None = None
    navigation: TreeNavigation = field(default_factory=OfflineNavigation)
    #: Offline there is no model, so nothing can be sent to one or its backend.
    model: ModelInfo | None = None
    provider: Provider | None = None

    def is_idle(self) -> bool:
        return True

    def is_streaming(self) -> bool:
        return False

    def abort(self) -> None:
        """Nothing runs offline, so there is nothing to stop."""

    def steer(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        raise CtxmodesError(_NO_AGENT)

    def follow_up(self, text: str, *, images: Sequence[ImageContent] = ()) -> None:
        raise CtxmodesError(_NO_AGENT)

    def send_user_message(
        self,
        text: str,
        *,
        deliver_as: StreamingBehavior = "steer",
        images: Sequence[ImageContent] = (),
    ) -> None:
        raise CtxmodesError(_NO_AGENT)

    def take_queued(self, queue: StreamingBehavior = "steer") -> list[QueuedMessage]:
        """Nothing runs offline, so nothing is queued."""
        return []

    def enqueue(self, message: QueuedMessage, *, deliver_as: StreamingBehavior) -> None:
        raise CtxmodesError(_NO_AGENT)

    def hold_turns(self) -> OfflineTurnHold:
        """Nothing starts turns offline; the hold has nothing to hold."""
        return OfflineTurnHold()

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        return self.session_manager.append_custom_entry(custom_type, data)

    def send_message(
        self,
        message: CustomMessage,
        *,
        deliver_as: DeliverAs | None = None,
        trigger_turn: bool | None = None,
    ) -> None:
        if trigger_turn or deliver_as == "next_turn":
            raise CtxmodesError(_NO_AGENT)
        self.session_manager.append_custom_message_entry(
            message.custom_type, message.content, message.display, message.details
        )

    def send_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool | None = None,
        deliver_as: DeliverAs | None = None,
    ) -> None:
        from ctxmodes.session.models import CustomMessage

        fields: dict[str, Any] = {
            "custom_type": custom_type,
            "content": content,
            "display": display,
            "timestamp": time.time_ns() // 1_000_000,
        }
        if details is not None:
            fields["details"] = details
        self.send_message(CustomMessage(**fields), deliver_as=deliver_as, trigger_turn=trigger_turn)
