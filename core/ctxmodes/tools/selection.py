"""Which of the registered tools a session offers the model: Pi's ``--tools``,
``--no-tools``, ``--no-builtin-tools`` and ``--exclude-tools``.

As in Pi, an allow list (``--tools``; ``--no-tools`` is an empty one) applies to every tool,
the core's and the plugins' (a mode's ``new_context``, ``history`` and ``notes`` included);
the core's search tools (``ls``, ``find``, ``grep``) are offered only when a list names them;
``--no-builtin-tools`` drops the core's own tools and keeps the plugins'; an exclusion list
drops its tools whatever else says.

The tools are offered in Pi's order, which the request and the system prompt's list both
follow: a list's tools in the order it names them, else Pi's ``read``, ``bash``, ``edit``,
``write``; then the core's other tools, then the plugins', each in the order they were
registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

T = TypeVar("T")

#: The core's tools offered only when a list names them, as in Pi (its search tools).
ON_REQUEST: Final = frozenset({"ls", "find", "grep"})

#: The order of the core's tools when no list names them: Pi's default tools.
PI_DEFAULT_ORDER: Final = ("read", "bash", "edit", "write")


@dataclass(frozen=True, slots=True)
class ToolSelection:
    """The tools a session offers.

    :ivar allowed: the only tools offered, whoever registers them, in the order given
        (``None``: no such list).
    :ivar builtin: the core's own tools offered when there is no allow list, in the order
        given (``None``: all of them but the search tools, which Pi offers only when asked
        for; empty: none).
    :ivar excluded: never offered.
    """

    allowed: tuple[str, ...] | None = None
    builtin: tuple[str, ...] | None = None
    excluded: frozenset[str] = frozenset()

    def select(self, tools: Mapping[str, T], is_builtin: Callable[[T], bool]) -> dict[str, T]:
        """The tools of ``tools`` (by name, in their registration order) this selection
        offers, in Pi's order (see the module's docstring)."""
        offered = [
            name
            for name, tool in tools.items()
            if name not in self.excluded and self._offers(name, is_builtin(tool))
        ]
        named = self._named_order()
        first = [name for name in named if name in offered]
        rest = [name for name in offered if name not in named]
        rest.sort(key=lambda name: not is_builtin(tools[name]))  # stable: the core's first
        return {name: tools[name] for name in first + rest}

    def unknown(self, names: Iterable[str]) -> list[str]:
        """The names the allow and exclusion lists give that no tool of ``names`` has,
        sorted. (``builtin`` may name Pi's tool ctxmodes has not, ``powershell``; it is
        passed over.)"""
        listed = set(self.allowed or ()) | self.excluded
        return sorted(listed - set(names))

    def _named_order(self) -> tuple[str, ...]:
        if self.allowed is not None:
            return self.allowed
        return PI_DEFAULT_ORDER if self.builtin is None else self.builtin

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
    return ToolSelection(builtin=None if names is None else unique(names))


def unique(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in their order, each once."""
    return tuple(dict.fromkeys(names))
