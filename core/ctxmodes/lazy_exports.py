"""Names a package exports but imports only when first used (PEP 562).

A package maps each exported name to the module that defines it; importing the package
then costs nothing of those modules, which keeps the command line's start-up light.

Internal module: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``homes`` is imported
    from its module on first use and kept in the package; ``names`` is what ``dir`` lists."""
    listed = sorted(names)

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return list(listed)

    return __getattr__, __dir__
