"""The footer: where the session is and how much context is left.

Line one: working directory, its git branch (as Pi names it: see
:mod:`~ctxmodes.tui.git_branch`) and session name. Line two: model (thinking level) • mode •
window N • usable tokens left (context window - 16,384) • Pi's token figures and the cost
(``↑1.2k ↓310 $0.004``; as in Pi, no cost for a free model), then plugins' status texts.
The tokens left turn yellow at 70 % used and red at 90 %, and read ``?`` after a rollover or
compaction until the model reports usage again.

On a terminal narrower than a line, the first is cut with ``...`` as Pi cuts its footer's
folder line, and the second goes on to further lines between its parts, so that none of them
(the activity last of all, see :mod:`~ctxmodes.tui.status`) is lost; a part wider than the
terminal on its own is cut with ``...``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.sdk.context_state import ContextState
from ctxmodes.session.jsvalues import js_to_fixed
from ctxmodes.tui.text_wrap import text_cells, truncate_to_width

WARN_AT: Final = 0.70
ALERT_AT: Final = 0.90

Fragments = StyleAndTextTuples
#: One part of a footer line: its style and its text.
Part = tuple[str, str]
SEPARATOR: Final = " • "
_BREAKS: Final = re.compile("[\r\n\t]")
_SPACES: Final = re.compile(" +")


@dataclass(frozen=True, slots=True)
class FooterState:
    cwd: Path
    branch: str | None
    session_name: str | None
    model: str | None
    mode: str
    thinking: str
    context: ContextState
    #: Pi's token figures (:meth:`~ctxmodes.tui.usage_totals.UsageTotals.stats`), or nothing.
    token_stats: str
    cost: float
    #: The model is paid by a subscription: the cost is what the calls would have cost.
    subscription: bool
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


def one_line(status: str) -> str:
    """A plugin's status text on one line, as Pi's footer puts it: line breaks and tabs as
    spaces, runs of spaces as one, none at either end."""
    return _SPACES.sub(" ", _BREAKS.sub(" ", status)).strip()


def _home_relative(path: Path) -> str:
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


@dataclass(frozen=True, slots=True)
class FooterLines:
    """The footer's text before it is fitted to a width: the first line, and the parts of
    the second (a :data:`SEPARATOR` goes between two on one line)."""

    first: Part
    parts: tuple[Part, ...]

    def with_part(self, part: Part) -> FooterLines:
        return FooterLines(self.first, (*self.parts, part))

    def fragments(self, width: int = 0) -> Fragments:
        """The lines fitted to ``width`` columns (``0``: each on one line, however long)."""
        style, text = self.first
        shown: Fragments = [(style, truncate_to_width(text, width) if width > 0 else text)]
        used: int | None = None  # the cells of the line the parts are on (none yet)
        for part_style, part_text in self.parts:
            cells = text_cells(part_text)
            if used is not None and (width <= 0 or used + len(SEPARATOR) + cells <= width):
                shown.append(("class:footer", SEPARATOR))
                used += len(SEPARATOR) + cells
            else:
                shown.append(("", "\n"))
                if 0 < width < cells:
                    part_text, cells = truncate_to_width(part_text, width), width
                used = cells
            shown.append((part_style, part_text))
        return shown


def _usage_text(state: FooterState) -> str:
    """Pi's token figures, then the cost where there is one (or a subscription pays it), as
    Pi's footer leaves out a free model's ``$0.000``."""
    stats = [state.token_stats] if state.token_stats else []
    if state.cost or state.subscription:
        cost = js_to_fixed(state.cost, 3)
        stats.append(f"${cost}" + (" (sub)" if state.subscription else ""))
    return " ".join(stats)


def footer_lines(state: FooterState) -> FooterLines:
    """The footer's lines for ``state``."""
    first = _home_relative(state.cwd)
    if state.branch:
        first += f" ({state.branch})"
    if state.session_name:
        first += f" • {state.session_name}"
    model = state.model or "no model"
    if state.thinking != "off":
        model += f" ({state.thinking})"
    parts: list[Part] = [("class:footer", model), ("class:footer", state.mode)]
    if state.context.window is not None:
        parts.append(("class:footer", f"window {state.context.window}"))
    parts.append((tokens_style(state.context.fraction_used), tokens_text(state.context)))
    parts += [("class:footer", stats)] if (stats := _usage_text(state)) else []
    statuses = (one_line(state.statuses[key]) for key in sorted(state.statuses))
    parts += [("class:footer.dim", status) for status in statuses if status]
    return FooterLines(("class:footer.dim", first), tuple(parts))
