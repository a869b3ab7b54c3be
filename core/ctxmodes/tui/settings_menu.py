"""``/settings``: the settings a running session can change, listed as Pi's ``/settings``
lists them (its labels and values), each row cycling through its values with Enter.

A change applies at once, also while the agent works (the queues' next delivery, the next
compaction or retry check, the next image sent, the next reply drawn), and to the sessions
``/new``, ``/resume`` and ``/fork`` start after it; it is then saved in Pi's global
``settings.json`` under Pi's key, as Pi's ``/settings`` saves it, for the next start of
ctxmodes and of Pi.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from ctxmodes.host.options import HostOptions
from ctxmodes.host.queues import DrainMode
from ctxmodes.hostapi import StreamingBehavior
from ctxmodes.pi_settings_save import save_choice
from ctxmodes.tui.key_hints import list_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession
    from ctxmodes.tui.transcript import Transcript

TITLE: Final = "Settings"
QUEUE_MODES: Final = ("one-at-a-time", "all")
SWITCH: Final = ("true", "false")


@dataclass(frozen=True, slots=True)
class Setting:
    """One row: Pi's label, the values it cycles through, how to read the current one, how
    to apply a value, and the key Pi saves it under (a switch's value saved as a boolean)."""

    label: str
    values: tuple[str, ...]
    read: Callable[[TerminalSession], str]
    apply: Callable[[TerminalSession, str], None]
    pi_key: tuple[str, ...]

    def saved(self, value: str) -> object:
        return value == "true" if self.values == SWITCH else value

    def next_value(self, session: TerminalSession) -> str:
        current = self.read(session)
        at = self.values.index(current) if current in self.values else -1
        return self.values[(at + 1) % len(self.values)]


def _options(session: TerminalSession) -> HostOptions:
    return session.agent.session.options


def _change(session: TerminalSession, change: Callable[[HostOptions], HostOptions]) -> None:
    session.agent.host.change_options(change)


def _shown(flag: bool) -> str:
    return "true" if flag else "false"


def _hide_thinking(session: TerminalSession) -> str:
    return _shown(not session.live.show_thinking)


def _skill_commands(session: TerminalSession) -> str:
    return _shown(session.settings.skill_commands)


def _set_hide_thinking(session: TerminalSession, value: str) -> None:
    session.live.show_thinking = value == "false"


def _set_skill_commands(session: TerminalSession, value: str) -> None:
    session.settings = session.settings.model_copy(update={"skill_commands": value == "true"})


def _transcript(session: TerminalSession) -> Transcript:
    return session.transcript


class _Switchable(Protocol):
    enabled: bool


def _notice_setting(
    label: str,
    notices: Callable[[TerminalSession], _Switchable],
    field: str,
    pi_key: tuple[str, ...],
) -> Setting:
    """The row of notices the transcript shows or not (``notices``), kept for the sessions
    started later as the terminal setting ``field``."""

    def read(session: TerminalSession) -> str:
        return _shown(notices(session).enabled)

    def apply(session: TerminalSession, value: str) -> None:
        enabled = value == "true"
        notices(session).enabled = enabled
        session.settings = session.settings.model_copy(update={field: enabled})

    return Setting(label, SWITCH, read, apply, pi_key)


def _queue_mode_setting(label: str, queue: StreamingBehavior, pi_key: str) -> Setting:
    """The row of the steering (``"steer"``) or follow-up queue's delivery mode."""

    def read(session: TerminalSession) -> str:
        options = _options(session)
        return options.steering_mode if queue == "steer" else options.follow_up_mode

    def apply(session: TerminalSession, value: str) -> None:
        mode: DrainMode = "all" if value == "all" else "one-at-a-time"
        _change(session, lambda options: options.with_queue_mode(queue, mode))

    return Setting(label, QUEUE_MODES, read, apply, (pi_key,))


SETTINGS: Final[Sequence[Setting]] = (
    Setting(
        "Auto-compact",
        SWITCH,
        lambda session: _shown(_options(session).compaction.enabled),
        lambda session, value: _change(
            session, lambda options: options.with_auto_compaction(value == "true")
        ),
        ("compaction", "enabled"),
    ),
    _queue_mode_setting("Steering mode", "steer", "steeringMode"),
    _queue_mode_setting("Follow-up mode", "follow_up", "followUpMode"),
    Setting("Hide thinking", SWITCH, _hide_thinking, _set_hide_thinking, ("hideThinkingBlock",)),
    _notice_setting(
        "Cache miss notices",
        lambda session: _transcript(session).cache_notices,
        "cache_miss_notices",
        ("showCacheMissNotices",),
    ),
    Setting(
        "Auto-resize images",
        SWITCH,
        lambda session: _shown(_options(session).auto_resize_images),
        lambda session, value: _change(
            session,
            lambda options: dataclasses.replace(options, auto_resize_images=value == "true"),
        ),
        ("images", "autoResize"),
    ),
    Setting(
        "Block images",
        SWITCH,
        lambda session: _shown(_options(session).block_images),
        lambda session, value: _change(
            session, lambda options: dataclasses.replace(options, block_images=value == "true")
        ),
        ("images", "blockImages"),
    ),
    Setting(
        "Skill commands", SWITCH, _skill_commands, _set_skill_commands, ("enableSkillCommands",)
    ),
    _notice_setting(
        "Anthropic extra usage",
        lambda session: _transcript(session).extra_usage,
        "anthropic_extra_usage_warning",
        ("warnings", "anthropicExtraUsage"),
    ),
)


def settings(session: TerminalSession, args: str) -> None:
    """``/settings``: the list of settings with their current values; Enter sets the
    selected one to its next value and keeps the list open on it, Esc closes it."""
    _open(session, 0)


def _open(session: TerminalSession, selected: int) -> None:
    width = max(len(setting.label) for setting in SETTINGS) + 2

    def rows(_query: str) -> list[PickerItem]:
        return [
            PickerItem(
                index,
                setting.label.lower(),
                [("", setting.label.ljust(width)), ("class:picker.hint", setting.read(session))],
            )
            for index, setting in enumerate(SETTINGS)
        ]

    def chosen(item: PickerItem) -> None:
        setting = SETTINGS[item.key]
        value = setting.next_value(session)
        setting.apply(session, value)
        changes = [(setting.pi_key, setting.saved(value))]
        save_choice(changes, session.notify, session.defaults.origins)
        _open(session, item.key)

    hint = list_hint(session.keymap, "next value", typed=False, cancel="close")
    picker = Picker(TITLE, rows, chosen, hint=hint, filterable=False)
    picker.selected = selected
    session.open_picker(picker)
