"""What the Codex CLI asks for before its first turn: the model catalog, the account check
and the user settings.

The catalog has one entry, the upstream model, with the context feature switched on by the
catalog itself (``model_messages.token_budget`` enabled with the history/notes extension),
so a client needs no feature flag; ``supports_experimental_context`` is set for clients that
also use the experimental route. Codex refuses to decode an entry that lacks any of the keys
below. The token-budget texts are ours.
"""

from __future__ import annotations

from typing import Any

from ctxmodes.providers import ModelInfo
from ctxmodes_remote.service.reasoning import CODEX_EFFORTS, catalog_levels
from ctxmodes_remote.service.storage import Account

#: Codex's default output budget for tool results, sent back as the truncation policy.
TRUNCATION_POLICY = {"mode": "tokens", "limit": 10_000}
REMINDER_THRESHOLD_TOKENS = 6_144
FALLBACK_BUFFER_TOKENS = 16_384

INSTRUCTIONS = (
    "You are a coding agent working in the user's workspace through the tools you are given. "
    "Be concise and finish the task."
)
GUIDANCE = (
    "Your work spans context windows. Before a window runs out, save what you need to go on "
    "(goal, progress, next steps) with the notes tools, then call new_context. A new window "
    "starts empty: read your notes and search history to pick the task up again."
)
REMINDER = (
    "<context_window_reminder>\nOnly {n_remaining} tokens remain in this context window. "
    "Save your state in notes now, then call `functions.new_context` to continue in a fresh "
    "window.\n</context_window_reminder>"
)
FALLBACK = (
    "<context_window_reminder>\nThis context window is exhausted. Do not continue the task "
    "here: write a checkpoint note, then call `functions.new_context`; use no tools other "
    "than `notes` and `functions.new_context`.\n</context_window_reminder>"
)


EFFORT_DESCRIPTIONS = {
    "minimal": "Thinks as little as it can",
    "low": "Quick answers, little thinking",
    "medium": "Thinks as the task needs",
    "high": "Thinks hard before answering",
    "xhigh": "Thinks hardest, slowest",
}


def _default_effort(efforts: list[str]) -> str:
    # Pi's default thinking level, else the nearest the model takes (higher first, as Pi
    # clamps a level).
    rank = CODEX_EFFORTS.index
    higher = [effort for effort in efforts if rank(effort) >= rank("medium")]
    return higher[0] if higher else efforts[-1]


def catalog_entry(info: ModelInfo) -> dict[str, Any]:
    context_window = info.context_window or 272_000
    # A model that does not think is offered no effort, and Codex then asks for none.
    efforts = catalog_levels(info)
    return {
        "slug": info.id,
        "display_name": info.id,
        "description": f"{info.id} through ctxmodes serve",
        "support_verbosity": True,
        "default_verbosity": "low",
        "truncation_policy": dict(TRUNCATION_POLICY),
        "supported_reasoning_levels": [
            {"effort": effort, "description": EFFORT_DESCRIPTIONS[effort]} for effort in efforts
        ],
        **({"default_reasoning_level": _default_effort(efforts)} if efforts else {}),
        # Codex then asks for the thinking to be shown (``reasoning.summary``).
        "supports_reasoning_summaries": bool(efforts),
        "shell_type": "shell_command",
        "visibility": "list",
        "supported_in_api": True,
        "priority": 0,
        "prefer_websockets": False,
        "context_window": context_window,
        "max_context_window": context_window,
        "model_messages": {
            "instructions_template": INSTRUCTIONS,
            "token_budget": {
                "enabled": True,
                "use_history_notes_extension": True,
                "reminder_threshold_tokens": REMINDER_THRESHOLD_TOKENS,
                "reminder_message_template": REMINDER,
                "guidance_message": GUIDANCE,
                "auto_compact_fallback_prompt": FALLBACK,
                "auto_compact_fallback_buffer_tokens": FALLBACK_BUFFER_TOKENS,
            },
        },
        "experimental_supported_tools": [],
        "supports_experimental_context": True,
    }


def catalog(info: ModelInfo) -> dict[str, Any]:
    return {"models": [catalog_entry(info)]}


def accounts_check(account: Account) -> dict[str, Any]:
    """``wham/accounts/check``: the caller's account, with no routing constraint (Codex keeps
    its configured base URL)."""
    return {
        "accounts": [
            {
                "id": account.account_id,
                "name": account.name,
                "structure": "personal",
                "plan_type": "pro",
                "workspace_backend_origin": "NO_CONSTRAINT",
                "account_routing_override": "NO_CONSTRAINT",
            }
        ],
        "account_ordering": [account.account_id],
    }
