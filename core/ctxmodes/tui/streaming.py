"""A streaming reply cut into Markdown blocks as it arrives: each block that is finished
(a blank line outside a code fence ends it) goes to the scrollback once, rendered once;
only the block still being written stays in the live region. So a frame's cost, and the
Markdown rendered per token, depend on the last block, not on the reply."""

from __future__ import annotations

import re
from typing import Final

#: A line opening or closing a fenced code block (CommonMark: up to three spaces, then
#: three or more backticks or tildes).
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")


class BlockSplitter:
    """Offsets into one reply's text: where the unfinished block starts."""

    def __init__(self) -> None:
        #: Where the block still being written starts.
        self.block_start = 0
        #: Where the next line to look at starts (lines before it are complete).
        self._line_start = 0
        self._fence: str | None = None
        self._block_has_text = False

    def _closes(self, marker: str, after: str) -> bool:
        """A closing fence: the opening one's character, at least as long, nothing after."""
        opening = self._fence or ""
        return marker[0] == opening[0] and len(marker) >= len(opening) and not after.strip()

    def finished(self, text: str) -> list[str]:
        """The blocks ``text`` (the reply so far, which only grows) now finishes, in order."""
        blocks: list[str] = []
        while True:
            end = text.find("\n", self._line_start)
            if end < 0:
                return blocks
            line = text[self._line_start : end]
            self._line_start = end + 1
            fence = _FENCE.match(line)
            if self._fence is not None:
                if fence and self._closes(fence.group(1), line[fence.end() :]):
                    self._fence = None
                continue
            if fence:
                self._fence = fence.group(1)
                self._block_has_text = True
            elif line.strip():
                self._block_has_text = True
            else:
                if self._block_has_text:
                    blocks.append(text[self.block_start : end])
                # Blank lines between blocks belong to neither.
                self.block_start = self._line_start
                self._block_has_text = False
