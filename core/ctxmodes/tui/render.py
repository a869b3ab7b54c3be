"""What the transcript prints for each finished thing, as ANSI text for the scrollback.

Pure functions of their inputs (and the terminal width), so they are tested without a
terminal. Markdown is laid out as Pi lays it out; everything else is a short styled line.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.text import Text

from ctxmodes.tui import tool_results
from ctxmodes.tui.markdown_lines import markdown_lines, wrap
from ctxmodes.tui.tool_calls import call_text, compact_read

if TYPE_CHECKING:
    from ctxmodes.hostapi import NotifyLevel
    from ctxmodes.sdk.events import RetryEnded
    from ctxmodes.session.models import AssistantMessage, BashExecutionMessage, CompactionEntry

#: Tool arguments and results are cut to this many characters on their one line.
TOOL_LINE_CHARS: Final = 100
_NOTICE_STYLES: Final = {"info": "dim", "warning": "yellow", "error": "bold red"}
_SAID_PREFIXES: Final = {"warning": "Warning: ", "error": "Error: "}


def one_line(text: str, limit: int = TOOL_LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@lru_cache(maxsize=8)
def _console(width: int) -> Console:
    return Console(
        file=io.StringIO(),
        force_terminal=True,
        color_system="standard",
        width=max(20, width),
        highlight=False,
        emoji=False,
    )


def _ansi(renderable: object, width: int) -> str:
    console = _console(width)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get().rstrip("\n")


def styled(text: str, style: str, width: int) -> str:
    """``text`` (taken literally, never as markup, never obeyed) in a rich style."""
    return _ansi(Text(printable(text), style=style), width)


def user_prompt(text: str, width: int, image_types: Sequence[str] = ()) -> str:
    """A prompt after an arrow, bold, laid out as Pi lays out what the user typed (Markdown,
    its list markers and backslash escapes as typed), and under it an ``[image <type>]``
    line for each image attached to it."""
    lines = markdown_lines(_shown(text), max(1, width - 2), as_typed=True, style="bold")
    lines = lines or [Text()]
    arrow = Text("\u203a ", style="bold cyan")
    prompt = [arrow + lines[0], *(Text("  ") + line for line in lines[1:])]
    for row in prompt:
        row.rstrip()
    marks = [Text(f"  [image {mime_type}]", style="dim") for mime_type in image_types]
    return _laid_out([*prompt, *marks], width)


def prompt_blocks(
    text: str, width: int, image_types: Sequence[str], expand: str | None
) -> tuple[list[str], tuple[str, str] | None]:
    """A prompt as Pi shows it, after a blank line that sets its turn apart from the one
    before: one a skill command became as the skill's line, ``[skill] name``, collapsed
    (``expand`` names the key that shows it), then the message typed after the command; any
    other as :func:`user_prompt`. With the blocks, what the key shows, as (name, text), for
    a skill's."""
    from ctxmodes.resources.skills import parse_skill_block

    skill = parse_skill_block(text)
    if skill is None:
        return ["", user_prompt(text, width, image_types)], None
    hint = Text(f" ({expand})", style="dim") if expand is not None else Text()
    line = _ansi(Text("[skill] ", style="bold magenta") + Text(printable(skill.name)) + hint, width)
    blocks = ["", line]
    if skill.user_message is not None or image_types:
        blocks.append(user_prompt(skill.user_message or "", width, image_types))
    return blocks, (f"skill {skill.name}", skill.content)


def assistant_reply(
    message: AssistantMessage, width: int, *, show_thinking: bool = False
) -> str | None:
    """The reply as Markdown, its thinking collapsed to one line (or in full with
    ``show_thinking``); ``None`` when empty."""
    from ctxmodes.session.models import TextContent, ThinkingContent

    parts: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingContent) and block.thinking:
            if show_thinking and block.thinking.strip():
                parts.append(thinking_text(block.thinking, width))
            else:
                parts.append(thinking_line(len(block.thinking), width))
        elif isinstance(block, TextContent) and block.text.strip():
            parts.append(markdown(block.text, width))
    return "\n".join(parts) if parts else None


def thinking_line(characters: int, width: int) -> str:
    return styled(f"▸ thinking ({characters} characters)", "dim", width)


def thinking_text(text: str, width: int) -> str:
    """Thinking shown in full (Ctrl+T): Markdown, as Pi shows it, dim and italic."""
    return styled("▾ thinking", "dim", width) + "\n" + markdown(text.strip(), width, "dim italic")


def markdown(text: str, width: int, style: str = "") -> str:
    """``text`` rendered as Markdown, laid out as Pi lays out a reply
    (:mod:`ctxmodes.tui.markdown_lines`), ``style`` under its own styles: Pi's default text
    style for it (thinking's, a plugin message's), which also decides where it wraps."""
    lines = markdown_lines(_shown(text), width, style=style)
    for line in lines:
        line.stylize_before(style)
    return _laid_out(lines, width)


def _shown(text: str) -> str:
    """``text`` :func:`printable`, a tab three spaces as Pi's text components draw it."""
    return printable(text.replace("\t", "   "))


def _laid_out(lines: Sequence[Text], width: int) -> str:
    """``lines``, already laid out to ``width``, as they are: never wrapped again."""
    console = _console(width)
    with console.capture() as capture:
        console.print(Text("\n").join(lines), no_wrap=True, overflow="ignore", crop=False)
    return capture.get().rstrip("\n")


def tool_call(
    name: str,
    arguments: dict[str, object],
    width: int,
    expand: str | None,
    cwd: Path | None = None,
) -> str:
    """A tool call on one line: for the core's tools Pi's words for it (``$ make test``,
    ``read ~/app/main.py:10-29``), its first line and at most :data:`TOOL_LINE_CHARS`
    characters of it; for any other, its name and its arguments as JSON. Under a ``write``,
    the first lines of what it writes (``expand`` as :func:`tool_result` takes it). A read of
    a skill or of a project's instructions (a path from ``cwd``) in Pi's short words for it,
    with the key that shows what it read."""
    arrow = Text("→ ", style="cyan")
    compact = compact_read(arguments, cwd) if name == "read" and cwd is not None else None
    if compact is not None:
        key = Text(f" ({expand})", style="dim") if expand is not None else Text()
        return _ansi(arrow + Text(printable(compact), style="bold") + key, width)
    described = call_text(name, arguments)
    if described is None:
        shown = printable(json.dumps(arguments, ensure_ascii=False))
        line = arrow + Text(printable(name), style="bold") + Text(f" {one_line(shown)}", "dim")
        return _ansi(line, width)
    first, _, rest = printable(described).partition("\n")
    shown = first + (" …" if rest.strip() else "")
    if len(shown) > TOOL_LINE_CHARS:
        shown = shown[: TOOL_LINE_CHARS - 1] + "…"
    call = _ansi(arrow + Text(shown, style="bold"), width)
    if name != "write":
        return call
    content = arguments.get("content")
    written = {"content": _shown(content) if isinstance(content, str) else content}
    rows = tool_results.write_rows(written, width - len(_UNDER_CALL), expand)
    return "\n".join([call, _under_call(rows, width)]) if rows else call


#: What starts each row under a call: Pi's box leaves its content as far in.
_UNDER_CALL: Final = "  "


def _under_call(rows: Sequence[Text], width: int) -> str:
    return _laid_out([Text(_UNDER_CALL) + row for row in rows], width)


def tool_result(
    name: str,
    text: str,
    details: object,
    is_error: bool,
    width: int,
    expand: str | None,
    seconds: float | None = None,
) -> str | None:
    """What shows under a call of tool ``name`` once it finished, as Pi shows it before it
    is expanded (:mod:`ctxmodes.tui.tool_results`): ``details`` its result's Pi details,
    ``expand`` Pi's hint of the key that shows it whole (``None``: no key does, as for a
    result replayed from the session file), ``seconds`` how long a command ran when it was
    watched; ``None`` when nothing shows (a read that succeeded)."""
    room = width - len(_UNDER_CALL)
    rows = tool_results.result_rows(name, _shown(text), details, is_error, room, expand)
    if name == "bash" and seconds is not None:
        rows.append(tool_results.took(seconds))
    return _under_call(rows, width) if rows else None


def tool_diff(diff: str, width: int, rows: int, expand: str) -> str:
    """An edit's display diff (Pi's ``details.diff``): added lines green, removed red, at most
    ``rows`` of them with Pi's line saying how many more the key in ``expand`` shows."""
    lines = diff.split("\n")
    shown = Text()
    for line in lines[:rows]:
        style = {"+": "green", "-": "red"}.get(line[:1], "dim")
        shown.append("    " + printable(line) + "\n", style=style)
    if len(lines) > rows:
        more = tool_results.count_hint(len(lines) - rows, "more lines", expand).plain
        shown.append(f"    {more}\n", style="dim")
    return _ansi(shown, width).rstrip("\n")


#: Control characters that what a model, a tool or a command wrote may carry and that must
#: not reach the terminal as such (cursor moves, colours, titles, the clipboard, bells,
#: carriage returns that would overwrite the live region).
_CONTROL: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, links, the clipboard
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 and C1 controls (0x9b starts a CSI too)
)


def printable(text: str) -> str:
    """``text`` as a terminal would leave it on screen, without its escape sequences: a
    carriage return starts its line over (progress bars), other control characters go, tabs
    become spaces. Everything the transcript prints of what a model, a tool, a command or a
    session wrote goes through here: shown, never obeyed."""
    lines = (line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROL.sub("", "\n".join(lines).expandtabs(4))


def shell_command(message: BashExecutionMessage, width: int, expand: str | None) -> str:
    """A ``!`` command as Pi draws it: between two rules, the command, then the last rows
    of its output and how it ended (:func:`ctxmodes.tui.tool_results.command_rows`);
    ``expand`` as :func:`tool_result` takes it."""
    note = " (not sent to the model)" if message.exclude_from_context else ""
    rule = Text("─" * max(1, width), style="dim")
    head = Text(f"$ {_shown(message.command)}", style="bold") + Text(note, style="dim")
    rows = tool_results.command_rows(
        _shown(message.output),
        message.exit_code,
        message.cancelled,
        message.full_output_path if message.truncated else None,
        expand,
        width - 2,
    )
    body = [Text(" ") + row for row in [*wrap(head, max(1, width - 2)), *rows]]
    return _laid_out([rule, *body, rule], width)


def full_output(name: str, text: str, width: int) -> str:
    title = Text(f"── {printable(name)} output ──\n", style="dim")
    return _ansi(title + Text(printable(text)), width)


def custom_message(custom_type: str, text: str, width: int) -> str:
    """A plugin's message shown in the session: its type, then its text as Markdown, whole,
    as Pi shows one."""
    label = styled(f"[{custom_type}]", "bold magenta", width)
    return f"{label}\n{markdown(text, width, 'default')}" if text.strip() else label


def notice(message: str, level: NotifyLevel, width: int) -> str:
    return styled(message, _NOTICE_STYLES.get(level, "dim"), width)


def said(message: str, level: NotifyLevel, width: int) -> str:
    """A notice for the user as Pi shows one (its ``showError`` and ``showWarning``): an
    error is ``Error: …``, a warning ``Warning: …``."""
    return notice(f"{_SAID_PREFIXES.get(level, '')}{message}", level, width)


def retry_failure(event: RetryEnded) -> str:
    """A retry series that failed, in Pi's words: ``Retry failed after 3 attempts: …`` (one
    that was never retried says only its error)."""
    error = event.error or "Unknown error"
    if event.attempt == 0:
        return error
    return f"Retry failed after {event.attempt} attempts: {error}"


def window_line(number: int, after_compaction: bool, width: int, expand: str | None = None) -> str:
    """A new context window; ``expand``: Pi's hint of the key that shows the summary of the
    window archived."""
    why = "after compaction" if after_compaction else "previous window archived"
    hint = f" ({expand})" if expand is not None else ""
    return styled(f"── context window {number} — {why}{hint}", "bold magenta", width)


def compaction_text(entry: CompactionEntry) -> str:
    """Pi's words for a compaction: ``Compacted from 12,345 tokens``."""
    return f"Compacted from {entry.tokens_before:,} tokens"


def compaction_line(entry: CompactionEntry, width: int, expand: str | None) -> str:
    """A compaction in the transcript, as Pi words it, with Pi's hint of the key that
    shows its summary (``None``: no key shows it, as for one replayed)."""
    hint = f" ({expand})" if expand is not None else ""
    return styled(f"• {compaction_text(entry)}{hint}", "magenta", width)


def reply_ending(message: AssistantMessage, width: int) -> str | None:
    """How a reply that did not finish ended, in Pi's words, after what it wrote: cut at
    the model's length limit, stopped (``Operation aborted``, or why it was), or failed
    (``Error: ...``); ``None`` for a reply that finished, and for one that called tools,
    whose calls show how they ended."""
    from ctxmodes.session.models import ToolCall

    if message.stop_reason == "length":
        return styled("Response was truncated before completion.", "red", width)
    if any(isinstance(block, ToolCall) for block in message.content):
        return None
    error = message.error_message
    if message.stop_reason == "aborted":
        stopped = error if error and error != "Request was aborted" else "Operation aborted"
        return styled(stopped, "red", width)
    if message.stop_reason == "error":
        return styled(f"Error: {error or 'Unknown error'}", "red", width)
    return None


def live_tail(text: str, width: int, rows: int) -> str:
    """The last ``rows`` screen rows of ``text`` wrapped at ``width`` columns, as lines: what
    the live region shows of a streaming reply. What it wraps depends on the rows and the
    width, not on the length of the reply."""
    width = max(1, width)
    cut = len(text) - rows * width
    start = 0
    if cut > 0:
        # Rows start where a line starts, then every ``width`` columns: begin at one of them
        # (finding the line's start is one C-speed scan back, never Python work per character).
        line_start = text.rfind("\n", 0, cut) + 1
        start = line_start + (cut - line_start) // width * width
    shown: list[str] = []
    for line in reversed(text[start:].splitlines()):
        shown[:0] = _wrapped(line, width)
        if len(shown) >= rows:
            break
    return "\n".join(shown[-rows:])


def _wrapped(line: str, width: int) -> list[str]:
    if line.isascii():
        return [line[i : i + width] for i in range(0, len(line), width)] or [""]
    from prompt_toolkit.utils import get_cwidth

    pieces: list[str] = []
    begin = used = 0
    for index, char in enumerate(line):
        size = get_cwidth(char)
        if used + size > width:
            pieces.append(line[begin:index])
            begin, used = index, 0
        used += size
    pieces.append(line[begin:])
    return pieces
