"""A shell command the user runs (``!cmd`` in the terminal, the RPC ``bash`` command), with
its output made as Pi's ``executeBash`` makes it.

Unlike the model's ``bash`` tool, Pi cleans what such a command prints, piece by piece as it
arrives: the bytes are decoded as UTF-8 (a character split between two pieces is decoded
whole), ANSI escape sequences are removed (Pi's ``stripAnsi``), then control characters but
tab, newline and carriage return (its ``sanitizeBinaryOutput``), then every carriage return.
Each cleaned piece is handed on as it comes (Pi's ``bash_execution_update`` deltas).

The output kept is the newest pieces, up to 100,000 characters (UTF-16 units, as Pi counts
them); the result shows their last 2,000 lines or 50 KB (:func:`~ctxmodes.tools.output.
truncate_tail`). Once more than 50 KB arrived, or when the result is cut, the cleaned text
also goes to a temporary file whose path the result gives. A stopped command reports no exit
status.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ctxmodes.abort import AbortSignal
from ctxmodes.session.jsvalues import js_length
from ctxmodes.tools.output import DEFAULT_MAX_BYTES, truncate_tail
from ctxmodes.tools.shell import ShellSession
from ctxmodes.tools.shell_config import ShellConfig

#: Pi's ``stripAnsi``: OSC sequences up to their terminator, and CSI-like sequences.
_TERMINATOR = "(?:\x07|\x1b\\\\|\x9c)"
_ANSI = re.compile(
    rf"(?:\x1b\][\s\S]*?{_TERMINATOR})"
    r"|[\x1b\x9b][\[\]()#;?]*(?:[0-9]{1,4}(?:[;:][0-9]{0,4})*)?[0-9A-PR-TZcf-nq-uy=><~]"
)
#: What Pi's ``sanitizeBinaryOutput`` drops: control characters but tab, newline and
#: carriage return, and the Unicode interlinear annotation characters.
_BINARY = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufff9-\ufffb]")
#: How much cleaned output Pi keeps in memory (in UTF-16 units), newest pieces first.
_KEPT_CHARS = 2 * DEFAULT_MAX_BYTES


def clean_output(text: str) -> str:
    """``text`` without escape sequences, binary control characters and carriage returns."""
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    return _BINARY.sub("", text).replace("\r", "")


@dataclass(frozen=True, slots=True)
class UserCommandResult:
    """Pi's ``BashResult``.

    :ivar exit_code: ``None`` when the command was stopped or its shell was killed.
    :ivar full_output_path: the temporary file holding the whole cleaned output, when it
        was long.
    """

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None


class CleanedOutput:
    """The cleaned output of one command, kept as Pi keeps it (see the module docstring):
    :meth:`feed` it the bytes as they come, then take the :meth:`result`."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self._on_text = on_text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pieces: deque[str] = deque()
        self._kept_chars = 0
        self._received_bytes = 0
        self._file: IO[str] | None = None
        self.file_path: str | None = None

    def feed(self, data: bytes) -> None:
        self._received_bytes += len(data)
        text = clean_output(self._decoder.decode(data))
        if self._received_bytes > DEFAULT_MAX_BYTES:
            self._open_file()
        if self._file is not None:
            self._file.write(text)
        self._pieces.append(text)
        self._kept_chars += js_length(text)
        while self._kept_chars > _KEPT_CHARS and len(self._pieces) > 1:
            self._kept_chars -= js_length(self._pieces.popleft())
        if self._on_text is not None:
            self._on_text(text)

    def result(self, exit_code: int | None, *, cancelled: bool) -> UserCommandResult:
        """The command's result once it ended with ``exit_code`` (none reported when it was
        ``cancelled``). Bytes of a character the command left unfinished are dropped, as
        Pi's decoder is never flushed."""
        text = "".join(self._pieces)
        truncation = truncate_tail(text)
        if truncation.truncated:
            self._open_file()
        self.close()
        return UserCommandResult(
            output=truncation.content if truncation.truncated else text,
            exit_code=None if cancelled else exit_code,
            cancelled=cancelled,
            truncated=truncation.truncated,
            full_output_path=self.file_path,
        )

    def close(self) -> None:
        """Close the temporary file, if any (it stays on disk)."""
        if self._file is not None:
            self._file.close()

    def _open_file(self) -> None:
        if self.file_path is not None:
            return
        fd, self.file_path = tempfile.mkstemp(prefix="ctxmodes-bash-", suffix=".log")
        self._file = os.fdopen(fd, "w", encoding="utf-8", newline="")
        # What is still kept goes first, as Pi writes its pieces when the file opens.
        self._file.writelines(self._pieces)


def run_user_command(
    command: str,
    cwd: Path,
    config: ShellConfig,
    signal: AbortSignal,
    on_text: Callable[[str], None] | None = None,
) -> UserCommandResult:
    """Run ``command`` in a new bash (``config``'s, after its prefix) in ``cwd`` until it
    ends or ``signal`` stops it; ``on_text`` gets each cleaned piece of output.

    :raises ToolError: bash cannot be started.
    """
    output = CleanedOutput(on_text)
    shell = ShellSession(cwd, config=config)
    try:
        outcome = shell.run(command, signal=signal, on_output=output.feed)
    except BaseException:
        output.close()
        raise
    finally:
        shell.close()
    if outcome.output.full_output_path is not None:
        # The shell's own copy of the raw bytes: the full output is the cleaned file.
        with contextlib.suppress(OSError):
            os.unlink(outcome.output.full_output_path)
    return output.result(outcome.exit_code, cancelled=signal.aborted)
