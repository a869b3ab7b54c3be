"""Module docstrings are where a newcomer learns what a package holds: every package of the
core and of the built-in modes has one, and every module it names (``:mod:`...```) exists."""

from __future__ import annotations

import ast
import inspect
import re
import tokenize
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


def module_docstring(path: Path) -> str | None:
    """``ast.get_docstring`` of the module, read from its first tokens only: parsing every
    module whole is most of this file's time."""
    with path.open(encoding="utf-8") as source:
        for token in tokenize.generate_tokens(source.readline):
            if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING):
                continue
            if token.type != tokenize.STRING:
                return None
            value = ast.literal_eval(token.string)
            return inspect.cleandoc(value) if isinstance(value, str) else None
    return None


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
        if path.name == "__init__.py" and not module_docstring(path)
    ]
    assert undocumented == []


def test_the_docstring_read_from_the_first_tokens_is_the_parsers() -> None:
    for _, path in modules()[::25]:
        assert module_docstring(path) == ast.get_docstring(ast.parse(path.read_text())), path


def test_every_module_a_docstring_names_exists():
    # Every module of ctxmodes and of the built-in modes is a file of modules(): looking a name
    # up there, not importing it, keeps this test from importing the whole code base.
    existing = {name for name, _ in modules()}
    missing = []
    for name, path in modules():
        docstring = module_docstring(path) or ""
        for reference in MODULE_REFERENCE.findall(docstring):
            target = absolute(reference, name, path.name == "__init__.py")
            if target.split(".")[0].startswith("ctxmodes") and target not in existing:
                missing.append(f"{path.relative_to(ROOT)}: {reference}")
    assert missing == []
