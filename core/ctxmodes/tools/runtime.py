"""The processes behind one host's tools: a persistent shell and a persistent notebook.

Both start on first use, in the working directory of the call that needs them, and then
live as long as the runtime: a context rollover keeps them (the model's next window finds
its shell and variables as it left them). The host decides when state must go —
:meth:`ToolRuntime.reset_notebook` after a tree navigation the user asked for,
:meth:`ToolRuntime.close` at session shutdown. A closed runtime can be used again; it
simply starts new processes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from ctxmodes.tools.notebook import NotebookSession
from ctxmodes.tools.session_env import shell_environment
from ctxmodes.tools.shell import ShellSession
from ctxmodes.tools.shell_config import DEFAULT_SHELL, ShellConfig

#: Told to the model with its next notebook result after a user tree navigation.
TREE_RESET_NOTICE = "Notebook state reset after conversation-tree navigation"


class ToolRuntime:
    """Owns the shell and notebook processes of one agent host."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        python: str = sys.executable,
        interrupt_grace: float = 1.0,
        shell_config: ShellConfig = DEFAULT_SHELL,
    ) -> None:
        self._env = None if env is None else dict(env)
        self._shell_config = shell_config
        self._python = python
        self._grace = interrupt_grace
        self._lock = threading.Lock()
        self._shell: ShellSession | None = None
        self._notebook: NotebookSession | None = None

    def shell(self, cwd: Path) -> ShellSession:
        """The persistent shell, created (not yet started) in ``cwd`` on first use."""
        with self._lock:
            if self._shell is None:
                self._shell = ShellSession(
                    cwd, env=self._env, interrupt_grace=self._grace, config=self._shell_config
                )
            return self._shell

    def configure_shell(self, config: ShellConfig) -> None:
        """Run later commands with ``config``'s program and prefix. A shell already running
        with other ones is stopped (its state goes with it), so the next command starts the
        configured program."""
        with self._lock:
            self._shell_config = config
            shell = self._shell
            if shell is not None and shell.config != config:
                self._shell = None
            else:
                shell = None
        if shell is not None:
            shell.close()

    def notebook(self, cwd: Path) -> NotebookSession:
        """The persistent notebook, created (not yet started) in ``cwd`` on first use."""
        with self._lock:
            if self._notebook is None:
                # The notebook is ctxmodes' own (Pi has none) and its worker outlives any
                # one session state, so it gets no session variables; inherited ones from an
                # outer agent are removed, so no cell reads another session's.
                env = shell_environment(base=self._env)
                self._notebook = NotebookSession(
                    cwd, python=self._python, env=env, interrupt_grace=self._grace
                )
            return self._notebook

    def reset_notebook(self, notice: str | None = TREE_RESET_NOTICE) -> None:
        """Drop the notebook's state; its next cell runs in a fresh worker.

        :param notice: shown to the model with that next cell's result (only if there was
            state to lose); ``None`` for a silent reset.
        """
        with self._lock:
            notebook = self._notebook
        if notebook is not None:
            notebook.reset(notice)

    def close(self) -> None:
        """Stop both processes (and whatever they started)."""
        with self._lock:
            shell, self._shell = self._shell, None
            notebook, self._notebook = self._notebook, None
        if shell is not None:
            shell.close()
        if notebook is not None:
            notebook.close()

    def __enter__(self) -> ToolRuntime:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
