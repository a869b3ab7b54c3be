"""The live region's content: the reply streaming now, its thinking, the running tool and the
queued messages. Finished blocks of the reply leave it for the scrollback as they complete;
only the unfinished tail is ever drawn."""

from __future__ import annotations

import time
from typing import Final

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.session.models import AssistantMessage
from ctxmodes.tui import render, tool_results
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.streaming import BlockSplitter

#: Lines of the streaming reply kept in the live region (the rest is printed when done).
LIVE_LINES: Final = 12
#: Rows of a running tool's output shown under it (a command's are shown as its result will
#: show them); Ctrl+O shows all of it once the call is done.
TOOL_OUTPUT_ROWS: Final = 8
#: Rows of streaming thinking shown while thinking is expanded (Ctrl+T).
THINKING_ROWS: Final = 6


class LiveRegion:
    def __init__(self) -> None:
        #: The reply streaming now (its tail is what the live region shows).
        self.text = ""
        #: The thinking streamed for this reply (while collapsed, only its length is shown).
        self.thinking_text = ""
        #: Ctrl+T: thinking is shown in full rather than as a one-line count.
        self.show_thinking = False
        self.running_tool: str | None = None
        #: What the running tool printed so far (its last update).
        self.tool_output = ""
        #: When the running tool started (``time.monotonic``), and Pi's hint of the key
        #: that shows a result whole, for a command's rows.
        self.tool_started_at = 0.0
        self._expand: str | None = None
        self.queued: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        #: ``!`` commands typed while the agent works: they run beside it, and are shown
        #: among the queued messages until the host records them when its run ends.
        self.shell_beside: list[str] = []
        #: Where the unfinished block of the streaming reply starts (the blocks before it
        #: are in the scrollback already).
        self._splitter = BlockSplitter()
        self._thinking_printed = False
        #: (reply, width, its tail) of the last frame.
        self._tail_cache: tuple[str, int, str] = ("", -1, "")
        self._tool_tail_cache: tuple[str, int, str] = ("", -1, "")

    def reset(self) -> None:
        """A new reply starts (or the last one ended): nothing of it is shown."""
        self.text, self.thinking_text = "", ""
        self._splitter = BlockSplitter()
        self._thinking_printed = False

    @property
    def thinking(self) -> int:
        """Characters of thinking streamed for this reply."""
        return len(self.thinking_text)

    def add_thinking(self, text: str) -> None:
        self.thinking_text += text

    def tool_started(self, name: str, expand: str | None = None) -> None:
        self.running_tool, self.tool_output = name, ""
        self.tool_started_at, self._expand = time.monotonic(), expand

    def tool_ended(self) -> None:
        self.running_tool, self.tool_output = None, ""

    def add_text(self, text: str, width: int) -> list[str]:
        """Stream ``text`` in; the blocks it completes, rendered for the scrollback."""
        self.text += text
        return [self._finished_block(block, width) for block in self._splitter.finished(self.text)]

    def _finished_block(self, block: str, width: int) -> str:
        """A block of the streaming reply, for the scrollback (the thinking line first)."""
        parts = []
        if self.thinking and not self._thinking_printed:
            parts.append(self._thinking_block(width))
        self._thinking_printed = True
        parts.append(render.markdown(block, width) + "\n")
        return "\n".join(parts)

    def _thinking_block(self, width: int) -> str:
        if self.show_thinking and self.thinking_text.strip():
            return render.thinking_text(self.thinking_text, width)
        return render.thinking_line(self.thinking, width)

    def rest_of_reply(self, message: AssistantMessage, width: int) -> str | None:
        """What the scrollback still lacks of a finished reply: all of it, or, when blocks
        of it were printed as they streamed, what streamed after them. The streamed text is
        what was printed, so the rest is taken from it: a reply of several text parts joins
        them differently from its deltas, and must not be printed a second time."""
        streamed = self._splitter.block_start
        if not streamed:
            return render.assistant_reply(message, width, show_thinking=self.show_thinking)
        rest = self.text[streamed:]
        return render.markdown(rest, width) if rest.strip() else None

    def shows_reply(self) -> bool:
        return bool(self.text or self.thinking or self.running_tool)

    def shows_queue(self) -> bool:
        return bool(self.queued[0] or self.queued[1] or self.shell_beside)

    def fragments(self, width: int) -> StyleAndTextTuples:
        parts: StyleAndTextTuples = []
        if self.thinking and self.show_thinking and not self.text:
            shown = render.live_tail(self.thinking_text, width, THINKING_ROWS)
            parts.append(("class:live.dim", f"▾ thinking\n{shown}\n"))
        elif self.thinking:
            parts.append(("class:live.dim", f"▸ thinking… ({self.thinking} characters)\n"))
        if self.text:
            parts.append(("class:live", self._tail(width) + "\n"))
        if self.running_tool:
            parts.append(("class:live.dim", f"⋯ running {self.running_tool}\n"))
            if self.running_tool == "bash":
                parts.extend(self._command_rows(width))
            elif self.tool_output:
                parts.append(("class:live.output", self._tool_tail(width) + "\n"))
        return parts

    def _command_rows(self, width: int) -> StyleAndTextTuples:
        """A running command's rows as its result will show them once it ends (Pi's
        layout), and how long it has run, as Pi counts it: ``Elapsed 3.0s``."""
        output = self.tool_output
        cached_output, cached_width, rows = self._tool_tail_cache
        if cached_output is not output or cached_width != width:
            # Only the end can reach the rows shown: the lines before it are counted, never
            # cleaned or wrapped.
            start = max(0, len(output) - tool_results.SHELL_ROWS * width * 4)
            recent = render.printable(output[start:])
            earlier = output.count("\n", 0, start)
            shown = tool_results.result_rows(
                "bash", recent, {}, False, width - 2, self._expand, earlier
            )
            rows = "".join(f"  {row.plain}\n" for row in shown)
            self._tool_tail_cache = (output, width, rows)
        elapsed = time.monotonic() - self.tool_started_at
        return [("class:live.output", rows), ("class:live.dim", f"  Elapsed {elapsed:.1f}s\n")]

    def _tool_tail(self, width: int) -> str:
        """The last :data:`TOOL_OUTPUT_ROWS` rows of the running tool's output, indented;
        cached like the reply's tail (a command may print far more often than keys redraw)."""
        output = self.tool_output
        cached_output, cached_width, tail = self._tool_tail_cache
        if cached_output is not output or cached_width != width:
            inner = max(1, width - 4)
            # Only the end of the output can reach the shown rows: never clean all of it.
            recent = output[-TOOL_OUTPUT_ROWS * inner * 4 :]
            rows = render.live_tail(render.printable(recent), inner, TOOL_OUTPUT_ROWS)
            tail = "\n".join("    " + row for row in rows.split("\n"))
            self._tool_tail_cache = (output, width, tail)
        return tail

    def _tail(self, width: int) -> str:
        """The streaming reply's last :data:`LIVE_LINES` screen rows. Only they are drawn:
        the cost of a frame must not grow with the reply, nor with its lines' length. Kept
        for the next frame while the reply (the same string object) and the width stay:
        keys redraw far more often than the text changes."""
        text = self.text
        cached_text, cached_width, tail = self._tail_cache
        if cached_text is not text or cached_width != width:
            unfinished = text[self._splitter.block_start :]
            tail = render.live_tail(unfinished, width, LIVE_LINES)
            self._tail_cache = (text, width, tail)
        return tail

    def queue_fragments(self, keymap: KeyMap) -> StyleAndTextTuples:
        """The queued messages in Pi's words, then Pi's line naming the key that takes them
        back, as ``keymap`` binds it."""
        steering, follow_up = self.queued
        parts: StyleAndTextTuples = []
        for text in steering:
            parts.append(("class:queue", f"Steering: {render.one_line(text, 200)}\n"))
        for text in follow_up:
            parts.append(("class:queue", f"Follow-up: {render.one_line(text, 200)}\n"))
        for command in self.shell_beside:
            line = f"↳ $ {render.one_line(command, 200)} (shown when the agent is done)\n"
            parts.append(("class:queue", line))
        if steering or follow_up:
            parts.append(("class:footer.dim", queue_hint(keymap) + "\n"))
        return parts


def queue_hint(keymap: KeyMap) -> str:
    """Pi's line under the queued messages: ``↳ Alt+Up to edit all queued messages``, the
    key of ``app.message.dequeue`` named as Pi's ``/hotkeys`` names it."""
    return f"↳ {keymap.display('app.message.dequeue')} to edit all queued messages"
