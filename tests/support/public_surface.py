"""The declared public surface of ``ctxmodes`` and the fence around it: which modules are
public, and what a piece of source imports from ctxmodes that no public module offers (or
that it reaches past a public module for). Used by the tests of the built-in modes and of
the documentation's examples, which may import only what a third party may."""

import ast
import importlib
from collections.abc import Iterator

#: The public modules; every other module of ``ctxmodes`` is internal.
PUBLIC_MODULES = (
    "ctxmodes",
    "ctxmodes.windows",
    "ctxmodes.session",
    "ctxmodes.providers",
    "ctxmodes.sdk",
    "ctxmodes.testing",
)


def offered(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


def ctxmodes_imports(source: str) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) of every import of ``ctxmodes`` (not ``ctxmodes_*``) in
    ``source``; the name is ``None`` for ``import module``."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "ctxmodes":
                    yield node.lineno, alias.name, None
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "ctxmodes"
        ):
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def fence_violations(source: str, where: str) -> list[str]:
    """What ``source`` imports that no public module offers, or offers but from deeper."""
    found = []
    for line, module, name in ctxmodes_imports(source):
        if module not in PUBLIC_MODULES:
            homes = sorted(home for home in PUBLIC_MODULES if name in offered(home))
            hint = f"import it from {' or '.join(homes)}" if homes else "not public"
            found.append(f"{where}:{line}: {module}.{name or ''} ({hint})")
        elif name is not None and name not in offered(module):
            found.append(f"{where}:{line}: {module}.{name} (not in its __all__)")
    return found
