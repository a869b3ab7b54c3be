"""The summarization calls a compaction or a branch summary makes, ready to hand to a model.

Each call is one :class:`SummaryRequest`: a system prompt, a single user message holding the
transcript and the instructions, and an output cap. The transcript is the model-facing form
of the messages (:func:`ctxmodes.session.convert.convert_to_llm`) flattened to text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ctxmodes.compaction.branch_summary import BRANCH_SUMMARY_MAX_TOKENS
from ctxmodes.compaction.prepare import CompactionPreparation
from ctxmodes.compaction.prompts import (
    SUMMARIZATION_SYSTEM_PROMPT,
    branch_summary_prompt,
    compaction_prompt,
    turn_prefix_prompt,
)
from ctxmodes.compaction.serialize import serialize_conversation
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import AgentMessage, TextContent, UserMessage

#: Share of ``reserve_tokens`` a history summary may fill.
HISTORY_OUTPUT_SHARE: Final = 0.8
#: Share of ``reserve_tokens`` a turn-prefix summary may fill.
TURN_PREFIX_OUTPUT_SHARE: Final = 0.5

SummaryKind = Literal["history", "turn_prefix", "branch"]


class SummaryRequest(BaseModel):
    """One call to the summarization model."""

    model_config = ConfigDict(frozen=True)

    #: What the call summarizes: compacted history, the first part of a split turn, or an
    #: abandoned branch.
    kind: SummaryKind
    system_prompt: str
    messages: list[UserMessage]
    #: Output cap for the reply.
    max_tokens: int


def output_cap(limit: float, model_max_tokens: int | None) -> int:
    """``limit`` rounded down, lowered to the model's own output limit when it has one."""
    cap = math.floor(limit)
    if model_max_tokens is not None and model_max_tokens > 0:
        cap = min(cap, model_max_tokens)
    return cap


def _request(kind: SummaryKind, prompt: str, max_tokens: int) -> SummaryRequest:
    message = UserMessage(content=[TextContent(text=prompt)], timestamp=int(time.time() * 1000))
    return SummaryRequest(
        kind=kind,
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        messages=[message],
        max_tokens=max_tokens,
    )


def transcript(messages: Sequence[AgentMessage]) -> str:
    """The text a summarizer reads for ``messages`` (session messages, any role)."""
    return serialize_conversation(convert_to_llm(messages))


def history_request(
    messages: Sequence[AgentMessage],
    *,
    reserve_tokens: int,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    model_max_tokens: int | None = None,
) -> SummaryRequest:
    """The call that summarizes history, updating ``previous_summary`` if there is one."""
    prompt = compaction_prompt(transcript(messages), previous_summary, custom_instructions)
    cap = output_cap(HISTORY_OUTPUT_SHARE * reserve_tokens, model_max_tokens)
    return _request("history", prompt, cap)


def turn_prefix_request(
    messages: Sequence[AgentMessage], *, reserve_tokens: int, model_max_tokens: int | None = None
) -> SummaryRequest:
    """The call that summarizes the first part of a turn the cut point splits."""
    cap = output_cap(TURN_PREFIX_OUTPUT_SHARE * reserve_tokens, model_max_tokens)
    return _request("turn_prefix", turn_prefix_prompt(transcript(messages)), cap)


def branch_request(
    messages: Sequence[AgentMessage],
    *,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    model_max_tokens: int | None = None,
) -> SummaryRequest:
    """The call that summarizes an abandoned branch (messages from ``prepare_branch_entries``)."""
    prompt = branch_summary_prompt(transcript(messages), custom_instructions, replace_instructions)
    return _request("branch", prompt, output_cap(BRANCH_SUMMARY_MAX_TOKENS, model_max_tokens))


def compaction_requests(
    preparation: CompactionPreparation,
    *,
    custom_instructions: str | None = None,
    model_max_tokens: int | None = None,
) -> list[SummaryRequest]:
    """The calls a compaction makes, in the order they must run.

    Normally one history call. When the cut splits a turn: the history call (left out when
    nothing precedes the turn), then the turn-prefix call.
    """
    reserve = preparation.settings.reserve_tokens
    requests: list[SummaryRequest] = []
    split = preparation.is_split_turn and bool(preparation.turn_prefix_messages)
    if preparation.messages_to_summarize or not split:
        requests.append(
            history_request(
                preparation.messages_to_summarize,
                reserve_tokens=reserve,
                previous_summary=preparation.previous_summary,
                custom_instructions=custom_instructions,
                model_max_tokens=model_max_tokens,
            )
        )
    if split:
        requests.append(
            turn_prefix_request(
                preparation.turn_prefix_messages,
                reserve_tokens=reserve,
                model_max_tokens=model_max_tokens,
            )
        )
    return requests
