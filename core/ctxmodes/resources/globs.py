"""Glob patterns as Pi matches them (the ``minimatch`` package with its defaults).

``*`` and ``?`` stay within one path segment, ``**`` as a whole segment spans any number of
them (a trailing one at least one), ``[...]`` is a character class (``!`` or ``^`` negating
it, ``[:alpha:]``-style names inside), ``{a,b}`` and ``{1..3}`` are alternatives, and a
backslash makes the next character literal. Wildcards match no segment that starts with a
dot, a leading ``!`` negates the pattern and one starting with ``#`` matches nothing.
Extended globs match that many of their ``|``-separated alternatives: ``?(…)`` at most one,
``*(…)`` any number, ``+(…)`` at least one, ``@(…)`` exactly one, and ``!(…)`` anything
but them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

_GLOBSTAR = None
Segment = re.Pattern[str] | str | None
_CLASS_NAMES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\s",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "0-9A-Fa-f",
}
#: Each extended glob's repetition of its alternatives (``!`` is handled apart).
_EXTGLOB_KINDS = {"?": "?", "*": "*", "+": "+", "@": "", "!": ""}
_RANGE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def glob_matches(path: str, pattern: str) -> bool:
    """Whether ``path`` (``/``-separated) matches ``pattern``."""
    negated, compiled = _compiled(pattern)
    if compiled is None:
        return False
    if not compiled:  # the empty pattern
        return (path == "") != negated
    segments = _split(path)
    hit = any(_match(segments, 0, alternative, 0) for alternative in compiled)
    return hit != negated


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> tuple[bool, tuple[tuple[Segment, ...], ...] | None]:
    """``(negated, alternatives)``; no alternatives for a comment, an empty tuple for the
    empty pattern."""
    if pattern.startswith("#"):
        return False, None
    bangs = len(pattern) - len(pattern.lstrip("!"))
    body = pattern[bangs:]
    if body == "":
        return bangs % 2 == 1, ()
    alternatives = tuple(
        tuple(_segment(part) for part in _split(expanded)) for expanded in expand_braces(body)
    )
    return bangs % 2 == 1, alternatives


def _split(path: str) -> list[str]:
    # minimatch collapses repeated slashes.
    return re.split(r"/+", path)


def _match(file: Sequence[str], fi: int, pattern: Sequence[Segment], pi: int) -> bool:
    if pi == len(pattern):  # a path's trailing slash is left over: "a/*" matches "a/b/"
        return fi == len(file) or (fi == len(file) - 1 and file[fi] == "")
    part = pattern[pi]
    if part is _GLOBSTAR:
        if pi == len(pattern) - 1:  # a trailing ** needs at least one segment
            rest = file[fi:]
            return bool(rest) and not any(_hidden(segment) for segment in rest)
        for start in range(fi, len(file) + 1):
            if _match(file, start, pattern, pi + 1):
                return True
            if start < len(file) and _hidden(file[start]):
                return False
        return False
    if fi == len(file):
        return False
    segment = file[fi]
    hit = segment == part if isinstance(part, str) else part.fullmatch(segment) is not None
    return hit and _match(file, fi + 1, pattern, pi + 1)


def _hidden(segment: str) -> bool:
    return segment.startswith(".")


def _segment(part: str) -> Segment:
    """``None`` for ``**``, the literal text of a part without wildcards, else a regex."""
    if part == "**":
        return _GLOBSTAR
    if re.fullmatch(r"\*+", part):  # at least one character, none a leading dot
        return re.compile(r"(?!\.)[^/]+")
    regex, magic, starts_with_magic = _fragment(part)
    if not magic:
        return re.sub(r"\\(.)", r"\1", part)
    prefix = ""
    if starts_with_magic:
        prefix = r"(?!\.)"
    elif re.match(
        r"\.{1,2}(?:[*?](?!\()|\[)", part
    ):  # "." and ".." only as written, as minimatch has it
        prefix = r"(?!\.\.?\Z)"
    return re.compile(prefix + regex, re.DOTALL)


def _fragment(part: str) -> tuple[str, bool, bool]:
    """The regex of a piece of a segment, whether it has wildcards, and whether it starts
    with one."""
    regex: list[str] = []
    magic = False
    starts_with_magic = False
    index = 0
    while index < len(part):
        char = part[index]
        translated: str | None = None
        if char == "\\" and index + 1 < len(part):
            regex.append(re.escape(part[index + 1]))
            index += 2
            continue
        if char in _EXTGLOB_KINDS and part.startswith("(", index + 1):
            closing = _closing(part, index + 1, "(", ")")
            if closing != -1:
                at_start = not regex and char != "!"
                translated = _extglob(
                    char, part[index + 2 : closing], part[closing + 1 :], at_start
                )
                index = closing
                if at_start:  # each alternative guards the leading dot on its own
                    magic = True
                    regex.append(translated)
                    index += 1
                    continue
        if translated is not None:
            pass
        elif char == "*":
            translated = "[^/]*?"
        elif char == "?":
            translated = "[^/]"
        elif char == "[":
            found = _character_class(part, index)
            if found is not None:
                translated, index = found[0], found[1] - 1
        if translated is None:
            regex.append(re.escape(char))
        else:
            starts_with_magic = starts_with_magic or not regex
            magic = True
            regex.append(translated)
        index += 1
    return "".join(regex), magic, starts_with_magic


def _extglob(kind: str, body: str, tail: str, at_start: bool) -> str:
    """``?(a|b)``, ``*(…)``, ``+(…)``, ``@(…)`` (that many of the alternatives) and ``!(…)``
    (anything that, with the rest of the segment, is none of them). ``at_start``: the
    segment starts here, so an alternative starting with a wildcard matches no leading dot
    (one starting with a written dot does)."""
    choices = [_fragment(choice) for choice in _top_level_split(body, "|")]
    alternatives = "|".join(
        (r"(?!\.)" if at_start and starts_with_magic else "") + regex
        for regex, _magic, starts_with_magic in choices
    )
    if kind == "!":
        return rf"(?:(?!(?:{alternatives}){_fragment(tail)[0]}\Z)[^/]*?)"
    return f"(?:{alternatives}){_EXTGLOB_KINDS[kind]}"


def _character_class(part: str, start: int) -> tuple[str, int] | None:
    """The regex of the class opening at ``start`` and the index after it; ``None`` when the
    bracket is never closed (then it is literal)."""
    index = start + 1
    negated = index < len(part) and part[index] in "!^"
    if negated:
        index += 1
    members: list[str] = []
    first = True
    while index < len(part):
        char = part[index]
        if char == "]" and not first:
            if not members:
                return None
            return f"[{'^' if negated else ''}{''.join(members)}]", index + 1
        first = False
        if char == "[" and part.startswith("[:", index):
            end = part.find(":]", index + 2)
            name = part[index + 2 : end] if end != -1 else ""
            if name in _CLASS_NAMES:
                members.append(_CLASS_NAMES[name])
                index = end + 2
                continue
        if char == "\\" and index + 1 < len(part):
            members.append(re.escape(part[index + 1]))
            index += 2
            continue
        if char == "-" and members and index + 1 < len(part) and part[index + 1] != "]":
            members.append("-")
        else:
            members.append(re.escape(char) if char in "\\^[]" else char)
        index += 1
    return None


def expand_braces(pattern: str) -> list[str]:
    """``pattern`` with its ``{a,b}`` and ``{1..3}`` alternatives spelled out."""
    opening = _unescaped(pattern, "{", 0)
    while opening != -1:
        closing = _closing(pattern, opening)
        if closing == -1:
            return [pattern]
        inner = pattern[opening + 1 : closing]
        choices = _top_level_split(inner)
        if len(choices) == 1:
            choices = _sequence(inner) or []
        if choices:
            head, tail = pattern[:opening], pattern[closing + 1 :]
            return [
                head + choice + rest
                for alternative in choices
                for choice in expand_braces(alternative)
                for rest in expand_braces(tail)
            ]
        opening = _unescaped(pattern, "{", opening + 1)
    return [pattern]


def _unescaped(text: str, char: str, start: int) -> int:
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == char:
            return index
        index += 1
    return -1


def _closing(text: str, opening: int, open_char: str = "{", close_char: str = "}") -> int:
    depth = 0
    index = opening
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == open_char:
            depth += 1
        elif char == close_char:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def _top_level_split(text: str, separator: str = ",") -> list[str]:
    """``text`` split at each ``separator`` outside braces and parentheses."""
    parts: list[str] = []
    depth = 0
    current = ""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            current += text[index : index + 2]
            index += 2
            continue
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        if char == separator and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
        index += 1
    parts.append(current)
    return parts


def _sequence(text: str) -> list[str] | None:
    """``1..3``, ``a..c`` or ``0..10..5`` as its members; ``None`` for anything else."""
    found = _RANGE.match(text)
    if found is None:
        return None
    first, last, step_text = found.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        start, end = int(first), int(last)
        width = max(len(first), len(last)) if _padded(first) or _padded(last) else 0
        direction = 1 if end >= start else -1
        values = range(start, end + direction, step * direction)
        return [str(value).zfill(width) if width else str(value) for value in values]
    if first.isdigit() or last.isdigit():
        return None
    start, end = ord(first), ord(last)
    direction = 1 if end >= start else -1
    return [chr(value) for value in range(start, end + direction, step * direction)]


def _padded(number: str) -> bool:
    digits = number.lstrip("-")
    return len(digits) > 1 and digits.startswith("0")
