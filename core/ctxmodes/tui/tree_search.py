"""What typing in the ``/tree`` navigator matches, as Pi's tree selector matches it: every
word of the query (split at whitespace, case ignored) must appear in an entry's searchable
text, which is its label, then its kind and text as Pi's ``getSearchableText`` writes them
(a message's role and first 200 characters, a shell command, a summary, a model's id …).
What the navigator draws for a tool call (``[read: path]``) is not searched, as in Pi."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ctxmodes.compaction._js import js_prefix
from ctxmodes.rpc.session_tree import js_string
from ctxmodes.session.jsvalues import JS_WHITESPACE, js_truthy
from ctxmodes.tui.tree_text import full_text

#: JavaScript's ``\s``, at which Pi splits the query into words.
_WHITESPACE: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")
#: How much of a message's text Pi searches, in UTF-16 code units.
SEARCHED_UNITS: Final = 200
#: Entry types searched by a fixed word and one field, as Pi writes them.
_WORD_AND_FIELD: Final[Mapping[str, tuple[str, str]]] = {
    "model_change": ("model", "modelId"),
    "thinking_level_change": ("thinking", "thinkingLevel"),
    "custom": ("custom", "customType"),
}


def query_words(query: str) -> list[str]:
    """The words every one of which an entry must hold to be shown, lower-cased."""
    return [word for word in _WHITESPACE.split(query.lower()) if word]


def matches(words: Sequence[str], searchable: str) -> bool:
    """Whether ``searchable`` (lower-cased) holds every word (no words: anything does)."""
    return all(word in searchable for word in words)


def searchable_text(entry: Mapping[str, Any] | None, label: str | None) -> str:
    """Pi's ``getSearchableText`` of a stored entry, lower-cased: the label, then what its
    type contributes, joined by spaces (an unknown entry: its label alone)."""
    parts: list[Any] = [label] if label else []
    if entry is not None:
        parts += _type_parts(entry)
    # Array.prototype.join writes null and undefined as nothing.
    return " ".join("" if part is None else js_string(part) for part in parts).lower()


def _type_parts(entry: Mapping[str, Any]) -> list[Any]:
    kind = entry.get("type")
    parts: list[Any] = []
    if kind == "message":
        parts += _message_parts(entry.get("message"))
    elif kind == "custom_message":
        content = entry.get("content")
        text = content if isinstance(content, str) else _searched(content)
        parts += [entry.get("customType"), text]
    elif kind == "compaction":
        parts.append("compaction")
    elif kind == "branch_summary":
        parts += ["branch summary", entry.get("summary")]
    elif kind == "session_info":
        parts.append("title")
        if js_truthy(entry.get("name")):
            parts.append(entry["name"])
    elif kind == "label":
        label_set = entry.get("label")
        parts += ["label", "" if label_set is None else label_set]
    elif isinstance(kind, str) and kind in _WORD_AND_FIELD:
        word, name = _WORD_AND_FIELD[kind]
        parts += [word, entry.get(name)]
    return parts


def _message_parts(message: Any) -> list[Any]:
    if not isinstance(message, dict):
        return []
    parts: list[Any] = [message.get("role")]
    if js_truthy(message.get("content")):
        parts.append(_searched(message["content"]))
    if message.get("role") == "bashExecution" and js_truthy(message.get("command")):
        parts.append(message["command"])
    return parts


def _searched(content: Any) -> str:
    """Pi's ``extractContent``: the text's first :data:`SEARCHED_UNITS` code units (half
    an emoji, cut there, matches nothing typed, as in Pi)."""
    return js_prefix(full_text(content), SEARCHED_UNITS)
