"""The agent's events, as the terminal shows them: finished blocks for the scrollback, and the
state of the live region and the footer. Runs on the interface's event loop, one batch of
events at a time."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.host.compactor import CANCELLED_MESSAGE
from ctxmodes.sdk import events as ev
from ctxmodes.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    UserMessage,
)
from ctxmodes.tui import render
from ctxmodes.tui.cache_notices import CacheNotices
from ctxmodes.tui.extra_usage import WARNING as EXTRA_USAGE_WARNING
from ctxmodes.tui.extra_usage import ExtraUsageWarning
from ctxmodes.tui.key_hints import key_hint
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.live import LiveRegion
from ctxmodes.tui.replay import DEFAULT_REPLAY_TURNS, branch_blocks
from ctxmodes.tui.status import FooterStatus, cancel_hint

if TYPE_CHECKING:
    from ctxmodes.providers.base import ModelRequest
    from ctxmodes.sdk import Agent

#: Tool outputs kept for Ctrl+O.
KEPT_TOOL_OUTPUTS = 8
#: Rows of an edit's diff printed under its result (Ctrl+O shows the whole diff).
DIFF_ROWS = 24


#: What the footer says while a compaction runs, by what started it, as Pi's loader says it.
COMPACTING: Final[Mapping[str, str]] = {
    "manual": "Compacting context...",
    "threshold": "Auto-compacting...",
    "overflow": "Context overflow detected, Auto-compacting...",
}


#: Pi's words for an automatic compaction the user stopped.
AUTO_COMPACTION_CANCELLED: Final = "Auto-compaction cancelled"


class Transcript:
    """:param on_retry: called when a retry wait starts (the footer counts it down).
    :param keymap: the keys bound now, for the key that cancels a summary or a compaction.
    """

    def __init__(
        self,
        agent: Agent,
        live: LiveRegion,
        status: FooterStatus,
        on_retry: Callable[[], None],
        keymap: Callable[[], KeyMap],
        replay_turns: int = DEFAULT_REPLAY_TURNS,
        cache_miss_notices: bool = False,
        extra_usage_warning: bool = True,
    ) -> None:
        self._agent = agent
        #: What cache misses and summaries were billed, when the user asked to see it.
        self.cache_notices = CacheNotices(agent, enabled=cache_miss_notices)
        #: That a Claude subscription pays for the Anthropic model as extra usage.
        self.extra_usage = ExtraUsageWarning(enabled=extra_usage_warning)
        self._keymap = keymap
        #: A summary of the branch left is being made for the user's move in ``/tree``
        #: (otherwise a summary is a mode's own, Tree's of the previous window).
        self.summarizing_branch = False
        #: How many turns of the branch are printed when a session opens or the leaf moves.
        self.replay_turns = replay_turns
        self._live = live
        self._status = status
        self._on_retry = on_retry
        self.last_reply = ""
        #: The last turn request sent, for ``/context``.
        self.last_request: ModelRequest | None = None
        #: (name, full output) of the last tool calls and ``!`` commands, for Ctrl+O.
        self.tool_outputs: list[tuple[str, str]] = []
        #: How many of :attr:`tool_outputs`, counted from its end, Ctrl+O has not shown.
        self._unexpanded = 0
        #: The prompt that started the run now going, until the run shows any output: Esc
        #: meanwhile puts it back in the editor (nothing was answered, nothing is lost).
        self.unanswered_prompt: str | None = None
        self._run_fresh = False
        #: A compaction is in progress: a window it opens is its fresh window.
        self._compacted = False
        #: The summary of the window a mode just archived, for the window line that follows.
        self._archived_summary: str | None = None
        #: When each call running now started, and its arguments, by its id.
        self._calls: dict[str, tuple[float, Mapping[str, object]]] = {}

    def take_unanswered_prompt(self) -> str | None:
        prompt, self.unanswered_prompt = self.unanswered_prompt, None
        return prompt

    def handle(self, event: ev.AgentEvent, blocks: list[str], width: int) -> None:
        """Apply ``event``; blocks it finishes are appended to ``blocks``."""
        live, status = self._live, self._status
        if isinstance(event, (ev.TextDeltaEvent, ev.ToolStarted)):
            self.unanswered_prompt = None
        if isinstance(event, ev.TextDeltaEvent):
            if event.thinking:
                live.add_thinking(event.text)
                status.activity = "thinking"
            else:
                if status.activity == "thinking":
                    status.activity = "working"
                blocks.extend(live.add_text(event.text, width))
        elif isinstance(event, ev.AssistantStarted):
            live.reset()
            self._run_fresh = False
        elif isinstance(event, ev.MessageFinished):
            self._finished(event, blocks, width)
        elif isinstance(event, ev.ToolStarted):
            live.tool_started(event.name, self._expand_hint())
            if status.activity == "thinking":
                status.activity = "working"
            self._calls[event.call_id] = (time.monotonic(), event.arguments)
            expand, cwd = self._expand_hint(), Path(self._agent.session.cwd)
            blocks.append(render.tool_call(event.name, event.arguments, width, expand, cwd))
        elif isinstance(event, ev.ToolUpdated):
            if live.running_tool == event.name:
                live.tool_output = event.text
        elif isinstance(event, ev.ToolFinished):
            live.tool_ended()
            self._tool_finished(event, blocks, width)
        elif isinstance(event, ev.UsageReported):
            status.refresh()
        elif isinstance(event, ev.WindowOpened):
            archived, self._archived_summary = self._archived_summary, None
            if event.number > 0:
                expand = None
                if archived is not None:
                    # Ctrl+O shows what the window archived was summarized as.
                    expand = self._expand_hint()
                    self._keep_output(f"window {event.number - 1} summary", archived)
                line = render.window_line(event.number, self._compacted, width, expand)
                blocks.append(line)
            status.activity = "working" if self._agent.is_streaming() else None
            status.refresh()
        elif isinstance(event, ev.QueueChanged):
            live.queued = (event.steering, event.follow_up)
        elif isinstance(event, ev.RequestSent):
            self.last_request = event.request
        else:
            self._lifecycle(event, blocks, width)

    def extra_usage_warning(self, width: int) -> list[str]:
        """The extra-usage warning, when it is due for the session's model now."""
        if not self.extra_usage.due(self._agent):
            return []
        return [render.said(EXTRA_USAGE_WARNING, "warning", width)]

    def replay(self, width: int, *, summary_id: str | None = None) -> list[str]:
        """The active branch's last turns, as they appeared live, under a rule naming the
        session, and how often the session was compacted; after a move that left the
        summary ``summary_id`` of the branch it left, Ctrl+O shows the summary, as Pi's key
        expands a branch summary."""
        manager = self._agent.session_manager
        title = manager.get_session_name() or manager.session_id
        rule = render.styled(f"── session {title} · mode {self._agent.mode}", "bold", width)
        hint_at = None
        summary = self._summary(summary_id) if summary_id is not None else None
        if summary_id is not None and summary is not None:
            hint_at = (summary_id, self._expand_hint())
            self._keep_output("branch summary", summary)
        notices = self.cache_notices.notice
        blocks = [rule, *branch_blocks(manager, width, self.replay_turns, hint_at, notices)]
        # As Pi says under a session it shows: how often it was compacted, all branches.
        compactions = manager.count_of_type("compaction")
        if compactions:
            times = "1 time" if compactions == 1 else f"{compactions} times"
            blocks.append(render.notice(f"Session compacted {times}", "info", width))
        return blocks

    def _notice(self, entry_id: str | None, blocks: list[str], width: int) -> None:
        """The line :attr:`cache_notices` has for the entry just shown, if any."""
        notice = self.cache_notices.notice(entry_id)
        if notice is not None:
            blocks.append(render.notice(notice, "warning", width))

    def _summary(self, entry_id: str) -> str | None:
        """The text of the branch summary ``entry_id`` (``None``: it is no summary)."""
        stored = self._agent.session_manager.get_entry_json(entry_id)
        if stored is None or stored.get("type") != "branch_summary":
            return None
        return str(stored.get("summary", ""))

    def _tool_finished(self, event: ev.ToolFinished, blocks: list[str], width: int) -> None:
        expand = self._expand_hint()
        started, arguments = self._calls.pop(event.call_id, (None, {}))
        seconds = time.monotonic() - started if started is not None else None
        result = render.tool_result(
            event.name, event.text, event.details, event.is_error, width, expand, seconds
        )
        if result is not None:
            blocks.append(result)
        content = arguments.get("content")
        if event.diff is not None:
            blocks.append(render.tool_diff(event.diff, width, DIFF_ROWS, expand))
            self._keep_output(event.name, f"{event.text}\n\n{event.diff}")
        elif event.name == "write" and isinstance(content, str):
            # The call showed the first lines of what it wrote; the key shows them all.
            self._keep_output(event.name, f"{event.text}\n\n{content}")
        else:
            self._keep_output(event.name, event.text)

    def _expand_hint(self) -> str:
        """Pi's hint of the key that shows a cut output whole: ``ctrl+o to expand``."""
        return key_hint(self._keymap(), "app.tools.expand", "to expand")

    def _keep_output(self, name: str, text: str) -> None:
        self.tool_outputs.append((name, text))
        del self.tool_outputs[:-KEPT_TOOL_OUTPUTS]
        self._unexpanded = min(self._unexpanded + 1, KEPT_TOOL_OUTPUTS)

    def outputs_to_expand(self) -> list[tuple[str, str]]:
        """What Ctrl+O shows: every output kept that it has not shown yet, oldest first (a
        cut result's hint names the key under each), else the last one again."""
        shown = self.tool_outputs[-self._unexpanded :] if self._unexpanded else []
        self._unexpanded = 0
        return shown or self.tool_outputs[-1:]

    def _lifecycle(self, event: ev.AgentEvent, blocks: list[str], width: int) -> None:
        status = self._status
        if isinstance(event, ev.RunStarted):
            status.activity = "working"
            self._run_fresh = True
        elif isinstance(event, ev.RunSettled):
            status.activity = None
            self.unanswered_prompt, self._run_fresh = None, False
            self._calls.clear()
            self._live.reset()
            self._live.tool_ended()
            status.refresh()
        elif isinstance(event, ev.SummaryStarted):
            what = "branch" if self.summarizing_branch else "the previous window"
            status.activity = f"Summarizing {what}... {cancel_hint(self._keymap())}"
        elif isinstance(event, ev.CompactionStarted):
            doing = COMPACTING.get(event.trigger, COMPACTING["manual"])
            status.activity = f"{doing} {cancel_hint(self._keymap())}"
            self._compacted = True
        elif isinstance(event, ev.CompactionFinished):
            status.activity = None
            self._compacted = False
            if event.entry is not None:
                blocks.append(render.compaction_line(event.entry, width, self._expand_hint()))
                self._notice(event.entry.id, blocks, width)
                # Ctrl+O shows the summary, as Pi's key expands a compaction.
                summary = f"{render.compaction_text(event.entry)}\n\n{event.entry.summary}"
                self._keep_output("compaction", summary)
            elif event.trigger == "manual" and (event.error or event.aborted):
                said = event.error or CANCELLED_MESSAGE
                blocks.append(render.said(said, "error", width))
            elif event.aborted:
                blocks.append(render.notice(AUTO_COMPACTION_CANCELLED, "info", width))
            elif event.error:
                blocks.append(render.notice(event.error, "error", width))
            status.refresh()
        elif isinstance(event, ev.Navigated):
            # A summarized move leaves its summary at the new leaf.
            summary_id = event.new_leaf_id if event.summarized else None
            if not event.internal:
                # The user moved: what is current now is the branch they went to.
                blocks.extend(self.replay(width, summary_id=summary_id))
            elif summary_id is not None:
                # A mode archived the window (Tree's rollover): the window opened next
                # offers its summary.
                self._archived_summary = self._summary(summary_id)
            status.refresh()
        elif isinstance(event, ev.SessionChanged):
            self.tool_outputs.clear()
            self._unexpanded = 0
            # Messages still queued went with the session left behind (a fork during a run).
            self._live.queued = ((), ())
            blocks.extend(self.replay(width))
            blocks.extend(self.extra_usage_warning(width))
            status.refresh()
        elif isinstance(event, ev.Notice):
            blocks.append(render.said(event.message, event.level, width))
            # Commands answer with a notice: a new name or mode shows in the footer at once,
            # and a new model may be one a subscription pays for as extra usage.
            blocks.extend(self.extra_usage_warning(width))
            status.refresh()
        else:
            self._retries(event, blocks, width)

    def _retries(self, event: ev.AgentEvent, blocks: list[str], width: int) -> None:
        status = self._status
        if isinstance(event, ev.RetryScheduled):
            blocks.append(
                render.notice(
                    f"{event.error} — retry {event.attempt}/{event.max_attempts}",
                    "warning",
                    width,
                )
            )
            status.retry_in(event.delay_ms, event.attempt, event.max_attempts)
            self._on_retry()
        elif isinstance(event, ev.TransportRetryScheduled):
            blocks.append(
                render.notice(
                    f"{event.error} — resending in {event.delay_ms / 1000:g}s "
                    f"({event.attempt}/{event.max_attempts})",
                    "warning",
                    width,
                )
            )
        elif isinstance(event, ev.RetryEnded):
            status.retry_at = None
            status.activity = "working" if self._agent.is_streaming() else None
            if not event.success:
                blocks.append(render.said(render.retry_failure(event), "error", width))
        elif isinstance(event, ev.StatusChanged):
            status.set_status(event.key, event.text)

    def _finished(self, event: ev.MessageFinished, blocks: list[str], width: int) -> None:
        message = event.message
        if isinstance(message, UserMessage):
            text = ev.message_text(message)
            if self._run_fresh:
                # The run's first message is its prompt; later ones were steered in.
                self.unanswered_prompt, self._run_fresh = text, False
            images = ev.image_types(message)
            shown, kept = render.prompt_blocks(text, width, images, self._expand_hint())
            blocks.extend(shown)
            if kept is not None:
                self._keep_output(*kept)
        elif isinstance(message, AssistantMessage):
            text = ev.message_text(message)
            reply = self._live.rest_of_reply(message, width)
            self._live.reset()
            ending = render.reply_ending(message, width)
            blocks.extend(block for block in (reply, ending) if block is not None)
            self._notice(event.entry_id, blocks, width)
            if text.strip():
                self.last_reply = text
        elif isinstance(message, BashExecutionMessage):
            with contextlib.suppress(ValueError):  # run beside the agent: no longer waiting
                self._live.shell_beside.remove(message.command)
            self._keep_output("$ " + message.command, message.output)
            blocks.append(render.shell_command(message, width, self._expand_hint()))
        elif (
            isinstance(message, CustomMessage)
            and message.display
            and ev.window_number(message) is None
        ):
            text = ev.message_text(message)
            blocks.append(render.custom_message(message.custom_type, text, width))
