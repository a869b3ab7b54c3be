"""The default tools plugin: ``bash``, ``notebook``, ``read``, ``write`` and ``edit``, and
Pi's search tools ``ls``, ``find`` and ``grep``, offered only when asked for.

Register one :class:`BuiltinToolsPlugin` instance per host (per plugin manager): the
instance owns that host's :class:`~ctxmodes.tools.runtime.ToolRuntime`, so two hosts in one
process never share a shell or a notebook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import hookimpl
from ctxmodes.tools.base import Tool
from ctxmodes.tools.files import EditTool, ReadTool, WriteTool
from ctxmodes.tools.notebook import NotebookTool
from ctxmodes.tools.runtime import ToolRuntime
from ctxmodes.tools.search import FindTool, GrepTool, LsTool
from ctxmodes.tools.shell import BashTool
from ctxmodes.tools.shell_config import DEFAULT_SHELL, ShellConfig

if TYPE_CHECKING:
    from ctxmodes.events import SessionShutdownReason, TreeNavigationEvent
    from ctxmodes.hostapi import HostSession


#: The types of the core's own tools (Pi's built-in tools; ``--no-builtin-tools`` drops them).
BUILTIN_TOOL_TYPES = (
    BashTool,
    NotebookTool,
    ReadTool,
    WriteTool,
    EditTool,
    LsTool,
    FindTool,
    GrepTool,
)


def is_builtin_tool(tool: object) -> bool:
    return isinstance(tool, BUILTIN_TOOL_TYPES)


class BuiltinToolsPlugin:
    """Hook implementations providing the runtime tools of one host."""

    def __init__(self, runtime_factory: Callable[[], ToolRuntime] = ToolRuntime) -> None:
        self._runtime_factory = runtime_factory
        self._runtime: ToolRuntime | None = None

    @property
    def runtime(self) -> ToolRuntime:
        """This host's runtime, created on first use."""
        if self._runtime is None:
            self._runtime = self._runtime_factory()
        return self._runtime

    @hookimpl
    def ctx_register_tools(self, register: Callable[[Tool], None], session: HostSession) -> None:
        runtime = self.runtime
        runtime.configure_shell(_shell_config(session))
        register(BashTool(runtime.shell))
        register(NotebookTool(runtime.notebook))
        register(ReadTool(auto_resize_images=_auto_resize_images(session)))
        register(WriteTool())
        register(EditTool())
        register(LsTool())
        register(FindTool())
        register(GrepTool())

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: TreeNavigationEvent) -> None:
        # A rollover (internal) keeps the notebook: the next window continues the same work.
        # A navigation the user chose leaves that work behind, so its variables must go too.
        if not event.internal and self._runtime is not None:
            self._runtime.reset_notebook()

    @hookimpl
    def ctx_session_shutdown(self, session: HostSession, reason: SessionShutdownReason) -> None:
        if self._runtime is not None:
            self._runtime.close()


def _auto_resize_images(session: HostSession) -> bool:
    """Whether the host's options shrink images (Pi's ``images.autoResize``); a session of
    another host shrinks them, as Pi does by default."""
    from ctxmodes.host.session import AgentSession

    return session.options.auto_resize_images if isinstance(session, AgentSession) else True


def _shell_config(session: HostSession) -> ShellConfig:
    """The shell the host's options configure; a session of another host (a plugin's test
    double) runs the default shell."""
    from ctxmodes.host.session import AgentSession

    return session.options.shell if isinstance(session, AgentSession) else DEFAULT_SHELL
