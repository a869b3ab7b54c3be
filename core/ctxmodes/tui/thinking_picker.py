"""``/thinking`` without a level: Pi's thinking level selector.

The levels the session's model takes (every level without a model), each with Pi's words for
it; the current one marked ``✓``, the configured default's words ending in ``· default``.
Typing searches a level's name and words as Pi's does (pi-tui's fuzzy search), the selected
level kept while it still matches, else the first. Enter sets the level for this session
(``Thinking level: high``); Ctrl+S, as in Pi whatever ``keybindings.json`` binds, sets it
and makes it the default, saved as Pi's ``defaultThinkingLevel`` (``Default thinking level:
high``); Esc closes the list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from ctxmodes.fuzzy_filter import fuzzy_filter
from ctxmodes.thinking_levels import THINKING_LEVELS
from ctxmodes.tui.key_hints import set_as_default_hint
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.picker_keys import THINKING_KEYS

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

__all__ = ["LEVEL_DESCRIPTIONS", "TITLE", "open_thinking_picker"]

TITLE: Final = "Thinking Level"
#: Pi's words for each level.
LEVEL_DESCRIPTIONS: Final = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning (~1k tokens)",
    "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)",
    "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Extra-high reasoning (~32k tokens)",
    "max": "Maximum reasoning",
}


def open_thinking_picker(
    session: TerminalSession,
    select: Callable[[str], None],
    select_as_default: Callable[[str], None],
) -> None:
    """Open the list on the session's levels; the level chosen goes to ``select``, or to
    ``select_as_default`` when Ctrl+S chose it."""
    agent = session.agent
    model = agent.session.model
    levels: Sequence[str] = (
        THINKING_LEVELS if model is None else model.capabilities.supported_thinking_levels()
    )
    current = agent.thinking_level
    default = session.defaults.thinking_level

    def words(level: str) -> str:
        said = LEVEL_DESCRIPTIONS.get(level, "")
        return f"{said} · default" if level == default else said

    def rows(query: str) -> list[PickerItem]:
        shown = fuzzy_filter(levels, query, lambda level: f"{level} {words(level)}")
        return [
            PickerItem(
                level,
                f"{level} {words(level)}",
                [("", ("✓ " if level == current else "  ") + level.ljust(12)), _hint(words(level))],
            )
            for level in shown
        ]

    def reselect(before: Any) -> None:
        """The level selected before the search changed, while it still matches."""
        keys = [row.key for row in picker.rows()]
        picker.selected = keys.index(before) if before in keys else 0

    def choose_as_default() -> None:
        chosen = picker.selected_key()
        if chosen is not None:
            session.close_picker()
            select_as_default(str(chosen))

    keymap = session.keymap
    cycle = keymap.text("app.thinking.cycle")
    picker = Picker(
        TITLE,
        rows,
        lambda item: select(str(item.key)),
        header=lambda: [[("class:picker.hint", f"{cycle} cycles thinking levels in-session")]],
        wraps=True,
        key_order=THINKING_KEYS,
        actions={"key.ctrl+s": choose_as_default},
        stays_open_unmatched=True,
        reselect=reselect,
        hint=set_as_default_hint(keymap),
        counted=False,
    )
    keys = [row.key for row in picker.rows()]
    picker.selected = keys.index(current) if current in keys else 0
    session.open_picker(picker)


def _hint(text: str) -> tuple[str, str]:
    return ("class:picker.hint", text)
