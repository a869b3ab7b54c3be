"""Settings of the agent host that are not part of the user configuration file."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxmodes.compaction.settings import BranchSummarySettings, CompactionSettings
from ctxmodes.config_reload import kept_or_reloaded
from ctxmodes.host.queues import DrainMode
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.thinking_levels import DEFAULT_THINKING_LEVEL
from ctxmodes.tools.selection import ALL_TOOLS, ToolSelection, default_tools
from ctxmodes.tools.shell_config import ShellConfig

if TYPE_CHECKING:
    from ctxmodes.config import Settings
    from ctxmodes.hostapi import StreamingBehavior

#: The options a running session takes again from a configuration read again (Pi's
#: ``/reload``, whose session reads these settings anew at each use, or, for the queues'
#: modes, sets them from the settings read again).
RELOADED_IN_SESSION: tuple[str, ...] = (
    "compaction",
    "branch_summary",
    "retry",
    "thinking_level",
    "model_thinking_levels",
    "switch_thinking_level",
    "block_images",
    "auto_resize_images",
    "shell",
    "steering_mode",
    "follow_up_mode",
)
#: Those only the sessions started after a reload take: Pi gives its agent the thinking
#: budgets and its tools (``defaultTools``) once, when it makes the session, and reads them
#: again for the next session.
RELOADED_FOR_LATER_SESSIONS: tuple[str, ...] = ("thinking_budgets", "tools")


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, as JavaScript's ``Date.now()``."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class HostOptions:
    """How a host runs its sessions.

    :ivar compaction: when to compact automatically, and how much a compaction keeps.
    :ivar branch_summary: the room a branch summary leaves in the model's window.
    :ivar retry: when a turn that failed on a transient error is retried (Pi's ``retry``).
    :ivar thinking_level: recorded for new sessions (``thinking_level_change``), clamped to
        what the model takes, as Pi records it (Pi's default, ``medium``, unless set).
    :ivar model_thinking_levels: the level a new session of a model starts at, by
        ``provider/model-id``, over ``thinking_level`` (Pi's ``modelThinkingLevels``); also
        the level taken on switching to that model.
    :ivar switch_thinking_level: the level taken on switching to a model without a level
        of its own: Pi's ``defaultThinkingLevel`` when it is set (``None``: the current
        level carries over).
    :ivar requested_thinking_level: the level asked for this run (Pi's ``--thinking``, or
        the ``:<level>`` of ``--model``): a new session starts at it, over the two above;
        an existing one runs at it, recording it only where its branch holds no level yet,
        as Pi does.
    :ivar block_images: send the model a short text in place of each image (Pi's
        ``images.blockImages``); the session keeps the images.
    :ivar auto_resize_images: shrink the images ``read`` and tools return to what models
        take (Pi's ``images.autoResize``); off, they are only converted.
    :ivar thinking_budgets: the tokens a turn may think at a level, by level, over the
        transport's own (Pi's ``thinkingBudgets``); summaries think with the defaults, as
        in Pi.
    :ivar shell: the bash that runs the ``bash`` tool's and ``!`` commands, and the text
        run before each of them (Pi's ``shellPath`` and ``shellCommandPrefix``).
    :ivar tools: which registered tools the model is offered (Pi's ``--tools``,
        ``--no-tools``, ``--no-builtin-tools``, ``--exclude-tools``).
    :ivar steering_mode: deliver queued steering messages one per turn, or all at once.
    :ivar follow_up_mode: the same for follow-up messages.
    :ivar system_prompt: when set, the whole system prompt (no ``SYSTEM.md``, context files
        or skills are added to it).
    :ivar clock: the time source of message timestamps (milliseconds); tests make it
        deterministic.
    :ivar raise_hook_errors: let an exception raised by a plugin's hook propagate to the
        caller (out of ``prompt()``, after the run settled) instead of reporting it and
        carrying on; for tests of plugins.
    """

    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = field(default_factory=BranchSummarySettings)
    retry: RetrySettings = field(default_factory=RetrySettings)
    thinking_level: str = DEFAULT_THINKING_LEVEL
    model_thinking_levels: Mapping[str, str] = field(default_factory=dict)
    switch_thinking_level: str | None = None
    requested_thinking_level: str | None = None
    block_images: bool = False
    auto_resize_images: bool = True
    thinking_budgets: Mapping[str, int] = field(default_factory=dict)
    shell: ShellConfig = field(default_factory=ShellConfig)
    tools: ToolSelection = ALL_TOOLS
    steering_mode: DrainMode = "one-at-a-time"
    follow_up_mode: DrainMode = "one-at-a-time"
    system_prompt: str | None = None
    clock: Callable[[], int] = wall_clock_ms
    raise_hook_errors: bool = False

    def with_thinking_level(self, level: str) -> HostOptions:
        """The options after ``/thinking LEVEL``: later sessions start at ``level``, over a
        level the command line asked for (the user's latest choice wins)."""
        requested = None if self.requested_thinking_level is None else level
        return dataclasses.replace(self, thinking_level=level, requested_thinking_level=requested)

    def with_queue_mode(self, queue: StreamingBehavior, mode: DrainMode) -> HostOptions:
        """The options with the steering (``queue`` ``"steer"``) or follow-up queue
        delivering its messages ``mode`` (Pi's ``setSteeringMode``/``setFollowUpMode``)."""
        if queue == "steer":
            return dataclasses.replace(self, steering_mode=mode)
        return dataclasses.replace(self, follow_up_mode=mode)

    def with_auto_compaction(self, enabled: bool) -> HostOptions:
        """The options with automatic compaction on or off (Pi's ``compaction.enabled``);
        a manual compaction is not affected."""
        compaction = self.compaction.model_copy(update={"enabled": enabled})
        return dataclasses.replace(self, compaction=compaction)

    def with_auto_retry(self, enabled: bool) -> HostOptions:
        """The options with turns that failed on a transient error retried or not (Pi's
        ``retry.enabled``); a transport's own retries (``retry.provider``) are not affected."""
        return dataclasses.replace(self, retry=self.retry.model_copy(update={"enabled": enabled}))

    def with_settings_reloaded(
        self, before: Settings, after: Settings, *, later_sessions: bool = False
    ) -> HostOptions:
        """The options after the configuration was read again (``/reload``): each option
        of :data:`RELOADED_IN_SESSION` (and, with ``later_sessions``, of
        :data:`RELOADED_FOR_LATER_SESSIONS`) as ``after`` sets it, except where this run
        changed it from what ``before`` set (``/settings``, ``/thinking``): the user's
        choice stands, as in Pi, which saves it and so reads it back; the command line's
        tool flags stand over ``defaultTools``. The rest (the level asked for on the command
        line, the system prompt) stay as they are.

        :param before: the configuration these options were made from.
        :param after: the configuration read again.
        """
        old = HostOptions.of_settings(before)
        new = HostOptions.of_settings(after)
        names = RELOADED_IN_SESSION + (RELOADED_FOR_LATER_SESSIONS if later_sessions else ())
        changes = {
            name: kept_or_reloaded(getattr(self, name), getattr(old, name), getattr(new, name))
            for name in names
        }
        return dataclasses.replace(self, **changes)

    @classmethod
    def of_settings(
        cls, settings: Settings, *, requested_thinking_level: str | None = None
    ) -> HostOptions:
        """The options the configuration sets (compaction, branch summaries, retries, the
        thinking levels of new sessions, message delivery, images and the shell), with the
        level asked for this run; the rest their defaults."""
        return cls(
            requested_thinking_level=requested_thinking_level,
            compaction=settings.compaction,
            branch_summary=settings.branch_summary,
            retry=settings.retry,
            thinking_level=settings.thinking_level,
            model_thinking_levels=dict(settings.model_thinking_levels),
            # A configured level, not the default standing in for none (Pi's is undefined).
            switch_thinking_level=(
                settings.thinking_level if "thinking_level" in settings.model_fields_set else None
            ),
            steering_mode=settings.steering_mode,
            follow_up_mode=settings.follow_up_mode,
            block_images=settings.block_images,
            auto_resize_images=settings.auto_resize_images,
            tools=default_tools(settings.default_tools),
            thinking_budgets=settings.thinking_budgets.by_level(),
            # Empty is none, as Pi tests both for truth.
            shell=ShellConfig(
                path=settings.shell.path or None,
                command_prefix=settings.shell.command_prefix or None,
            ),
        )
