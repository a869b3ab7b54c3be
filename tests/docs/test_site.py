"""The documentation site builds strictly, and a broken link would fail it."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.doc_pages import DOCS, ROOT, pages


def build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """Sphinx with every warning an error (``-W``) and every reference checked (``-n``)."""
    return subprocess.run(
        [
            *(sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-E"),
            *("-b", "html", "-d", str(out / ".doctrees"), str(source), str(out / "html")),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow  # a whole Sphinx build
def test_the_site_builds_strictly(tmp_path):
    result = build(DOCS, tmp_path)
    assert result.returncode == 0, result.stderr
    html = tmp_path / "html"
    for page in DOCS.rglob("*.md"):
        if "example-mode" in page.parts:
            continue
        assert (html / page.relative_to(DOCS)).with_suffix(".html").is_file(), page


@pytest.mark.slow  # a second build, of the configuration rather than of the pages
def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build"))
    page = source / "benchmarks.md"
    page.write_text(
        page.read_text() + "\nSee [a page](missing.md) and [a heading](models.md#missing).\n"
    )
    result = build(source, tmp_path / "out")
    assert result.returncode != 0
    assert "missing.md" in result.stderr
    assert "'missing'" in result.stderr


def test_the_readme_links_only_to_files_that_exist():
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert local, "the README links into the site"
    missing = [target for target in local if not (ROOT / target).exists()]
    assert missing == []


#: The built-in modes, each in ``plugins/<mode>/``.
MODES = sorted(path.name for path in (ROOT / "plugins").iterdir() if path.is_dir())


def exists(path: str) -> bool:
    """A path a page names is there. ``<mode>`` stands for every built-in mode, so each must
    have it; any other ``<placeholder>`` for at least one name."""
    if "<mode>" in path:
        return all(exists(path.replace("<mode>", mode)) for mode in MODES)
    pattern = re.sub(r"<[^>]+>", "*", path)
    if pattern != path:
        return any(ROOT.glob(pattern.rstrip("/")))
    return (ROOT / path).exists()


def test_the_pages_name_only_files_that_exist():
    named: list[tuple[str, str]] = []
    for page in pages():
        for path in re.findall(
            r"`((?:core|plugins|tests|bench|docs|tools|\.ci)/[^`\s]*)`", page.read_text()
        ):
            if not re.search(r"[…*]|^docs/_build/", path):
                named.append((page.name, path.split("::")[0]))
    assert named, "the pages name the files they describe"
    assert any("<mode>" in path for _, path in named)
    assert [(page, path) for page, path in named if not exists(path)] == []


def test_the_pages_name_only_python_names_that_exist():
    """A dotted ``ctxmodes…`` name in a page imports (the generated hook reference aside)."""
    named = {
        name
        for page in pages()
        if page.name != "hooks.md"
        for name in re.findall(r"`(ctxmodes(?:_\w+)?(?:\.\w+)*)`", page.read_text())
    }
    assert "ctxmodes.windows" in named
    missing = []
    for name in sorted(named):
        parts = name.split(".")
        for split in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            try:
                for attribute in parts[split:]:
                    found = getattr(found, attribute)
            except AttributeError:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert missing == []


def test_the_tests_a_page_cites_exist():
    """``tests/….py`` (`test_name`, `case-id`): each test named is defined in that module, each
    parametrized case's id written in it, so a renamed or deleted test cannot leave a claim of
    the security page without its evidence."""
    cited = [
        (page.name, path, name)
        for page in pages()
        for path, names in re.findall(r"`(tests/[^`]+\.py)`\s\(([^)]*)\)", page.read_text())
        for name in re.findall(r"`([\w-]+)`", names)
    ]
    assert any(name.startswith("test_") for _, _, name in cited)
    missing = []
    for page, path, name in cited:
        source = (ROOT / path).read_text()
        found = (
            re.search(rf"^\s*(?:async )?def {re.escape(name)}\(", source, re.M)
            if name.startswith("test_")
            else re.search(rf"[\"']{re.escape(name)}[\"']", source)
        )
        if found is None:
            missing.append((page, path, name))
    assert missing == []


def test_the_compatibility_page_names_each_difference_once():
    """Two rows of one table with the same subject would say two things about it."""
    page = DOCS / "compatibility.md"
    seen: set[str] = set()
    duplicates: list[str] = []
    for line in page.read_text().splitlines():
        if not line.startswith("|"):
            seen = set()  # a table ends at the first line that is not one of its rows
            continue
        first_cell = line.split("|")[1].strip()
        if set(first_cell) <= set("-: "):
            continue
        if first_cell in seen:
            duplicates.append(first_cell)
        seen.add(first_cell)
    assert not duplicates
