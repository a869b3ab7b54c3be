"""Which of the registered tools a session offers the model: Pi's ``--tools``,
``--no-tools``, ``--no-builtin-tools`` and ``--exclude-tools``.

As in Pi, an allow list (``--tools``; ``--no-tools`` is an empty one) applies to every tool,
the core's and the plugins' (a mode's ``new_context``, ``history`` and ``notes`` included);
the core's search tools (``ls``, ``find``, ``grep``) are offered only when a list names them;
``--no-builtin-tools`` drops the core's own tools and keeps the plugins'; an exclusion list
drops its tools whatever else says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

T = TypeVar("T")

#: The core's tools offered only when a list names them, as in Pi (its search tools).
ON_REQUEST: Final = frozenset({"ls", "find", "grep"})


@dataclass(frozen=True, slots=True)
class ToolSelection:
    """The tools a session offers.

    :ivar allowed: the only tools offered, whoever registers them (``None``: no such list).
    :ivar builtin: the core's own tools offered when there is no allow list (``None``: all
        of them but the search tools, which Pi offers only when asked for; empty: none).
    :ivar excluded: never offered.
    """

    allowed: frozenset[str] | None = None
    builtin: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    def select(self, tools: Mapping[str, T], is_builtin: Callable[[T], bool]) -> dict[str, T]:
        """The tools of ``tools`` (by name) this selection offers, in their order."""
        return {
            name: tool
            for name, tool in tools.items()
            if name not in self.excluded and self._offers(name, is_builtin(tool))
        }

    def unknown(self, names: Iterable[str]) -> list[str]:
        """The names the allow and exclusion lists give that no tool of ``names`` has,
        sorted. (``builtin`` may name Pi's tool ctxmodes has not, ``powershell``; it is
        passed over.)"""
        listed = (self.allowed or frozenset()) | self.excluded
        return sorted(listed - set(names))

    def _offers(self, name: str, builtin: bool) -> bool:
        if self.allowed is not None:
            return name in self.allowed
        if not builtin:
            return True
        return name not in ON_REQUEST if self.builtin is None else name in self.builtin


#: Every registered tool.
ALL_TOOLS = ToolSelection()


def default_tools(names: Iterable[str] | None) -> ToolSelection:
    """The configured core tools (Pi's ``defaultTools``; ``None``: all of them)."""
    return ToolSelection(builtin=None if names is None else frozenset(names))
