"""The texts sent to the summarization model, and how a prompt is assembled around them.

The instructions are our own wording. What is part of the format is kept as Pi has it, so
summaries written by either tool read the same: the section headings, the wrapper tags
(``<conversation>``, ``<previous-summary>``), the ``Additional focus:`` suffix for user
instructions and the order in which the pieces are joined.
"""

from __future__ import annotations

SUMMARIZATION_SYSTEM_PROMPT = """\
You condense conversations between a user and an AI coding assistant into structured \
summaries. Read the conversation you are given and reply with the summary alone, laid out \
exactly as requested.

Do NOT carry on the conversation and do NOT answer anything that is asked inside it. Your \
whole reply is the summary."""

COMPACTION_PROMPT = """\
The conversation above has to be condensed. Write a structured checkpoint that another \
model will rely on to pick up the work exactly where it stopped.

Lay it out EXACTLY like this:

## Goal
[The user's objective; list several if the session covered more than one task.]

## Constraints & Preferences
- [Requirements, limits or preferences the user stated]
- [Write "(none)" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [Whatever stops progress, if anything]

## Key Decisions
- **[Decision]**: [Why it was taken, in a few words]

## Next Steps
1. [What comes next, in order]

## Critical Context
- [Data, examples or references needed to carry on]
- [Write "(none)" if nothing applies]

Keep every section short. Quote file paths, function names and error messages exactly as \
they appeared."""

UPDATE_PROMPT = """\
The conversation above holds NEW messages only. Fold them into the existing summary given \
in the <previous-summary> tags.

How to update it:
- KEEP everything the previous summary records
- ADD the progress, decisions and context the new messages bring
- MOVE items from "In Progress" to "Done" once they are finished
- REVISE "Next Steps" to match what has now been done
- QUOTE file paths, function names and error messages exactly
- Drop an item only when it has stopped mattering

Lay it out EXACTLY like this:

## Goal
[The goals recorded so far, plus any the work has grown into]

## Constraints & Preferences
- [Those recorded so far, plus new ones]

## Progress
### Done
- [x] [Items done before AND items finished since]

### In Progress
- [ ] [Work under way now]

### Blocked
- [Current blockers; remove the ones that were resolved]

## Key Decisions
- **[Decision]**: [Why, in a few words] (keep the earlier ones, add new ones)

## Next Steps
1. [What comes next given where things stand]

## Critical Context
- [Keep what still matters, add what is new]

Keep every section short. Quote file paths, function names and error messages exactly as \
they appeared."""

TURN_PREFIX_PROMPT = """\
The conversation above is only the BEGINNING of a turn that is too long to keep whole. The \
rest of that turn (the most recent work) stays in the context word for word.

Summarize this beginning so the part that is kept can be understood on its own:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions taken and work done in this first part]

## Context for Suffix
- [What a reader needs in order to follow the recent work that is kept]

Be brief and stick to what the kept part depends on."""

BRANCH_SUMMARY_PROMPT = """\
Write a structured summary of the conversation branch above, so that its context is at \
hand if the conversation comes back to it later.

Lay it out EXACTLY like this:

## Goal
[What the user wanted to achieve on this branch]

## Constraints & Preferences
- [Requirements, limits or preferences that were stated]
- [Write "(none)" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work begun but not finished]

### Blocked
- [Whatever stops progress, if anything]

## Key Decisions
- **[Decision]**: [Why it was taken, in a few words]

## Next Steps
1. [What should happen next to continue this work]

Keep every section short. Quote file paths, function names and error messages exactly as \
they appeared."""


def wrap_conversation(conversation_text: str) -> str:
    """The serialized conversation in the tags every summarization prompt starts with."""
    return f"<conversation>\n{conversation_text}\n</conversation>\n\n"


def with_focus(instructions: str, custom_instructions: str | None) -> str:
    """Append the user's own focus (``/compact <text>``) to a set of instructions."""
    if not custom_instructions:
        return instructions
    return f"{instructions}\n\nAdditional focus: {custom_instructions}"


def compaction_prompt(
    conversation_text: str,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
) -> str:
    """The prompt that summarizes history, or updates ``previous_summary`` when there is one."""
    prompt = wrap_conversation(conversation_text)
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        return prompt + with_focus(UPDATE_PROMPT, custom_instructions)
    return prompt + with_focus(COMPACTION_PROMPT, custom_instructions)


def turn_prefix_prompt(conversation_text: str) -> str:
    """The prompt that summarizes the first part of a turn split by a compaction."""
    return wrap_conversation(conversation_text) + TURN_PREFIX_PROMPT


def branch_summary_prompt(
    conversation_text: str,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> str:
    """The prompt that summarizes an abandoned branch.

    With ``replace_instructions`` the user's instructions stand in for ours entirely (when
    there are any); otherwise they are appended as an additional focus.
    """
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    else:
        instructions = with_focus(BRANCH_SUMMARY_PROMPT, custom_instructions)
    return wrap_conversation(conversation_text) + instructions
