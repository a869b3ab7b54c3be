"""docs/dependencies.md says why each dependency is there: every requirement of pyproject.toml
is named in exactly one row of its table, the table names nothing pyproject.toml does not
require (the Debian packages aside), and everything the code imports from outside the
standard library is required by pyproject.toml itself, not only brought by another package."""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from importlib.metadata import packages_distributions

import pytest
from support.doc_pages import DOCS, PYPROJECT, ROOT

#: The folders whose imports are checked: what ships, and what tests and measures it.
CODE = ("core", "plugins", "tests", "bench", "docs")


def canonical(name: str) -> str:
    """A distribution's name as packaging compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def required() -> set[str]:
    """Every distribution pyproject.toml requires: to build, to run, in any extra."""
    project = PYPROJECT["project"]
    requirements = [
        *PYPROJECT["build-system"]["requires"],
        *project["dependencies"],
        *(line for extra in project["optional-dependencies"].values() for line in extra),
    ]
    return {canonical(re.split(r"[\s;<>=!~\[]", line, maxsplit=1)[0]) for line in requirements}


def explained() -> list[str]:
    """The packages the table's rows name, one entry per naming: the first cell without its
    parenthesised remarks, split at commas and "and". Debian's packages are left out."""
    names = []
    for line in (DOCS / "dependencies.md").read_text().splitlines():
        cells = line.split(" | ")
        if not line.startswith("| ") or len(cells) < 2 or set(cells[1]) <= {"-", " ", "|"}:
            continue
        first = cells[0].removeprefix("| ")
        if first == "package" or "Debian" in first:
            continue
        first = re.sub(r"\([^)]*\)", "", first)
        names += [canonical(name.strip()) for name in re.split(r",| and ", first) if name.strip()]
    return names


def imported_distributions() -> dict[str, set[str]]:
    """Top-level module → the installed distributions providing it, for every module the code
    imports that is neither the standard library nor its own (ctxmodes, tests' helpers)."""
    providers = packages_distributions()
    found: dict[str, set[str]] = {}
    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top in sys.stdlib_module_names or top not in providers:
                        continue  # the standard library, or a file of this repository
                    if not top.startswith("ctxmodes"):
                        found[top] = {canonical(name) for name in providers[top]}
    return found


def test_the_table_is_read():
    names = explained()
    assert {"pluggy", "httpx", "aiohttp", "pytest"} <= set(names)


def test_every_requirement_is_explained_once():
    counts = Counter(explained())
    assert sorted(required() - set(counts)) == [], "required but not explained"
    assert sorted(name for name, count in counts.items() if count > 1) == [], "explained twice"


def test_the_table_explains_nothing_that_is_not_required():
    assert sorted(set(explained()) - required()) == []


@pytest.mark.slow  # parses every file of the repository
def test_everything_imported_is_required_directly():
    needed = required()
    undeclared = {
        module: sorted(distributions)
        for module, distributions in imported_distributions().items()
        if not distributions & needed
    }
    assert "pydantic" in imported_distributions()
    assert undeclared == {}
