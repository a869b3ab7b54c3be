"""The ``bash`` tool: one persistent bash process per runtime.

The shell keeps its working directory, variables and functions between calls. Each command
is written to a private file and sourced by the shell with stdin from ``/dev/null``; its
stdout and stderr share one pipe, and the end of the command is reported on a separate
control pipe as ``<random token> <exit status> <working directory>``, so no output can fake
or hide it. Malformed commands (an unclosed quote, a heredoc without terminator) end with
bash's own error instead of leaving the shell waiting for more input.

Before each command the shell exports the session's ``PI_*`` variables as they are then
(:mod:`~ctxmodes.tools.session_env`): Pi starts a new shell per command with them in its
environment, and a shell that lives on must have them set again each time, or a model
switched since would still show the old one.

The program is the configured bash and each command is preceded by the configured prefix
(:class:`~ctxmodes.tools.shell_config.ShellConfig`, Pi's ``shellPath`` and
``shellCommandPrefix``).

``exit`` is an alias for ``return`` in this shell, so ``exit 3`` ends the command with
status 3, as it would in Pi's one-shell-per-command tool, instead of ending the shell and
its state. (Inside a function, it therefore returns from that function only.) A shell that
does end (``builtin exit``, ``kill $$``) is started again for the next command.

Stopping a command (timeout or abort) first sends SIGINT to the shell's process group: the
foreground program dies and the shell — which traps SIGINT to leave the sourced file —
survives with its state. A command that ignores SIGINT for the grace period gets the whole
group killed; the shell is then restarted in its last working directory and the result
says that its other state was lost.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import signal as signals
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
from ctxmodes.tools.session_env import command_variables, shell_assignments
from ctxmodes.tools.shell_config import DEFAULT_SHELL, ShellConfig

#: Seconds a stopped command gets to react to SIGINT before its shell is killed.
DEFAULT_INTERRUPT_GRACE = 1.0

CommandStatus = Literal["completed", "timeout", "aborted", "exited"]


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How one command ended.

    :ivar exit_code: the command's status; for ``exited``, the shell's own exit status;
        ``None`` when the shell had to be killed.
    :ivar cwd: the shell's working directory afterwards (where a restarted shell starts).
    :ivar restarted: the shell process is gone, with its variables and functions.
    """

    status: CommandStatus
    exit_code: int | None
    output: TailSnapshot
    cwd: Path
    restarted: bool


class ShellSession:
    """A long-lived bash process; :meth:`run` executes one command at a time."""

    def __init__(
        self,
        cwd: Path,
        *,
        env: Mapping[str, str] | None = None,
        interrupt_grace: float = DEFAULT_INTERRUPT_GRACE,
        config: ShellConfig = DEFAULT_SHELL,
    ) -> None:
        self._initial_cwd = cwd
        self._cwd = cwd
        self._env = dict(os.environ if env is None else env)
        self._grace = interrupt_grace
        self._config = config
        self._lock = threading.Lock()
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._output_fd = -1
        self._control_fd = -1
        self._child_control_fd = -1
        self._finalizer: weakref.finalize[Any, ShellSession] | None = None
        self._waker = _process.Waker()
        # Holds the file each command is written to; made with the first shell process.
        self._workdir: Path | None = None

    @property
    def cwd(self) -> Path:
        """The shell's working directory as of the last command."""
        return self._cwd

    @property
    def running(self) -> bool:
        """True while a shell process exists (it is started by the first command)."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def config(self) -> ShellConfig:
        """The program this session runs and the prefix of its commands."""
        return self._config

    def run(
        self,
        command: str,
        *,
        signal: AbortSignal,
        timeout: float | None = None,
        on_progress: Callable[[TailSnapshot], None] | None = None,
        on_output: Callable[[bytes], None] | None = None,
        variables: Mapping[str, str | None] | None = None,
    ) -> CommandOutcome:
        """Run ``command`` (after the configured prefix) in the shell; returns when it ends,
        times out or is aborted. ``on_output`` gets each piece of output as it is read.
        ``variables`` are exported (unset where ``None``) in the shell just before the
        command, prefix included, runs: they stay set until a later command changes them.

        :raises ToolError: bash cannot be started, or the session was closed.
        :raises ValueError: a name of ``variables`` is not a shell variable name.
        """
        assignments = shell_assignments(variables or {})
        with self._lock:
            if self._closed:
                raise ToolError("The shell session was closed")
            proc = self._ensure_started()
            self._script_path().write_text(self._config.script(command) + "\n", encoding="utf-8")
            token = secrets.token_hex(12).encode()
            output = (
                TailBuffer(spill_prefix="ctxmodes-bash-")
                if on_output is None
                else _WatchedTail(on_output, spill_prefix="ctxmodes-bash-")
            )
            control = bytearray()
            self._waker.drain()
            unregister = signal.add_callback(self._waker.wake)
            try:
                return self._execute(
                    proc, token, output, control, signal, timeout, on_progress, assignments
                )
            except BaseException:
                # Interrupted from outside (a failing progress callback, Ctrl-C in the host):
                # the command may still run and would leak into the next one's output.
                self._discard()
                raise
            finally:
                unregister()
                output.close()

    def close(self) -> None:
        """Kill the shell and everything it started; the session cannot be used afterwards.

        Safe while a command runs on another thread: that command ends as ``exited``.
        """
        proc = self._proc
        if proc is not None:
            _process.signal_group(proc, signals.SIGKILL)  # frees a running command
        with self._lock:
            self._closed = True
            self._discard()
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
            self._waker.close()

    def _execute(
        self,
        proc: subprocess.Popen[bytes],
        token: bytes,
        output: TailBuffer,
        control: bytearray,
        signal: AbortSignal,
        timeout: float | None,
        on_progress: Callable[[TailSnapshot], None] | None,
        assignments: str,
    ) -> CommandOutcome:
        def complete(buffer: bytearray) -> bool:
            return _find_marker(buffer, token) is not None

        def progress() -> None:
            if on_progress is not None:
                on_progress(output.snapshot())

        fd = self._child_control_fd
        # `builtin` keeps a command that defines functions named trap or printf harmless.
        line = (
            "builtin shopt -s expand_aliases; builtin alias exit=return; "
            f"builtin trap 'return 130' INT; {assignments}"
            f"builtin . {shlex.quote(str(self._script_path()))} </dev/null {fd}>&-; "
            f'builtin printf \'%s %s %s\\n\' {token.decode()} "$?" "$PWD" >&{fd}\n'
        )
        deadline = None if timeout is None else time.monotonic() + timeout
        if self._send(proc, line):
            status = _process.pump(
                proc, self._output_fd, self._control_fd, output, control, complete,
                deadline=deadline, signal=signal, waker=self._waker, on_progress=progress,
            )  # fmt: skip
        else:
            status = "exited"
        result: CommandStatus = "completed" if status == "done" else status
        if status in ("timeout", "aborted"):
            _process.interrupt(proc)
            after = _process.pump(
                proc, self._output_fd, self._control_fd, output, control, complete,
                deadline=time.monotonic() + self._grace, signal=AbortSignal(), waker=self._waker,
            )  # fmt: skip
            if after != "done":
                self._discard()
        elif status == "exited":
            self._discard()
        marker = _find_marker(control, token)
        exit_code: int | None
        if marker is not None:
            exit_code, cwd = marker
            self._cwd = Path(cwd)
        else:
            exit_code = proc.returncode if status == "exited" else None
        return CommandOutcome(
            status=result,
            exit_code=exit_code,
            output=output.snapshot(),
            cwd=self._cwd,
            restarted=self._proc is None,
        )

    def _script_path(self) -> Path:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="ctxmodes-shell-"))
        return self._workdir / "command.sh"

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._discard()
        start_dir = self._cwd if self._cwd.is_dir() else self._initial_cwd
        if not start_dir.is_dir():
            raise ToolError(f"Working directory does not exist: {start_dir}")
        # A relative program is the session's, wherever a `cd` left the shell.
        bash = self._config.program(self._initial_cwd, self._env)
        output_read, output_write = os.pipe()
        control_read, control_write = os.pipe()
        try:
            proc = subprocess.Popen(
                _shell_command(bash),
                stdin=subprocess.PIPE,
                stdout=output_write,
                stderr=output_write,
                pass_fds=(control_write,),
                cwd=start_dir,
                env=self._env,
                start_new_session=True,
            )
        except OSError as exc:
            _process.close_fds(output_read, control_read)
            raise ToolError(f"Cannot start bash: {exc}") from exc
        finally:
            _process.close_fds(output_write, control_write)
        self._proc = proc
        self._cwd = start_dir
        self._output_fd, self._control_fd = output_read, control_read
        # The child sees the control pipe under the same descriptor number it had here.
        self._child_control_fd = control_write
        self._finalizer = weakref.finalize(self, _process.kill, proc)
        return proc

    def _send(self, proc: subprocess.Popen[bytes], line: str) -> bool:
        assert proc.stdin is not None
        try:
            proc.stdin.write(line.encode("utf-8"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _discard(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # kills the process group and reaps the shell
            self._finalizer = None
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):  # the pipe may already be broken
                self._proc.stdin.close()
        self._proc = None
        _process.close_fds(self._output_fd, self._control_fd)
        self._output_fd = self._control_fd = -1


class _WatchedTail(TailBuffer):
    """A tail buffer that also hands each piece it takes to ``watcher``."""

    def __init__(self, watcher: Callable[[bytes], None], *, spill_prefix: str) -> None:
        super().__init__(spill_prefix=spill_prefix)
        self._watcher = watcher

    def append(self, data: bytes) -> None:
        super().append(data)
        if data:
            self._watcher(data)


def _shell_command(bash: str) -> list[str]:
    command = [bash, "--noprofile", "--norc"]
    if signals.getsignal(signals.SIGINT) != signals.SIG_IGN:
        return command
    # Started with SIGINT ignored (nohup, a background job): bash would inherit that and a
    # non-interactive shell may not undo it, so interrupts could never stop a command.
    # A short Python step restores the default disposition and then becomes bash.
    reset = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [sys.executable, "-c", reset, *command]


def _find_marker(control: bytearray, token: bytes) -> tuple[int, str] | None:
    for line in bytes(control).split(b"\n")[:-1]:
        parts = line.split(b" ", 2)
        if len(parts) == 3 and parts[0] == token and parts[1].isdigit():
            return int(parts[1]), parts[2].decode("utf-8", "replace")
    return None


class BashArguments(ToolArguments):
    command: str = Field(description="Bash command to execute")
    timeout: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Timeout in seconds (optional, no default timeout)",
    )


class BashTool(TypedTool[BashArguments]):
    """Runs commands in the runtime's persistent shell.

    Each command sees the session as it is when the command starts, in the variables of
    :mod:`~ctxmodes.tools.session_env` (re-set before every command, since the shell
    outlives them); ``expose_session_environment=False`` unsets them instead, as Pi's
    option of that name.
    """

    name = "bash"
    label = "bash"
    description = (
        "Run a command in a persistent bash shell: the working directory, exported variables "
        "and functions carry over to later calls. stdin is closed. Returns stdout and stderr "
        f"together; long output keeps its last 2000 lines or {DEFAULT_MAX_BYTES // 1024}KB and "
        "the full output is saved to a file. Optionally provide a timeout in seconds."
    )

    def __init__(
        self, shell: Callable[[Path], ShellSession], *, expose_session_environment: bool = True
    ) -> None:
        super().__init__(BashArguments)
        self._shell = shell
        self._expose = expose_session_environment

    @property
    def exposes_session_environment(self) -> bool:
        """Whether commands see the session's ``PI_*`` variables (the system prompt says so)."""
        return self._expose

    def run(self, args: BashArguments, context: ToolContext) -> ToolResult:
        def progress(snapshot: TailSnapshot) -> None:
            text = snapshot.truncation.content
            context.on_update(ToolResult.text(text, details=truncation_details(snapshot)))

        shell = self._shell(context.cwd)
        variables = command_variables(context, expose_session_environment=self._expose)
        outcome = shell.run(
            args.command,
            signal=context.signal,
            timeout=args.timeout,
            on_progress=progress,
            variables=variables,
        )
        return render_outcome(outcome, args.timeout)


def render_outcome(outcome: CommandOutcome, timeout: float | None) -> ToolResult:
    """The model-facing result: output, truncation notice, then how the command ended."""
    completed = outcome.status == "completed"
    text = shown_output(outcome.output, finished=completed)
    status: list[str] = []
    if completed and outcome.exit_code:
        status.append(f"Command exited with code {outcome.exit_code}")
    elif outcome.status == "timeout":
        status.append(f"Command timed out after {timeout:g} seconds")
    elif outcome.status == "aborted":
        status.append("Command aborted")
    elif outcome.status == "exited":
        status.append(f"The shell exited with status {outcome.exit_code}.")
    if outcome.restarted:
        status.append(
            f"The next command runs in a new shell (in {outcome.cwd}); the old shell's "
            "variables and functions are gone."
        )
    body = join_sections(text, *status)
    details = {**truncation_details(outcome.output), "cwd": str(outcome.cwd)}
    if outcome.exit_code is not None:
        details["exitCode"] = outcome.exit_code
    if outcome.restarted:
        details["shellRestarted"] = True
    return ToolResult.text(body, details=details, is_error=bool(status))
