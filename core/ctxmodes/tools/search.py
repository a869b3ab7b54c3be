"""Pi's search tools: ``ls``, ``find`` and ``grep``, offered, as in Pi, only when asked for
(``--tools``, ``default_tools``): by default the model searches with ``bash``.

Their arguments, limits, result texts and notices are Pi 0.85's. ``find`` runs fd and
``grep`` runs ripgrep, as Pi's do, found where Pi finds them: the ``bin`` folder of Pi's
agent directory (where Pi puts the copies it downloads), then ``fd``/``fdfind`` and ``rg``
on ``PATH``. ctxmodes downloads nothing: without the program the call fails, saying what to
install. ``ls`` lists with Python, sorted as Pi sorts (``localeCompare`` of the lower-cased
names, through ICU as in Node).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

from pydantic import Field

from ctxmodes.compaction._js import js_length, js_prefix
from ctxmodes.session.jsvalues import js_locale_sort_key
from ctxmodes.session.paths import agent_dir
from ctxmodes.session.regular_file import kind_of
from ctxmodes.tools.base import ToolArguments, ToolContext, ToolError, ToolResult, TypedTool
from ctxmodes.tools.files import resolve_path
from ctxmodes.tools.output import DEFAULT_MAX_BYTES, format_size, truncate_head

LS_LIMIT: Final = 500
FIND_LIMIT: Final = 1000
GREP_LIMIT: Final = 100
#: Pi's cut of a long line in grep's output, in UTF-16 code units as JavaScript counts.
GREP_MAX_LINE_LENGTH: Final = 500
_UNLIMITED_LINES: Final = 2**53 - 1


def _notices(output: str, notices: list[str]) -> str:
    return f"{output}\n\n[{'. '.join(notices)}]" if notices else output


def _cut_to_limit(text: str) -> tuple[str, dict[str, Any], list[str]]:
    """``text`` cut to Pi's byte limit, with the details and notice of a cut."""
    truncation = truncate_head(text, max_lines=_UNLIMITED_LINES)
    if not truncation.truncated:
        return truncation.content, {}, []
    notice = f"{format_size(DEFAULT_MAX_BYTES)} limit reached"
    return truncation.content, {"truncation": truncation.to_details()}, [notice]


def _program(names: tuple[str, ...], own: str) -> str | None:
    """Pi's copy in its agent directory's ``bin`` (``own``), else the first of ``names`` on
    ``PATH``."""
    local = agent_dir() / "bin" / own
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return next((found for name in names if (found := shutil.which(name))), None)


class LsArguments(ToolArguments):
    path: str | None = Field(
        default=None, description="Directory to list (default: current directory)"
    )
    limit: int | None = Field(
        default=None, description="Maximum number of entries to return (default: 500)"
    )


class LsTool(TypedTool[LsArguments]):
    name = "ls"
    label = "ls"
    description = (
        "List a directory: its entries in alphabetical order, dotfiles included, a '/' after "
        f"each directory; at most {LS_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB."
    )

    def __init__(self) -> None:
        super().__init__(LsArguments)

    def run(self, args: LsArguments, context: ToolContext) -> ToolResult:
        directory = resolve_path(args.path or ".", context.cwd)
        limit = LS_LIMIT if args.limit is None else args.limit
        try:
            listed = directory.stat()
        except OSError:
            raise ToolError(f"Path not found: {directory}") from None
        if not stat.S_ISDIR(listed.st_mode):
            raise ToolError(f"Not a directory: {directory}")
        try:
            names = sorted(os.listdir(directory), key=lambda name: js_locale_sort_key(name.lower()))
        except OSError as exc:
            raise ToolError(f"Cannot read directory: {exc.strerror or exc}") from None
        entries: list[str] = []
        limited = False
        for name in names:
            if len(entries) >= limit:
                limited = True
                break
            try:
                mode = (directory / name).stat().st_mode
            except OSError:
                continue  # as Pi: an entry that cannot be looked at is left out
            entries.append(name + ("/" if stat.S_ISDIR(mode) else ""))
        if not entries:
            return ToolResult.text("(empty directory)")
        output, details, notices = _cut_to_limit("\n".join(entries))
        if limited:
            notices.insert(0, f"{limit} entries limit reached. Use limit={limit * 2} for more")
            details = {"entryLimitReached": limit, **details}  # in Pi's order
        return ToolResult.text(_notices(output, notices), details=details or None)


class FindArguments(ToolArguments):
    pattern: str = Field(
        description="Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: current directory)"
    )
    limit: int | None = Field(default=None, description="Maximum number of results (default: 1000)")


class FindTool(TypedTool[FindArguments]):
    name = "find"
    label = "find"
    description = (
        "Find files by glob pattern (fd), .gitignore respected; paths come back relative to "
        f"the directory searched, at most {FIND_LIMIT} or {DEFAULT_MAX_BYTES // 1024}KB."
    )

    def __init__(self) -> None:
        super().__init__(FindArguments)

    def run(self, args: FindArguments, context: ToolContext) -> ToolResult:
        where = resolve_path(args.path or ".", context.cwd)
        limit = FIND_LIMIT if args.limit is None else args.limit
        fd = _program(("fd", "fdfind"), "fd")
        if fd is None:
            raise ToolError("fd is not installed (the fd-find package on Debian and Ubuntu)")
        command = [fd, "--glob", "--color=never", "--hidden"]
        if not _inside_git_checkout(where):
            command.append("--no-require-git")
        command += ["--max-results", str(limit)]
        pattern = args.pattern
        if "/" in pattern:
            # fd matches a glob with a slash against the whole path.
            command.append("--full-path")
            if not pattern.startswith(("/", "**/")) and pattern != "**":
                pattern = f"**/{pattern}"
        command += ["--", pattern, str(where)]
        found, failure = _collect(command, "fd", context)
        lines = [line.removesuffix("\r").strip() for line in found]
        paths = [_relative(line, where) for line in lines if line]
        if not paths:
            if failure:
                raise ToolError(failure)
            return ToolResult.text("No files found matching pattern")
        output, details, notices = _cut_to_limit("\n".join(paths))
        if len(paths) >= limit:
            more = f"Use limit={limit * 2} for more, or refine pattern"
            notices.insert(0, f"{limit} results limit reached. {more}")
            details = {"resultLimitReached": limit, **details}
        return ToolResult.text(_notices(output, notices), details=details or None)


def _inside_git_checkout(where: Path) -> bool:
    return any((folder / ".git").exists() for folder in (where, *where.parents))


def _relative(found: str, where: Path) -> str:
    """A result of fd relative to the folder searched, with the ``/`` fd ends a folder with."""
    relative = os.path.relpath(found, where) if os.path.isabs(found) else found
    return relative + "/" if found.endswith("/") and not relative.endswith("/") else relative


@contextlib.contextmanager
def _started(
    command: list[str], name: str, context: ToolContext, stderr: int | IO[bytes]
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` (the program ``name``) running, its output on a pipe, ``stderr`` where its
    complaints go; an aborted run kills it, and it is gone when the block ends."""
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr
        )
    except OSError as exc:
        raise ToolError(f"Failed to run {name}: {exc.strerror or exc}") from None
    stop = context.signal.add_callback(process.kill)
    try:
        yield process
    finally:
        stop()
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _collect(command: list[str], name: str, context: ToolContext) -> tuple[list[str], str | None]:
    """What ``command`` (the program ``name``) prints, and why it failed (``None``: it did
    not)."""
    with _started(command, name, context, subprocess.PIPE) as process:
        out, err = process.communicate()
    context.signal.raise_if_aborted()
    lines = out.decode("utf-8", "replace").splitlines()
    if process.returncode == 0:
        return lines, None
    stderr = err.decode("utf-8", "replace").strip()
    return lines, stderr or f"{name} exited with code {process.returncode}"


class GrepArguments(ToolArguments):
    pattern: str = Field(description="Search pattern (regex or literal string)")
    path: str | None = Field(
        default=None, description="Directory or file to search (default: current directory)"
    )
    glob: str | None = Field(
        default=None, description="Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"
    )
    ignoreCase: bool | None = Field(
        default=None, description="Case-insensitive search (default: false)"
    )
    literal: bool | None = Field(
        default=None,
        description="Treat pattern as literal string instead of regex (default: false)",
    )
    context: int | None = Field(
        default=None,
        description="Number of lines to show before and after each match (default: 0)",
    )
    limit: int | None = Field(
        default=None, description="Maximum number of matches to return (default: 100)"
    )


class GrepTool(TypedTool[GrepArguments]):
    name = "grep"
    label = "grep"
    description = (
        "Search file contents for a pattern (ripgrep), .gitignore respected: matching lines "
        f"with their file and line number, at most {GREP_LIMIT} matches or "
        f"{DEFAULT_MAX_BYTES // 1024}KB, each line cut at {GREP_MAX_LINE_LENGTH} characters."
    )

    def __init__(self) -> None:
        super().__init__(GrepArguments)

    def run(self, args: GrepArguments, context: ToolContext) -> ToolResult:
        rg = _program(("rg",), "rg")
        if rg is None:
            raise ToolError("ripgrep (rg) is not installed (the ripgrep package)")
        where = resolve_path(args.path or ".", context.cwd)
        try:
            mode = where.stat().st_mode
        except OSError:
            raise ToolError(f"Path not found: {where}") from None
        is_directory = stat.S_ISDIR(mode)
        if not (is_directory or stat.S_ISREG(mode)):
            # ripgrep would read a FIFO or /dev/zero for ever.
            raise ToolError(f"Not a regular file or directory ({kind_of(mode)}): {where}")
        around = args.context if args.context and args.context > 0 else 0
        limit = max(1, GREP_LIMIT if args.limit is None else args.limit)
        command = [rg, "--json", "--line-number", "--color=never", "--hidden"]
        if args.ignoreCase:
            command.append("--ignore-case")
        if args.literal:
            command.append("--fixed-strings")
        if args.glob:
            command += ["--glob", args.glob]
        command += ["--", args.pattern, str(where)]
        matches, counted, failure = _matches(command, limit, context)
        if failure is not None:
            raise ToolError(failure)
        if not counted:
            return ToolResult.text("No matches found")
        shown = _MatchLines(where if is_directory else None)
        lines: list[str] = []
        for match in matches:
            lines += shown.block(match, around)
        output, details, notices = _cut_to_limit("\n".join(lines))
        if counted >= limit:
            more = f"Use limit={limit * 2} for more, or refine pattern"
            notices.insert(0, f"{limit} matches limit reached. {more}")
            details = {"matchLimitReached": limit, **details}
        if shown.cut:
            cut = GREP_MAX_LINE_LENGTH
            notices.append(f"Some lines truncated to {cut} chars. Use read tool to see full lines")
            details["linesTruncated"] = True
        return ToolResult.text(_notices(output, notices), details=details or None)


class _Match(NamedTuple):
    path: str
    line_number: int
    text: str | None


def _matches(
    command: list[str], limit: int, context: ToolContext
) -> tuple[list[_Match], int, str | None]:
    """The first ``limit`` matches ripgrep reports (it is stopped there), how many it
    reported (those of a file whose name is not UTF-8 count, as in Pi, but are not shown),
    and why it failed (``None``: it did not)."""
    # Its complaints go to a file: a pipe no one reads while the matches are read could fill.
    with (
        tempfile.TemporaryFile() as complaints,
        _started(command, "ripgrep", context, complaints) as process,
    ):
        found, counted = _read_matches(process, limit)
        code = process.wait()
        complaints.seek(0)
        stderr = complaints.read().decode("utf-8", "replace").strip()
    context.signal.raise_if_aborted()
    if counted < limit and code not in (0, 1):
        return found, counted, stderr or f"ripgrep exited with code {code}"
    return found, counted, None


def _read_matches(process: subprocess.Popen[bytes], limit: int) -> tuple[list[_Match], int]:
    """The first ``limit`` matches ``process`` reports (it is killed there), and how many
    it reported."""
    assert process.stdout is not None
    found: list[_Match] = []
    counted = 0
    for raw in process.stdout:
        event = _json_line(raw)
        if event is None or event.get("type") != "match":
            continue
        counted += 1
        data = event.get("data") or {}
        path = (data.get("path") or {}).get("text")
        number = data.get("line_number")
        text = (data.get("lines") or {}).get("text")
        if isinstance(path, str) and isinstance(number, int):
            found.append(_Match(path, number, text if isinstance(text, str) else None))
        if counted >= limit:
            process.kill()
            break
    return found, counted


def _json_line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class _MatchLines:
    """Pi's lines for the matches of one search: ``path:line: text`` for a match,
    ``path-line- text`` for a line of context around it."""

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._files: dict[str, list[str]] = {}
        #: Whether a line was cut at :data:`GREP_MAX_LINE_LENGTH`.
        self.cut = False

    def block(self, match: _Match, around: int) -> list[str]:
        name = self._name(match.path)
        if around == 0 and match.text is not None:
            text = match.text.replace("\r\n", "\n").replace("\r", "").removesuffix("\n")
            return [f"{name}:{match.line_number}: {self._cut(text)}"]
        lines = self._lines(match.path)
        if not lines:
            return [f"{name}:{match.line_number}: (unable to read file)"]
        first = max(1, match.line_number - around) if around else match.line_number
        last = min(len(lines), match.line_number + around) if around else match.line_number
        block = []
        for number in range(first, last + 1):
            text = self._cut(lines[number - 1].replace("\r", "") if number <= len(lines) else "")
            mark = ":" if number == match.line_number else "-"
            block.append(f"{name}{mark}{number}{mark} {text}")
        return block

    def _name(self, path: str) -> str:
        if self._directory is not None:
            relative = os.path.relpath(path, self._directory)
            if relative != "." and not relative.startswith(".."):
                return relative.replace("\\", "/")
        return os.path.basename(path)

    def _lines(self, path: str) -> list[str]:
        if path not in self._files:
            try:
                text = Path(path).read_bytes().decode("utf-8", "replace")
            except OSError:
                self._files[path] = []
            else:
                self._files[path] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return self._files[path]

    def _cut(self, line: str) -> str:
        if js_length(line) <= GREP_MAX_LINE_LENGTH:
            return line
        self.cut = True
        return js_prefix(line, GREP_MAX_LINE_LENGTH) + "... [truncated]"
