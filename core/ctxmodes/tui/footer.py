"""The footer: where the session is and how much context is left.

Line one: working directory and session name. Line two: model (thinking level) • mode •
window N • usable tokens left (context window - 16,384) • cost, then plugins' status texts.
The tokens figure turns yellow at 70 % used and red at 90 %, and reads ``?`` after a rollover
or compaction until the model reports usage again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.sdk.context_state import ContextState

WARN_AT: Final = 0.70
ALERT_AT: Final = 0.90

Fragments = StyleAndTextTuples


@dataclass(frozen=True, slots=True)
class FooterState:
    cwd: Path
    session_name: str | None
    model: str | None
    mode: str
    thinking: str
    context: ContextState
    cost: float
    statuses: Mapping[str, str]


def compact_tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)


def tokens_style(fraction: float | None) -> str:
    if fraction is None:
        return "class:footer.unknown"
    if fraction >= ALERT_AT:
        return "class:footer.alert"
    if fraction >= WARN_AT:
        return "class:footer.warn"
    return "class:footer"


def tokens_text(context: ContextState) -> str:
    left = context.tokens_left
    if context.usable_tokens <= 0:
        return "context unknown"
    if left is None:
        return f"? / {compact_tokens(context.usable_tokens)} left"
    return f"{compact_tokens(left)} / {compact_tokens(context.usable_tokens)} left"


def _home_relative(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


def footer_fragments(state: FooterState) -> Fragments:
    """The footer as prompt_toolkit style fragments (two lines)."""
    first = _home_relative(state.cwd)
    if state.session_name:
        first += f" • {state.session_name}"
    parts: Fragments = [("class:footer.dim", first), ("", "\n")]
    model = state.model or "no model"
    if state.thinking != "off":
        model += f" ({state.thinking})"
    parts.append(("class:footer", f"{model} • {state.mode}"))
    if state.context.window is not None:
        parts.append(("class:footer", f" • window {state.context.window}"))
    parts.append(("class:footer", " • "))
    parts.append((tokens_style(state.context.fraction_used), tokens_text(state.context)))
    parts.append(("class:footer", f" • ${state.cost:.3f}"))
    for key in sorted(state.statuses):
        parts.append(("class:footer.dim", f" • {state.statuses[key]}"))
    return parts
