"""Internal to ctxmodes: what shows under a tool's call, laid out as Pi's renderers lay it
out before it is expanded (``core/tools/renderers`` and the fallback of its
``ToolExecutionComponent``):

* ``bash``: the output's last five rows, wrapped to the width, under a line counting the
  rows left out above them; Pi's warning when the output was cut for the model; how long
  the command took, when the call was watched as it ran;
* ``read``, ``write`` and ``edit``: nothing when they succeed (an edit's diff is printed on
  its own), their error when they fail, a read's error cut to its first ten lines;
* ``grep``, ``find`` and ``ls``: their output's first 15, 20 and 20 lines, a line counting
  the rest, and Pi's ``[Truncated: …]`` naming the limits the search reached;
* any other tool (a mode's, a plugin's): its output's first ten lines and a line counting
  the rest;
* ``write``'s call: the first ten lines of what it writes.

Pi draws each call in a box whose colour says whether it failed; the scrollback has no such
box, so an error's lines are red. The lines are rich ``Text``, wrapped as Pi's ``Text``
wraps them, to the width the caller gives: the terminal's less the two cells of the box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from rich.text import Text

from ctxmodes.tui.markdown_lines import wrap
from ctxmodes.tui.text_wrap import truncate_to_width

#: Rows of a command's output shown, counted from its end (Pi's ``BASH_PREVIEW_LINES``).
SHELL_ROWS: Final = 5
#: Lines shown of a read's error, of what a write writes and of another tool's output.
PREVIEW_LINES: Final = 10
#: Characters of those lines, of an error or of a command's output wrapped at most: more
#: than the shell tool keeps of an output. A longer text shows its first :data:`MAX_ROWS`
#: (a command's output its last part).
MAX_CHARS: Final = 64 * 1024
MAX_ROWS: Final = 100
OUTPUT: Final = "dim"
ERROR: Final = "red"
MUTED: Final = "bright_black"
KEY: Final = "dim"
WARNING: Final = "yellow"


def _rows(text: str, style: str, width: int) -> list[Text]:
    """``text`` as Pi's ``Text`` draws it at ``width``: each line wrapped at spaces, tabs as
    three spaces, nothing at all for no text (blank lines are drawn: Pi's colours make them
    text)."""
    if not text:
        return []
    return _wrap(Text(text.replace("\t", "   "), style), width)


def _wrap(text: Text, width: int) -> list[Text]:
    return wrap(text, max(1, width), coloured=True)


def count_hint(count: int, what: str, expand: str | None) -> Text:
    """Pi's count of what the key shows: ``... (3 more lines, ctrl+o to expand)``, coloured
    in its parts as Pi colours them (where they change decides where it wraps)."""
    if expand is None:
        return Text(f"... ({count} {what})", MUTED)
    return Text.assemble((f"... ({count} {what},", MUTED), " ", *_key(expand), (")", MUTED))


def _key(expand: str) -> list[tuple[str, str]]:
    """Pi's ``keyHint``: its key dim, then its words."""
    key, _, words = expand.partition(" ")
    return [(key, KEY), (f" {words}", MUTED)]


def _first_lines(
    lines: list[str],
    style: str,
    expand: str | None,
    width: int,
    total: str = "",
    shown: int = PREVIEW_LINES,
) -> list[Text]:
    """The first ``shown`` of ``lines``, then how many more (``total``: what follows the
    count, as a write's ``, 40 total``)."""
    rows = _head_rows("\n".join(lines[:shown]), style, expand, width)
    if len(lines) > shown:
        more = count_hint(len(lines) - shown, f"more lines{total}", expand)
        rows.extend(_wrap(more, width))
    return rows


def _head_rows(text: str, style: str, expand: str | None, width: int) -> list[Text]:
    """``text``'s rows, as Pi draws them up to :data:`MAX_CHARS` characters. A longer text
    (a note of a megabyte read whole, a hostile result) would take seconds to wrap and fill
    the scrollback with thousands of rows: its first :data:`MAX_ROWS` show, then a line
    saying it was cut."""
    if len(text) <= MAX_CHARS:
        return _rows(text, style, width)
    rows = _rows(text[: MAX_ROWS * max(1, width)], style, width)[:MAX_ROWS]
    if expand is None:
        return [*rows, Text("... (cut here)", MUTED)]
    return [*rows, Text.assemble(("... (cut here,", MUTED), " ", *_key(expand), (")", MUTED))]


def _without_trailing_blanks(text: str) -> list[str]:
    lines = text.replace("\t", "   ").split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _shell(
    text: str,
    details: Mapping[str, object],
    style: str,
    expand: str | None,
    width: int,
    earlier_lines: int,
) -> list[Text]:
    """A command's rows, its output's in ``style``; ``earlier_lines`` lines of it came
    before ``text``."""
    output = text.strip()
    truncation = details.get("truncation")
    cut = isinstance(truncation, Mapping) and bool(truncation.get("truncated"))
    full_path = details.get("fullOutputPath")
    if cut and isinstance(full_path, str) and full_path and output.endswith("]"):
        # The notice the model reads says where the rest is; the warning below says it here.
        footer = output.rfind("\n\n[")
        if footer != -1 and full_path in output[footer:]:
            output = output[:footer].rstrip()
    rows: list[Text] = []
    if output:
        # Past what the shell tool keeps (a session file may hold anything), the lines
        # before the last part are counted as a row each, never wrapped.
        head, tail = output[:-MAX_CHARS], output[-MAX_CHARS:]
        earlier_lines += head.count("\n")  # the line it cuts is the tail's first
        wrapped = _rows(tail, style, width)
        skipped = len(wrapped) - SHELL_ROWS + earlier_lines
        if skipped > 0:
            hint = count_hint(skipped, "earlier lines", expand)
            fitting = truncate_to_width(hint.plain, width, "...")
            rows.append(hint if fitting == hint.plain else Text(fitting, MUTED))
        rows.extend(wrapped[-SHELL_ROWS:])
    warnings = []
    if isinstance(full_path, str) and full_path:
        warnings.append(f"Full output: {full_path}")
    if cut and isinstance(truncation, Mapping):
        shown, total = truncation.get("outputLines"), truncation.get("totalLines")
        if truncation.get("truncatedBy") == "lines":
            warnings.append(f"Truncated: showing {shown} of {total} lines")
        else:
            warnings.append(f"Truncated: {shown} lines shown ({_byte_limit(truncation)} limit)")
    if warnings:
        rows.extend(_rows(f"[{'. '.join(warnings)}]", WARNING, width))
    return rows


#: Lines of a search's result shown, and the detail and words of the limit it may reach.
_SEARCHES: Final[Mapping[str, tuple[int, str, str]]] = {
    "grep": (15, "matchLimitReached", "matches limit"),
    "find": (20, "resultLimitReached", "results limit"),
    "ls": (20, "entryLimitReached", "entries limit"),
}


def _search(
    name: str, text: str, details: Mapping[str, object], style: str, expand: str | None, width: int
) -> list[Text]:
    shown, limit_key, limit_words = _SEARCHES[name]
    output = text.strip()
    rows = _first_lines(output.split("\n"), style, expand, width, shown=shown) if output else []
    warnings = []
    limit = details.get(limit_key)
    if limit:
        warnings.append(f"{limit} {limit_words}")
    truncation = details.get("truncation")
    if isinstance(truncation, Mapping) and truncation.get("truncated"):
        warnings.append(f"{_byte_limit(truncation)} limit")
    if name == "grep" and details.get("linesTruncated"):
        warnings.append("some lines truncated")
    if warnings:
        rows.extend(_rows(f"[Truncated: {', '.join(warnings)}]", WARNING, width))
    return rows


def _byte_limit(truncation: Mapping[str, object]) -> str:
    """The size a result was cut to, as Pi writes it (``50.0KB``)."""
    # The tools load at the first output cut by its size, not with the terminal.
    from ctxmodes.tools.output import DEFAULT_MAX_BYTES, format_size

    return format_size(_int(truncation.get("maxBytes"), DEFAULT_MAX_BYTES))


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) else default


#: How a failed call of each of these tools shows its error; they show nothing on success.
_ERRORS: Final[Mapping[str, Callable[[str, str | None, int], list[Text]]]] = {
    "read": lambda text, expand, width: _first_lines(
        _without_trailing_blanks(text), ERROR, expand, width
    ),
    "write": lambda text, expand, width: _head_rows(text, ERROR, expand, width),
    # Pi's edit draws its error in a box of its own, a cell further in on each side.
    "edit": lambda text, expand, width: _head_rows(text, ERROR, expand, width - 2),
}


def result_rows(
    name: str,
    text: str,
    details: object,
    is_error: bool,
    width: int,
    expand: str | None,
    earlier_lines: int = 0,
) -> list[Text]:
    """The rows under tool ``name``'s call for its result ``text`` (``details`` its Pi
    details), ``expand`` the hint of the key that shows it whole (``None``: no key does);
    ``earlier_lines``: lines of a command's output before ``text``, counted a row each (a
    command still running, whose last part alone is drawn at each update)."""
    style = ERROR if is_error else OUTPUT
    if name == "bash":
        known = details if isinstance(details, Mapping) else {}
        return _shell(text, known, style, expand, width, earlier_lines)
    if name in _ERRORS:
        return _ERRORS[name](text, expand, width) if is_error else []
    if name in _SEARCHES:
        known = details if isinstance(details, Mapping) else {}
        return _search(name, text, known, style, expand, width)
    return _first_lines(text.replace("\t", "   ").split("\n"), style, expand, width)


def took(seconds: float) -> Text:
    """How long a command ran, as Pi says it: ``Took 1.2s``."""
    return Text(f"Took {seconds:.1f}s", MUTED)


def write_rows(arguments: Mapping[str, object], width: int, expand: str | None) -> list[Text]:
    """Under a ``write`` call: the first lines of what it writes, then how many more and in
    all; Pi's ``[invalid content arg - expected string]`` when the content is no text."""
    content = arguments.get("content")
    if content is None or content == "":
        return []
    if not isinstance(content, str):
        return [Text("[invalid content arg - expected string]", ERROR)]
    lines = _without_trailing_blanks(content.replace("\r", ""))
    return _first_lines(lines, OUTPUT, expand, width, f", {len(lines)} total")


#: Lines of a ``!`` command's output shown, counted from its end (Pi's ``PREVIEW_LINES`` of
#: its ``BashExecutionComponent``).
COMMAND_ROWS: Final = 20


def command_rows(
    output: str,
    exit_code: float | None,
    cancelled: bool,
    full_output_path: str | None,
    expand: str | None,
    width: int,
) -> list[Text]:
    """Under a ``!`` command the user ran: the last :data:`COMMAND_ROWS` rows of its output,
    then how many lines were left out, whether it was cancelled or failed, and where the
    full output is when it was cut; ``full_output_path`` is set only when it was."""
    lines = output.replace("\r\n", "\n").replace("\r", "\n").split("\n") if output else []
    shown = lines[-COMMAND_ROWS:]
    rows = _rows("\n" + "\n".join(shown), MUTED, width)[-COMMAND_ROWS:] if lines else []
    status: list[Text] = []
    if len(lines) > len(shown):
        more = f"... {len(lines) - len(shown)} more lines"
        hint = Text(more, MUTED)
        if expand is not None:
            hint = Text.assemble((f"{more} (", MUTED), *_key(expand), (")", MUTED))
        status.extend(_wrap(hint, width))
    if cancelled:
        status.extend(_rows("(cancelled)", WARNING, width))
    elif exit_code not in (0, None):
        status.extend(_rows(f"(exit {exit_code:g})", ERROR, width))
    if full_output_path:
        where = f"Output truncated. Full output: {full_output_path}"
        status.extend(_rows(where, WARNING, width))
    return [*rows, Text(), *status] if status else rows
