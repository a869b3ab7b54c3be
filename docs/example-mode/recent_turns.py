"""recent-turns: the model is sent only the latest few turns of the conversation.

A turn starts at a user message. Cutting only there keeps every tool call together with its
result (a request that starts with a tool result whose call was cut away is rejected by
strict providers), and the session file keeps everything: only the request is cut.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes import ContextProjection, HostSession, ModeSpec, UserMessage, hookimpl


class RecentTurnsSettings(BaseModel):
    """``[modes.recent-turns]`` in the configuration."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turns: int = Field(default=3, ge=1)


class RecentTurnsMode:
    """The mode object for one session; its hooks run only while the mode is active."""

    def __init__(self, session: HostSession, settings: RecentTurnsSettings) -> None:
        self.session = session
        self.turns = settings.turns

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        messages = projection.messages
        seen = 0
        # From the end: the cost is that of the turns kept, not of the whole session.
        for index in range(len(messages) - 1, -1, -1):
            if isinstance(messages[index], UserMessage):
                seen += 1
                if seen == self.turns:
                    projection.messages = messages[index:]
                    return


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    register(
        ModeSpec(
            name="recent-turns",
            description="Only the latest few turns reach the model",
            factory=RecentTurnsMode,
            settings=RecentTurnsSettings,
        )
    )
