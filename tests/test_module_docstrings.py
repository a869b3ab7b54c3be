"""Module docstrings are where a newcomer learns what a package holds: every package of the
core and of the built-in modes has one, and every module it names (``:mod:`...```) exists."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Folder → the import path of the packages in it (see the layout in docs/index.md).
SOURCE_ROOTS = [ROOT / "core", *sorted((ROOT / "plugins").iterdir())]
MODULE_REFERENCE = re.compile(r":mod:`~?([\w.]+)`")


def modules() -> list[tuple[str, Path]]:
    """(dotted name, file) of every module of ctxmodes and of the built-in modes."""
    found = []
    for source_root in SOURCE_ROOTS:
        for path in sorted(source_root.rglob("*.py")):
            parts = list(path.relative_to(source_root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append((".".join(parts), path))
    return found


def absolute(reference: str, module: str, is_package: bool) -> str:
    """A ``:mod:`` target as Sphinx reads it: a leading dot is relative to the package."""
    if not reference.startswith("."):
        return reference
    package = module if is_package else module.rpartition(".")[0]
    dots = len(reference) - len(reference.lstrip("."))
    base = package.split(".")[: len(package.split(".")) - (dots - 1)]
    return ".".join([*base, reference.lstrip(".")])


def test_the_layout_is_found():
    names = {name for name, _ in modules()}
    assert {"ctxmodes", "ctxmodes.windows", "ctxmodes_tree", "ctxmodes_remote.service"} <= names


def test_every_package_says_what_it_is_for():
    undocumented = [
        str(path.relative_to(ROOT))
        for _, path in modules()
        if path.name == "__init__.py" and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert undocumented == []


def test_every_module_a_docstring_names_exists():
    missing = []
    for name, path in modules():
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        for reference in MODULE_REFERENCE.findall(docstring):
            target = absolute(reference, name, path.name == "__init__.py")
            if target.split(".")[0].startswith("ctxmodes") and not importlib.util.find_spec(target):
                missing.append(f"{path.relative_to(ROOT)}: {reference}")
    assert missing == []
