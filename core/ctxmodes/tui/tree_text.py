"""What the ``/tree`` navigator shows and copies of an entry, as Pi's tree selector does: the
text ``app.message.copy`` puts on the clipboard, a label's time (``app.tree.toggleLabelTimestamp``),
the words under the title naming the filter, and the help line built from the keys bound."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from ctxmodes.rpc.session_tree import js_string
from ctxmodes.session.jsvalues import js_trim, js_truthy
from ctxmodes.tui.key_hints import CANCEL, CONFIRM, help_keys, key_hint
from ctxmodes.tui.keymap import KeyMap

#: Pi's words for a filter other than the default, after the title.
FILTER_LABELS: Final[Mapping[str, str]] = {
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
LABEL_TIME_SHOWN: Final = " [+label time]"

#: Pi's help items: the actions whose first keys are shown, what they do, and whether the
#: words come before the keys.
_HELP: Final[tuple[tuple[tuple[str, ...], str, bool], ...]] = (
    (("tui.select.up", "tui.select.down"), "move", False),
    (("tui.editor.cursorLeft", "tui.editor.cursorRight"), "page", False),
    (("app.tree.foldOrUp", "app.tree.unfoldOrDown"), "branch", False),
    (("app.message.copy",), "copy", False),
    (("app.tree.editLabel",), "label", False),
    (("app.tree.toggleLabelTimestamp",), "label time", False),
    (
        (
            "app.tree.filter.default",
            "app.tree.filter.noTools",
            "app.tree.filter.userOnly",
            "app.tree.filter.labeledOnly",
            "app.tree.filter.all",
        ),
        "filters",
        True,
    ),
    (("app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"), "cycle", True),
)


def status_labels(filter_mode: str, label_times: bool) -> str:
    """Pi's words after the title: the filter (none for the default), then whether label
    times are shown."""
    return FILTER_LABELS.get(filter_mode, "") + (LABEL_TIME_SHOWN if label_times else "")


def tree_hint(keymap: KeyMap) -> str:
    """The navigator's help line: Pi's items with the first key of each action as bound
    (one shared modifier written once: ``ctrl+d/t/u/l/a``), an item without keys by its
    words alone, as Pi writes it; then typing, and the keys choosing and closing."""
    items = []
    for actions, words, words_first in _HELP:
        keys = help_keys(keymap, actions)
        if not keys:
            items.append(words)
            continue
        items.append(f"{words} {keys}" if words_first else f"{keys} {words}")
    chosen = [key_hint(keymap, CONFIRM, "go"), key_hint(keymap, CANCEL, "cancel")]
    return " · ".join([*items, "type to search", *chosen])


def label_time(timestamp: str, now: datetime | None = None) -> str:
    """A label's time as Pi shows it, in local time: ``14:05`` today, ``3/9 14:05`` this
    year, ``24/3/9 14:05`` before; empty when the timestamp cannot be read."""
    try:
        when = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return ""
    today = (now or datetime.now().astimezone()).astimezone()
    time = f"{when.hour:02d}:{when.minute:02d}"
    if when.date() == today.date():
        return time
    if when.year == today.year:
        return f"{when.month}/{when.day} {time}"
    return f"{when.year % 100:02d}/{when.month}/{when.day} {time}"


def full_text(content: Any) -> str:
    """Pi's ``extractFullContent``: a string itself, else the text blocks' ``text`` joined as
    JavaScript adds them (a block without one adds ``undefined``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        js_string(block["text"]) if "text" in block else "undefined"
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def is_bare_reply(entry: Mapping[str, Any] | None) -> bool:
    """Whether Pi's tree leaves the stored entry out (unless it is the current leaf): a
    reply with no text, only tool calls or nothing, that neither failed nor was aborted."""
    message = entry.get("message") if entry is not None else None
    if entry is None or entry.get("type") != "message" or not isinstance(message, dict):
        return False
    if message.get("role") != "assistant":
        return False
    stop = message.get("stopReason")
    failed = js_truthy(stop) and stop not in ("stop", "toolUse")
    return not failed and not _has_text(message.get("content"))


def _has_text(content: Any) -> bool:
    """Pi's ``hasTextContent``: a string, or a text block, with more than whitespace."""
    if isinstance(content, str):
        return bool(js_trim(content))
    return isinstance(content, list) and any(
        isinstance(block, dict)
        and block.get("type") == "text"
        and js_truthy(block.get("text"))
        and bool(js_trim(js_string(block["text"])))
        for block in content
    )


def copy_text(entry: Mapping[str, Any]) -> str | None:
    """What Pi copies of a stored entry: a message's text (a shell command's command, a
    failed reply's error), a custom message's text, a summary; ``None`` when that is
    blank."""
    kind = entry.get("type")
    text: Any = None
    if kind == "message":
        message = entry.get("message")
        if isinstance(message, dict):
            if message.get("role") == "bashExecution":
                text = message.get("command")
            elif "content" in message:
                text = full_text(message["content"])
                if not text and message.get("role") == "assistant":
                    text = message.get("errorMessage")
    elif kind == "custom_message":
        text = full_text(entry.get("content"))
    elif kind in ("compaction", "branch_summary"):
        text = entry.get("summary")
    return text if isinstance(text, str) and text.strip() else None
