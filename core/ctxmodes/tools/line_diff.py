"""Line diffs exactly as Pi's ``edit`` reports them.

Pi builds its ``patch`` with the ``diff`` package (jsdiff 8) and its display ``diff`` from the
same package's line diff. Python's ``difflib`` picks different (equally minimal) hunks, so
the ``details`` of an edit would differ from Pi's on the same file; this module follows
jsdiff's Myers variant — its diagonal order, tie-breaking and pruning — so the two agree
line for line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"(\n|\r\n)")


@dataclass(slots=True)
class Change:
    """One run of the diff: ``count`` lines kept, added or removed, and their text."""

    count: int
    added: bool
    removed: bool
    value: str = ""
    lines: list[str] | None = None


@dataclass(slots=True)
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None


@dataclass(slots=True)
class _Path:
    old_pos: int
    last: _Component | None


def tokenize_lines(text: str) -> list[str]:
    """Lines with their endings (jsdiff's line tokens); no empty tokens."""
    parts = _LINE_BREAK.split(text)
    if not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    return [token for token in tokens if token]


def diff_lines(old: str, new: str) -> list[Change]:
    """jsdiff's ``diffLines(old, new)``: kept, removed and added runs in order."""
    old_tokens, new_tokens = tokenize_lines(old), tokenize_lines(new)
    return _diff_tokens(old_tokens, new_tokens)


def _add_to_path(path: _Path, added: bool, removed: bool, old_inc: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        component = _Component(last.count + 1, added, removed, last.previous)
    else:
        component = _Component(1, added, removed, last)
    return _Path(path.old_pos + old_inc, component)


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while (
        new_pos + 1 < len(new) and old_pos + 1 < len(old) and old[old_pos + 1] == new[new_pos + 1]
    ):
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _diff_tokens(old: list[str], new: list[str]) -> list[Change]:
    new_len, old_len = len(new), len(old)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    start = best[0]
    assert start is not None
    new_pos = _extract_common(start, new, old, 0)
    if start.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(start.last, new, old)
    min_diagonal: float = float("-inf")
    max_diagonal: float = float("inf")
    edit_length = 1
    while edit_length <= new_len + old_len:
        diagonal = int(max(min_diagonal, -edit_length))
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = False
            if add_path is not None:
                add_new_pos = add_path.old_pos - diagonal
                can_add = 0 <= add_new_pos < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            if not can_remove or (
                can_add
                and remove_path is not None
                and add_path is not None
                and remove_path.old_pos < add_path.old_pos
            ):
                assert add_path is not None
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("the edit graph always has a path")  # pragma: no cover


def _build_values(last: _Component | None, new: list[str], old: list[str]) -> list[Change]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    changes: list[Change] = []
    new_pos = old_pos = 0
    for component in components:
        change = Change(component.count, component.added, component.removed)
        if not component.removed:
            change.value = "".join(new[new_pos : new_pos + component.count])
            new_pos += component.count
            if not component.added:
                old_pos += component.count
        else:
            change.value = "".join(old[old_pos : old_pos + component.count])
            old_pos += component.count
        changes.append(change)
    return changes


def _split_keeping_newlines(text: str) -> list[str]:
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] = lines[-1][:-1]
    return lines


def unified_patch(path: str, old: str, new: str, context: int = 4) -> str:
    """jsdiff's ``createTwoFilesPatch(path, path, old, new)`` with file headers only."""
    changes = diff_lines(old, new)
    changes.append(Change(0, False, False, "", []))
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_start = new_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, change in enumerate(changes):
        lines = _split_keeping_newlines(change.value) if change.lines is None else change.lines
        change.lines = lines
        if change.added or change.removed:
            if not old_start:
                old_start, new_start = old_line, new_line
                if index > 0:
                    previous = changes[index - 1].lines or []
                    current = [" " + line for line in previous[-context:]] if context > 0 else []
                    old_start -= len(current)
                    new_start -= len(current)
            sign = "+" if change.added else "-"
            current.extend(sign + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
            continue
        if old_start:
            if len(lines) <= context * 2 and index < len(changes) - 2:
                current.extend(" " + line for line in lines)
            else:
                size = min(len(lines), context)
                current.extend(" " + line for line in lines[:size])
                hunks.append(
                    (
                        old_start,
                        old_line - old_start + size,
                        new_start,
                        new_line - new_start + size,
                        current,
                    )
                )
                old_start = new_start = 0
                current = []
        old_line += len(lines)
        new_line += len(lines)
    out = [f"--- {path}", f"+++ {path}"]
    for o_start, o_lines, n_start, n_lines, hunk_lines in hunks:
        shown_old = o_start - 1 if o_lines == 0 else o_start
        shown_new = n_start - 1 if n_lines == 0 else n_start
        out.append(f"@@ -{shown_old},{o_lines} +{shown_new},{n_lines} @@")
        for line in hunk_lines:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out.extend((line, "\\ No newline at end of file"))
    return "\n".join(out) + "\n"


def display_diff(old: str, new: str, context: int = 4) -> tuple[str, int | None]:
    """Pi's numbered display diff of an edit and the first changed line of the new text."""
    changes = diff_lines(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    blank = " " * width
    output: list[str] = []
    old_number = new_number = 1
    last_was_change = False
    first_changed: int | None = None

    def keep(lines: list[str]) -> None:
        nonlocal old_number, new_number
        for line in lines:
            output.append(f" {str(old_number).rjust(width)} {line}")
            old_number += 1
            new_number += 1

    def skip(count: int) -> None:
        nonlocal old_number, new_number
        output.append(f" {blank} ...")
        old_number += count
        new_number += count

    for index, change in enumerate(changes):
        raw = change.value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if change.added or change.removed:
            if first_changed is None:
                first_changed = new_number
            for line in raw:
                if change.added:
                    output.append(f"+{str(new_number).rjust(width)} {line}")
                    new_number += 1
                else:
                    output.append(f"-{str(old_number).rjust(width)} {line}")
                    old_number += 1
            last_was_change = True
            continue
        next_is_change = index < len(changes) - 1 and (
            changes[index + 1].added or changes[index + 1].removed
        )
        if last_was_change and next_is_change:
            if len(raw) <= context * 2:
                keep(raw)
            else:
                keep(raw[:context])
                skip(len(raw) - 2 * context)
                keep(raw[len(raw) - context :])
        elif last_was_change:
            keep(raw[:context])
            if len(raw) > context:
                skip(len(raw) - context)
        elif next_is_change:
            skipped = max(0, len(raw) - context)
            if skipped:
                skip(skipped)
            keep(raw[skipped:])
        else:
            old_number += len(raw)
            new_number += len(raw)
        last_was_change = False
    return "\n".join(output), first_changed
