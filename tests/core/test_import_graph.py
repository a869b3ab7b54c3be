"""The house drawn from the imports: every import of a ``ctxmodes*`` package in the core, the
modes, the tests and the benchmarks resolves, by path alone, to the file that defines what it
imports — ``core/ctxmodes/…`` for ``ctxmodes``, ``plugins/<mode>/ctxmodes_<mode>/…`` for a
mode — so a reader, an editor or a structure tool sees every edge without installing or
importing anything. Nothing here is imported; the files are only parsed."""

from __future__ import annotations

import ast
import functools
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("core", "plugins", "tests", "bench")


def package_folder(top: str) -> Path | None:
    """Where the package named ``top`` lives, by the layout's rule (``None``: not ours)."""
    if top == "ctxmodes":
        return ROOT / "core" / "ctxmodes"
    if top.startswith("ctxmodes_"):
        return ROOT / "plugins" / top.removeprefix("ctxmodes_") / top
    return None


def module_file(dotted: str) -> Path | None:
    top, *rest = dotted.split(".")
    folder = package_folder(top)
    if folder is None:
        return None
    path = folder.joinpath(*rest)
    for candidate in (path / "__init__.py", path.with_suffix(".py") if rest else None):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def is_ours(dotted: str) -> bool:
    return package_folder(dotted.split(".")[0]) is not None


def absolute(node: ast.ImportFrom, path: Path) -> str:
    """The module an import names, relative imports resolved against ``path``'s package."""
    if node.level == 0:
        return node.module or ""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[: len(parts) - node.level]
    folder_parts = [p for p in package if p.startswith("ctxmodes")]
    start = package.index(folder_parts[0]) if folder_parts else len(package)
    base = ".".join(package[start:])
    return f"{base}.{node.module}" if node.module else base


def names_bound(node: ast.AST) -> Iterator[str]:
    """The names a statement binds in its module: a definition, an assignment, an import."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            yield from (leaf.id for leaf in ast.walk(target) if isinstance(leaf, ast.Name))
    elif isinstance(node, ast.Import):
        yield from (alias.asname or alias.name.split(".")[0] for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        yield from (alias.asname or alias.name for alias in node.names)


@functools.cache
def first_binding(path: Path) -> dict[str, ast.AST]:
    """For each name the module at ``path`` binds, the first statement that binds it (in
    :func:`ast.walk`'s order): one walk of the module, whatever the number of look-ups."""
    found: dict[str, ast.AST] = {}
    for node in ast.walk(parsed(path)):
        for name in names_bound(node):
            found.setdefault(name, node)
    return found


def defining_file(
    module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
) -> Path | None:
    """The file that defines ``name`` as ``from module import name`` finds it: a submodule,
    a definition in the module, or, through the module's own imports (those under
    ``TYPE_CHECKING`` included: that is how a lazy facade declares its names), the file that
    defines it there. ``None`` when the name cannot be found."""
    if (module, name) in seen:
        return None
    seen = seen | {(module, name)}
    path = module_file(module)
    if path is None:
        return None
    if path.name == "__init__.py" and (submodule := module_file(f"{module}.{name}")):
        return submodule
    node = first_binding(path).get(name)
    if isinstance(node, ast.Import):
        alias = next(a for a in node.names if (a.asname or a.name.split(".")[0]) == name)
        target = alias.name if alias.asname else alias.name.split(".")[0]
        return module_file(target) if is_ours(target) else path
    if isinstance(node, ast.ImportFrom):
        alias = next(a for a in node.names if (a.asname or a.name) == name)
        source = absolute(node, path)
        return defining_file(source, alias.name, seen) if is_ours(source) else path
    return None if node is None else path


def imports_in(path: Path, tree: ast.Module) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) of each import of a ``ctxmodes*`` package in ``path``'s ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_ours(alias.name):
                    yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node, path)
            if is_ours(module):
                for alias in node.names:
                    yield node.lineno, module, alias.name


def unresolved(path: Path, tree: ast.Module) -> list[str]:
    where = path.relative_to(ROOT)
    found = []
    for line, module, name in imports_in(path, tree):
        if name is None or name == "*":
            resolved = module_file(module)
        else:
            resolved = defining_file(module, name)
        if resolved is None:
            found.append(f"{where}:{line}: {module}{'.' + name if name else ''}")
    return found


def scanned_files() -> list[Path]:
    return sorted(path for folder in SCANNED for path in (ROOT / folder).rglob("*.py"))


@pytest.mark.slow  # parses every file of the repository
def test_every_ctxmodes_import_resolves_to_a_file() -> None:
    failures = [failure for path in scanned_files() for failure in unresolved(path, parsed(path))]
    assert failures == []


def test_the_entry_points_resolve_to_files() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    targets = [target for group in project["entry-points"].values() for target in group.values()]
    assert targets
    for target in targets:
        module, _, attribute = target.partition(":")
        assert module_file(module) is not None, target
        if attribute:
            assert defining_file(module, attribute) is not None, target


@pytest.mark.slow  # parses every file of the repository
def test_the_graph_has_its_floors() -> None:
    """The edges found reach every floor of the house: the core, each mode, the tests."""
    reached = {
        resolved.relative_to(ROOT).parts[:2]
        for path in scanned_files()
        for _, module, name in imports_in(path, parsed(path))
        if (resolved := module_file(module) if name is None else defining_file(module, name))
    }
    modes = {("plugins", folder.name) for folder in (ROOT / "plugins").iterdir() if folder.is_dir()}
    assert {("core", "ctxmodes"), *modes} <= reached


def test_an_import_that_names_nothing_is_reported() -> None:
    probe = ROOT / "tests" / "probe.py"
    source = (
        "from ctxmodes.nowhere import thing\n"
        "from ctxmodes import not_a_name\n"
        "import ctxmodes_tree.missing\n"
        "from ctxmodes import hookimpl, SessionView\n"
        "from ctxmodes.session import codec\n"
        "from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE\n"
    )
    assert unresolved(probe, ast.parse(source)) == [
        "tests/probe.py:1: ctxmodes.nowhere.thing",
        "tests/probe.py:2: ctxmodes.not_a_name",
        "tests/probe.py:3: ctxmodes_tree.missing",
    ]
    assert defining_file("ctxmodes", "SessionView") == ROOT / "core/ctxmodes/session_view.py"
