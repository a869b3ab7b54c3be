"""A shell command the user runs (``!cmd`` in the terminal, the RPC ``bash`` command), with
its output made as Pi's ``executeBash`` makes it.

The command is run by a :class:`ShellRunner`: the local one (:func:`local_shell_runner`,
Pi's ``createLocalBashOperations``) unless a plugin's ``ctx_user_bash`` gives its own.

Unlike the model's ``bash`` tool, Pi cleans what such a command prints, piece by piece as it
arrives: the bytes are decoded as UTF-8 (a character split between two pieces is decoded
whole), ANSI escape sequences are removed (Pi's ``stripAnsi``), then control characters but
tab, newline and carriage return (its ``sanitizeBinaryOutput``), then every carriage return.
Each cleaned piece is handed on as it comes (Pi's ``bash_execution_update`` deltas).

The output kept is the newest pieces, up to 100,000 characters (UTF-16 units, as Pi counts
them); the result shows their last 2,000 lines or 50 KB (:func:`~ctxmodes.tools.output.
truncate_tail`). Once more than 50 KB arrived, or when the result is cut, the cleaned text
also goes to a temporary file whose path the result gives. A stopped command reports no exit
status, whatever its runner answered or raised.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import math
import os
import re
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from ctxmodes.abort import AbortedError, AbortSignal
from ctxmodes.session.jsvalues import js_length
from ctxmodes.tools.base import ToolError
from ctxmodes.tools.output import DEFAULT_MAX_BYTES, truncate_tail
from ctxmodes.tools.shell import ShellSession
from ctxmodes.tools.shell_config import ShellConfig

_log = logging.getLogger(__name__)

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
    """Pi's ``BashResult``: how a shell command the user ran ended, as its
    ``bashExecution`` message records it (and RPC's ``bash`` answers it).

    :ivar exit_code: ``None`` when the command was stopped or its shell was killed.
    :ivar full_output_path: the temporary file holding the whole cleaned output, when it
        was long.
    """

    output: str
    exit_code: int | None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None

    def __post_init__(self) -> None:
        # A plugin builds one too (``ctx_user_bash``): a wrong type is its error, said here,
        # rather than a failure to record the command later.
        wrong = [
            name
            for name, value, kinds in (
                ("output", self.output, (str,)),
                ("exit_code", self.exit_code, (int, type(None))),
                ("cancelled", self.cancelled, (bool,)),
                ("truncated", self.truncated, (bool,)),
                ("full_output_path", self.full_output_path, (str, type(None))),
            )
            if not isinstance(value, kinds) or (name == "exit_code" and isinstance(value, bool))
        ]
        if wrong:
            raise TypeError(f"UserCommandResult: wrong type for {', '.join(wrong)}")


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


class ShellRunner(Protocol):
    """Runs one shell command for the user (Pi's ``BashOperations.exec``), called as
    ``runner(command, cwd, on_data, signal, timeout)``.

    :param command: the text to run, the configured prefix's lines first.
    :param cwd: the directory to run it in.
    :param on_data: takes each piece of output (standard output and error together) as
        bytes, as it arrives; the host cleans, keeps and cuts it. Call it from one thread
        at a time; pieces given after the runner returned are dropped.
    :param signal: aborted when the user stops the command: stop it and return (or raise)
        soon. The command then counts as cancelled, whatever is returned or raised.
    :param timeout: seconds the command may take (``None``: no limit; the host never sets
        one for the user's commands, as Pi does not).
    :return: the command's exit status; ``None`` when it has none (killed by a signal).
    :raises Exception: the command could not be run: the user is told its message and
        nothing is recorded, as in Pi.
    """

    def __call__(
        self,
        command: str,
        cwd: Path,
        on_data: Callable[[bytes], None],
        signal: AbortSignal,
        timeout: float | None,
        /,
    ) -> int | None: ...


#: The longest timeout Pi takes, in seconds (its timers' largest delay).
_MAX_TIMEOUT = 2_147_483_647 / 1000


def local_shell_runner(shell_path: str | None = None) -> ShellRunner:
    """The runner ctxmodes uses itself (Pi's ``createLocalBashOperations``): each command
    in a new bash (``shell_path``, ``~`` and a path relative to the command's directory
    allowed; by default ``bash`` on ``PATH``), stopped with its whole process group.

    A plugin wraps it to change how commands run while keeping the rest, for instance to
    run each after a profile::

        local = local_shell_runner()

        def with_profile(command, cwd, on_data, signal, timeout):
            return local(f"source ~/.profile\\n{command}", cwd, on_data, signal, timeout)

    Errors, as Pi words them: ``aborted`` (stopped by ``signal``), ``timeout:N``, ``Invalid
    timeout: …`` and ``Working directory does not exist: …``, and bash that cannot be
    started: each a :class:`~ctxmodes.CtxmodesError` (the first an
    :class:`~ctxmodes.AbortedError`).
    """
    config = ShellConfig(path=shell_path)

    def run(
        command: str,
        cwd: Path,
        on_data: Callable[[bytes], None],
        signal: AbortSignal,
        timeout: float | None,
        /,
    ) -> int | None:
        _check_timeout(timeout)
        if signal.aborted:
            raise AbortedError("aborted")
        if not Path(cwd).exists():
            raise ToolError(
                f"Working directory does not exist: {cwd}\nCannot execute bash commands."
            )
        shell = ShellSession(Path(cwd), config=config)
        try:
            outcome = shell.run(command, signal=signal, timeout=timeout, on_output=on_data)
        finally:
            shell.close()
        if outcome.output.full_output_path is not None:
            # The shell's own copy of the raw bytes: the host keeps the cleaned output.
            with contextlib.suppress(OSError):
                os.unlink(outcome.output.full_output_path)
        if outcome.status == "aborted" or signal.aborted:
            raise AbortedError("aborted")
        if outcome.status == "timeout":
            raise ToolError(f"timeout:{timeout:g}")
        return outcome.exit_code

    return run


def _check_timeout(timeout: float | None) -> None:
    """:raises ToolError: ``timeout`` is not a number of seconds Pi would take."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if timeout > _MAX_TIMEOUT:
        raise ToolError(f"Invalid timeout: maximum is {_MAX_TIMEOUT} seconds")


class UserCommandError(ToolError):
    """A plugin's :class:`ShellRunner` failed: its message, as Pi reports it (RPC's
    ``bash`` answers it as its error; the terminal says ``Bash command failed: …``)."""


def run_user_command(
    command: str,
    cwd: Path,
    runner: ShellRunner,
    signal: AbortSignal,
    on_text: Callable[[str], None] | None = None,
    *,
    local: bool = True,
) -> UserCommandResult:
    """Run ``command`` (its prefix already added) with ``runner`` in ``cwd`` until it ends
    or ``signal`` stops it; ``on_text`` gets each cleaned piece of output. ``local`` says
    the runner is ctxmodes' own, whose errors are already worded for the user.

    :raises ToolError: the command could not be run (:class:`UserCommandError` for a
        plugin's runner: any exception it raised, but for a stop, which is a result).
    """
    output = CleanedOutput(on_text)
    lock = threading.Lock()
    finished = False

    def on_data(data: bytes) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"on_data takes bytes, not {type(data).__name__}")
        with lock:
            if not finished:
                output.feed(bytes(data))

    try:
        exit_code = runner(command, cwd, on_data, signal, None)
    except Exception as exc:
        with lock:
            finished = True
        if signal.aborted:  # as Pi: a stopped command is a result, however it ended
            return output.result(None, cancelled=True)
        output.close()
        if local and isinstance(exc, ToolError):
            raise
        _log.debug("shell runner failed", exc_info=exc)
        raise UserCommandError(str(exc) or type(exc).__name__) from None
    except BaseException:
        output.close()
        raise
    with lock:
        finished = True
    if exit_code is not None and (isinstance(exit_code, bool) or not isinstance(exit_code, int)):
        output.close()
        raise UserCommandError(
            f"the shell runner returned {type(exit_code).__name__}, not an exit status"
        )
    return output.result(exit_code, cancelled=signal.aborted)
