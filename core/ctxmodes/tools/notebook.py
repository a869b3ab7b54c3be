"""The ``notebook`` tool: Python cells run in one persistent worker process.

Variables, imports and definitions survive between calls, like cells of a notebook; the
value of a trailing expression is displayed as the Python REPL would. The worker (see
:mod:`ctxmodes.tools._notebook_worker`) talks to this module over two private pipes with
length-prefixed JSON messages, while its stdout and stderr stream into a bounded buffer.

A cell that times out kills and restarts the worker: its state is lost and the result says
so. An aborted cell is interrupted (``KeyboardInterrupt``) and the state kept, unless it
ignores the interrupt for the grace period, in which case the worker is killed too.
"""

from __future__ import annotations

import os
import signal as signals
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import Field

from ctxmodes.abort import AbortSignal
from ctxmodes.tools import _process
from ctxmodes.tools.base import ToolArguments, ToolContext, ToolError, ToolResult, TypedTool
from ctxmodes.tools.output import (
    DEFAULT_MAX_BYTES,
    TailBuffer,
    TailSnapshot,
    join_sections,
    shown_output,
    truncation_details,
)

DEFAULT_INTERRUPT_GRACE = 1.0
_HEADER = struct.Struct(">I")
_WORKER_SOURCE_PATH = Path(__file__).with_name("_notebook_worker.py")
#: Runs the worker file under a name of its own, so tracebacks can leave its frames out
#: (and without putting the file's directory, i.e. this package, on the worker's sys.path).
_BOOTSTRAP = (
    "import sys; exec(compile(open(sys.argv[1], encoding='utf-8').read(), "
    "'<ctxmodes notebook worker>', 'exec'))"
)

CellStatus = Literal["completed", "timeout", "aborted", "exited"]


@dataclass(frozen=True, slots=True)
class CellOutcome:
    """How one cell ended.

    :ivar ok: the cell ran to the end without raising.
    :ivar interrupted: the cell was stopped by ``KeyboardInterrupt`` (its state survives).
    :ivar state_lost: the worker process is gone, and with it every variable.
    :ivar exit_code: the worker's exit status when it died on its own (``exited``).
    :ivar reset_notice: why the state was reset since the previous cell, if it was.
    """

    status: CellStatus
    ok: bool
    interrupted: bool
    output: TailSnapshot
    state_lost: bool
    exit_code: int | None = None
    reset_notice: str | None = None


class NotebookSession:
    """A persistent Python worker; :meth:`run` executes one cell at a time."""

    def __init__(
        self,
        cwd: Path,
        *,
        python: str = sys.executable,
        env: Mapping[str, str] | None = None,
        interrupt_grace: float = DEFAULT_INTERRUPT_GRACE,
    ) -> None:
        self._cwd = cwd
        self._python = python
        self._env = dict(os.environ if env is None else env)
        self._grace = interrupt_grace
        self._lock = threading.Lock()
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, NotebookSession] | None = None
        self._request_fd = self._output_fd = self._response_fd = -1
        self._next_id = 0
        self._reset_notice: str | None = None
        self._waker = _process.Waker()

    @property
    def running(self) -> bool:
        """True while a worker process exists (it is started by the first cell)."""
        return self._proc is not None and self._proc.poll() is None

    def run(
        self,
        code: str,
        *,
        signal: AbortSignal,
        timeout: float | None = None,
        on_progress: Callable[[TailSnapshot], None] | None = None,
    ) -> CellOutcome:
        """Run one cell; returns when it finishes, times out or is aborted.

        :raises ToolError: the worker cannot be started, or the session was closed.
        """
        with self._lock:
            if self._closed:
                raise ToolError("The notebook session was closed")
            proc = self._ensure_started()
            notice, self._reset_notice = self._reset_notice, None
            output = TailBuffer(spill_prefix="ctxmodes-notebook-")
            self._waker.drain()
            unregister = signal.add_callback(self._waker.wake)
            try:
                outcome = self._execute(proc, code, output, signal, timeout, on_progress)
            except BaseException:
                # Interrupted from outside (a failing progress callback, Ctrl-C in the host):
                # the cell may still run, and its reply would confuse the next one.
                self._discard()
                raise
            finally:
                unregister()
                output.close()
            return outcome if notice is None else replace(outcome, reset_notice=notice)

    def reset(self, notice: str | None = None) -> None:
        """Discard the worker and its state; the next cell starts a fresh one.

        :param notice: told to the model with the next cell's result, if there was state
            to lose.
        """
        with self._lock:
            if self.running and notice is not None:
                self._reset_notice = notice
            self._discard()

    def close(self) -> None:
        """Kill the worker; the session cannot be used afterwards.

        Safe while a cell runs on another thread: that cell ends as ``exited``.
        """
        proc = self._proc
        if proc is not None:
            _process.signal_group(proc, signals.SIGKILL)  # frees a running cell
        with self._lock:
            self._closed = True
            self._discard()
            self._waker.close()

    def _execute(
        self,
        proc: subprocess.Popen[bytes],
        code: str,
        output: TailBuffer,
        signal: AbortSignal,
        timeout: float | None,
        on_progress: Callable[[TailSnapshot], None] | None,
    ) -> CellOutcome:
        self._next_id += 1
        request_id = self._next_id
        replies = bytearray()

        def progress() -> None:
            if on_progress is not None:
                on_progress(output.snapshot())

        deadline = None if timeout is None else time.monotonic() + timeout
        status: _process.PumpResult = "exited"
        if self._send({"id": request_id, "code": code}):
            status = _process.pump(
                proc, self._output_fd, self._response_fd, output, replies, _has_message,
                deadline=deadline, signal=signal, waker=self._waker, on_progress=progress,
            )  # fmt: skip
        aborted = status == "aborted"
        if aborted:
            _process.interrupt(proc)
            status = _process.pump(
                proc, self._output_fd, self._response_fd, output, replies, _has_message,
                deadline=time.monotonic() + self._grace, signal=AbortSignal(), waker=self._waker,
            )  # fmt: skip
        reply = _parse_reply(replies, request_id) if status == "done" else None
        if reply is not None:
            return CellOutcome(
                status="aborted" if aborted else "completed",
                ok=reply.get("ok") is True,
                interrupted=reply.get("interrupted") is True,
                output=output.snapshot(),
                state_lost=False,
            )
        # No reply: the worker died, or it is stuck and must die (timeout, ignored interrupt).
        exit_code = proc.poll()
        self._discard()
        final: CellStatus = "aborted" if aborted else "timeout" if status == "timeout" else "exited"
        return CellOutcome(
            status=final,
            ok=False,
            interrupted=False,
            output=output.snapshot(),
            state_lost=True,
            exit_code=exit_code,
        )

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._discard()
        if not self._cwd.is_dir():
            raise ToolError(f"Working directory does not exist: {self._cwd}")
        request_read, request_write = os.pipe()
        response_read, response_write = os.pipe()
        output_read, output_write = os.pipe()
        try:
            proc = subprocess.Popen(
                [
                    self._python,
                    "-u",
                    "-c",
                    _BOOTSTRAP,
                    str(_WORKER_SOURCE_PATH),
                    str(request_read),
                    str(response_write),
                ],
                stdin=subprocess.DEVNULL,
                stdout=output_write,
                stderr=output_write,
                pass_fds=(request_read, response_write),
                cwd=self._cwd,
                env=self._env,
                start_new_session=True,
            )
        except OSError as exc:
            _process.close_fds(request_write, response_read, output_read)
            raise ToolError(f"Cannot start the notebook worker ({self._python}): {exc}") from exc
        finally:
            _process.close_fds(request_read, response_write, output_write)
        self._proc = proc
        self._request_fd, self._response_fd, self._output_fd = (
            request_write,
            response_read,
            output_read,
        )
        self._finalizer = weakref.finalize(self, _process.kill, proc)
        return proc

    def _send(self, message: dict[str, Any]) -> bool:
        body = orjson.dumps(message)
        data = _HEADER.pack(len(body)) + body
        try:
            while data:
                data = data[os.write(self._request_fd, data) :]
        except OSError:
            return False
        return True

    def _discard(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
            self._finalizer = None
        self._proc = None
        _process.close_fds(self._request_fd, self._response_fd, self._output_fd)
        self._request_fd = self._response_fd = self._output_fd = -1


def _has_message(buffer: bytearray) -> bool:
    if len(buffer) < _HEADER.size:
        return False
    size: int = _HEADER.unpack_from(buffer)[0]
    return len(buffer) >= _HEADER.size + size


def _parse_reply(buffer: bytearray, request_id: int) -> dict[str, Any] | None:
    offset = 0
    while len(buffer) - offset >= _HEADER.size:
        size = _HEADER.unpack_from(buffer, offset)[0]
        body = bytes(buffer[offset + _HEADER.size : offset + _HEADER.size + size])
        offset += _HEADER.size + size
        try:
            reply = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        if isinstance(reply, dict) and reply.get("id") == request_id:
            return reply
    return None


class NotebookArguments(ToolArguments):
    code: str = Field(description="Python code to run in the persistent notebook")
    timeout: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Timeout in seconds (optional); a timed-out cell restarts the notebook",
    )


class NotebookTool(TypedTool[NotebookArguments]):
    """Runs Python cells in the runtime's persistent notebook worker."""

    name = "notebook"
    label = "notebook"
    description = (
        "Run Python code in a persistent notebook: variables, imports and functions defined "
        "in one call stay available in later calls. The value of a final expression is shown "
        "as in the Python REPL; stdout and stderr are returned, stdin is closed. Long output "
        f"keeps its last 2000 lines or {DEFAULT_MAX_BYTES // 1024}KB. Optionally provide a "
        "timeout in seconds; a cell that times out restarts the notebook and loses its state."
    )

    def __init__(self, notebook: Callable[[Path], NotebookSession]) -> None:
        super().__init__(NotebookArguments)
        self._notebook = notebook

    def run(self, args: NotebookArguments, context: ToolContext) -> ToolResult:
        def progress(snapshot: TailSnapshot) -> None:
            context.on_update(ToolResult.text(snapshot.truncation.content))

        outcome = self._notebook(context.cwd).run(
            args.code, signal=context.signal, timeout=args.timeout, on_progress=progress
        )
        return render_cell(outcome, args.timeout)


def render_cell(outcome: CellOutcome, timeout: float | None) -> ToolResult:
    """The model-facing result: reset notice, output, truncation notice, then the ending."""
    finished = outcome.status == "completed" and outcome.ok
    text = shown_output(outcome.output, finished=finished)
    ending: list[str] = []
    if outcome.status == "timeout":
        ending.append(f"Cell timed out after {timeout:g} seconds.")
    elif outcome.status == "aborted":
        ending.append("Cell aborted.")
    elif outcome.status == "exited":
        ending.append(f"The notebook worker exited unexpectedly (status {outcome.exit_code}).")
    elif outcome.interrupted:
        ending.append("Cell interrupted.")
    if outcome.state_lost:
        ending.append(
            "The notebook was restarted: all variables, imports and definitions were lost."
        )
    elif outcome.status == "aborted" or outcome.interrupted:
        ending.append("The notebook state was kept.")
    reset = f"[{outcome.reset_notice}]" if outcome.reset_notice else ""
    body = join_sections(reset, text, " ".join(ending))
    details: dict[str, Any] = {
        "stateLost": outcome.state_lost,
        **truncation_details(outcome.output),
    }
    return ToolResult.text(body, details=details, is_error=not finished)
