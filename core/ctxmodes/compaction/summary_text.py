"""What a branch summary's text says about the branch: Pi's fixed preamble and the goal line
that drawings of a session show for a summarized branch (no models, no pydantic: drawing a
session imports this alone).

Internal module: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from typing import Final

BRANCH_SUMMARY_PREAMBLE: Final = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)


def summary_goal(summary: object) -> str:
    """The first line of a summary's ``## Goal`` section, on one line — what a window or a
    branch was about; the summary's first line of text when it has no such section. Pi's
    fixed preamble is never the answer."""
    text = summary if isinstance(summary, str) else ""
    lines = [
        " ".join(line.split()) for line in text.removeprefix(BRANCH_SUMMARY_PREAMBLE).splitlines()
    ]
    for position, line in enumerate(lines):
        if line.lower() == "## goal":
            goal = next((rest for rest in lines[position + 1 :] if rest), "")
            if goal and not goal.startswith("#"):
                return goal
            break
    return next((line for line in lines if line and not line.startswith("<")), "")
