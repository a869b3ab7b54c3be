"""Where Pi's ``edit`` finds each ``oldText``, and what the file becomes.

Every edit of a call is matched against the same original text (line endings already made
LF). An exact match is tried first; when any edit matches only after normalisation (NFKC,
trailing whitespace of every line dropped, typographic quotes, dashes and spaces made
ASCII), the whole call is matched in normalised space, and only the lines an edit touches are
rewritten from the normalised text — every other line keeps its original bytes. Each
``oldText`` must occur once (counted in normalised space), edits must not overlap, and the
result must differ from the original. Error texts are Pi 0.85's.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from ctxmodes.session.jsvalues import js_length, js_trim_end
from ctxmodes.tools.base import ToolError

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass(frozen=True, slots=True)
class Replacement:
    """``old_text`` → ``new_text`` as the model sent it."""

    old_text: str
    new_text: str


@dataclass(frozen=True, slots=True)
class _Match:
    edit_index: int
    start: int
    length: int
    new_text: str


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect_line_ending(text: str) -> str:
    """``"\\r\\n"`` when the first line break is CRLF, else ``"\\n"`` (Pi's rule)."""
    lf = text.find("\n")
    crlf = text.find("\r\n")
    if lf == -1 or crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def normalize_for_fuzzy_match(text: str) -> str:
    """Pi's normalised view of a text, in which drifted quotes and whitespace still match."""
    text = unicodedata.normalize("NFKC", text)
    # JavaScript's trimEnd: not Python's isspace (U+001C-U+001F, U+0085 and U+FEFF differ).
    text = "\n".join(js_trim_end(line) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


def _count_occurrences(content: str, old_text: str) -> int:
    haystack, needle = normalize_for_fuzzy_match(content), normalize_for_fuzzy_match(old_text)
    if not needle:
        # ``split("")`` cuts between UTF-16 code units: one fewer "occurrence" than units.
        return js_length(haystack) - 1
    return haystack.count(needle)


def _find(content: str, old_text: str) -> tuple[int, int, bool] | None:
    """(start, length, fuzzy) of the first match, exact before normalised."""
    exact = content.find(old_text)
    if exact != -1:
        return exact, len(old_text), False
    needle = normalize_for_fuzzy_match(old_text)
    fuzzy = normalize_for_fuzzy_match(content).find(needle)
    return None if fuzzy == -1 else (fuzzy, len(needle), True)


def apply_edits(content: str, edits: list[Replacement], path: str) -> str:
    """The new LF text of ``content`` after ``edits``; :class:`ToolError` with Pi's text if not."""
    edits = [Replacement(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    total = len(edits)
    for index, edit in enumerate(edits):
        if not edit.old_text:
            where = "oldText" if total == 1 else f"edits[{index}].oldText"
            raise ToolError(f"{where} must not be empty in {path}.")
    fuzzy = any((found := _find(content, e.old_text)) is not None and found[2] for e in edits)
    base = normalize_for_fuzzy_match(content) if fuzzy else content
    matches: list[_Match] = []
    for index, edit in enumerate(edits):
        found = _find(base, edit.old_text)
        if found is None:
            raise ToolError(_not_found(path, index, total))
        occurrences = _count_occurrences(base, edit.old_text)
        if occurrences > 1:
            raise ToolError(_duplicate(path, index, total, occurrences))
        matches.append(_Match(index, found[0], found[1], edit.new_text))
    matches.sort(key=lambda m: m.start)
    for previous, current in itertools.pairwise(matches):
        if previous.start + previous.length > current.start:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in "
                f"{path}. Merge them into one edit or target disjoint regions."
            )
    result = (
        _apply_keeping_unchanged_lines(content, base, matches)
        if fuzzy
        else _apply(base, matches, 0)
    )
    if result == content:
        if total == 1:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. This "
                "might indicate an issue with special characters or the text not existing as "
                "expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return result


def _not_found(path: str, index: int, total: int) -> str:
    if total == 1:
        return (
            f"Could not find the exact text in {path}. The old text must match exactly "
            "including all whitespace and newlines."
        )
    return (
        f"Could not find edits[{index}] in {path}. The oldText must match exactly including "
        "all whitespace and newlines."
    )


def _duplicate(path: str, index: int, total: int, occurrences: int) -> str:
    if total == 1:
        return (
            f"Found {occurrences} occurrences of the text in {path}. The text must be unique. "
            "Please provide more context to make it unique."
        )
    return (
        f"Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be "
        "unique. Please provide more context to make it unique."
    )


def _apply(text: str, matches: list[_Match], offset: int) -> str:
    for match in reversed(matches):
        start = match.start - offset
        text = text[:start] + match.new_text + text[start + match.length :]
    return text


def _apply_keeping_unchanged_lines(original: str, base: str, matches: list[_Match]) -> str:
    """Rewrite from ``base`` only the lines the matches touch; copy the rest from ``original``."""
    original_lines = _LINES_WITH_ENDINGS.findall(original)
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in _LINES_WITH_ENDINGS.findall(base):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    if len(original_lines) != len(spans):
        raise ToolError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )
    groups: list[tuple[int, int, list[_Match]]] = []
    for match in sorted(matches, key=lambda m: m.start):
        first, stop = _line_range(spans, match)
        if groups and first < groups[-1][1]:
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, stop), [*members, match])
        else:
            groups.append((first, stop, [match]))
    pieces: list[str] = []
    next_line = 0
    for first, stop, members in groups:
        pieces.extend(original_lines[next_line:first])
        start, end = spans[first][0], spans[stop - 1][1]
        pieces.append(_apply(base[start:end], members, start))
        next_line = stop
    pieces.extend(original_lines[next_line:])
    return "".join(pieces)


def _line_range(spans: list[tuple[int, int]], match: _Match) -> tuple[int, int]:
    start, end = match.start, match.start + match.length
    first = next((i for i, (s, e) in enumerate(spans) if s <= start < e), -1)
    if first == -1:
        raise ToolError("Replacement range is outside the base content.")
    last = first
    while last < len(spans) and spans[last][1] < end:
        last += 1
    if last >= len(spans):
        raise ToolError("Replacement range is outside the base content.")
    return first, last + 1
