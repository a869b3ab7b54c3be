"""What the pages tell a contributor about the project's tooling and layout holds: the test
tiers are the markers pyproject.toml registers and ``make check`` leaves out; the make targets,
Debian packages, ``CTXMODES_*`` variables, classes, functions and tables the pages name exist;
the layout names every package of the core and every folder; every command has its row in
Getting started."""

from __future__ import annotations

import argparse
import re
import subprocess

from support.doc_pages import DOCS, MARKERS, ROOT, pages

from ctxmodes.cli import build_parser

MAKEFILE = (ROOT / "Makefile").read_text()


def tier_table() -> set[str]:
    """The markers in the first column of the tiers table of docs/developing.md."""
    text = (DOCS / "developing.md").read_text()
    section = text.split("## Test tiers", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, re.M))


def test_the_tier_table_lists_every_registered_marker():
    assert tier_table() == MARKERS


def test_the_fast_tier_leaves_out_every_tier():
    match = re.search(r"^FAST_TIER := (.+)$", MAKEFILE, re.M)
    assert match is not None
    assert set(re.findall(r"\w+", match.group(1))) - {"not", "or", "and"} == tier_table()


def test_every_make_target_a_page_names_exists():
    targets = set(re.findall(r"^([\w.-]+):", MAKEFILE, re.M))
    named = {
        (page.name, target)
        for page in pages()
        for group in re.findall(r"`make ([\w .-]+)`", page.read_text())
        for target in group.split()
    }
    assert ("developing.md", "check") in named
    assert sorted((page, target) for page, target in named if target not in targets) == []


def test_every_ctxmodes_variable_a_page_names_is_read_by_the_code():
    code = "\n".join(
        path.read_text() for folder in ("core", "plugins") for path in (ROOT / folder).rglob("*.py")
    )
    named = {
        (page.name, name)
        for page in pages()
        for name in re.findall(r"\bCTXMODES_[A-Z][A-Z_]*[A-Z]\b", page.read_text())
    }
    assert ("developing.md", "CTXMODES_TRACE_PLUGINS") in named
    assert sorted((page, name) for page, name in named if f'"{name}"' not in code) == []


def layout_table() -> str:
    text = (DOCS / "index.md").read_text()
    return text.split("## Layout", 1)[1].split("\n\n", 2)[1]


def test_the_layout_names_every_package_of_the_core():
    packages = [
        path.name
        for path in sorted((ROOT / "core" / "ctxmodes").iterdir())
        if (path / "__init__.py").is_file()
    ]
    table = layout_table()
    assert "session" in packages
    unnamed = [
        name for name in packages if f"`{name}/`" not in table and f"ctxmodes/{name}/`" not in table
    ]
    assert unnamed == []


def test_the_layout_names_every_top_level_folder():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    folders = {path.split("/")[0] for path in tracked if "/" in path}
    table = layout_table()
    assert "core" in folders
    assert sorted(folder for folder in folders if f"| `{folder}/" not in table) == []


def test_every_command_has_a_row_in_getting_started():
    """A new command, the core's or a built-in mode's, gets its line in the command table."""
    parser = build_parser(argv=["--help"])
    (subcommands,) = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    text = (DOCS / "getting-started.md").read_text()
    table = text.split("## Commands", 1)[1]
    rows = set(re.findall(r"`ctxmodes (\w+)", table))
    assert {"chat", "serve"} <= set(subcommands.choices)
    assert sorted(set(subcommands.choices) - rows) == []


def test_the_debian_packages_named_are_those_make_test_installs():
    installed = re.search(r"apt-get install -y -q \\\n\s*([^;]+);", MAKEFILE)
    assert installed is not None
    text = " ".join((DOCS / "developing.md").read_text().split())
    named = re.search(r"as root, Debian's (.+?) when absent", text)
    assert named is not None
    assert set(re.findall(r"`([\w-]+)`", named.group(1))) == set(installed.group(1).split())


def test_every_name_developing_cites_is_defined():
    """The classes, functions, fixtures, tables and variables the page sends a contributor to
    (``HookRelay``, ``API_MODULES``, ``ctx_host``, ``FAST_TIER`` …) are defined in the code,
    the Makefile or pyproject.toml, or, for an environment variable, read there by name."""
    sources = [ROOT / "Makefile", ROOT / "pyproject.toml"] + [
        path
        for folder in ("core", "plugins", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
    ]
    text = "\n".join(path.read_text() for path in sources)
    names = set(re.findall(r"`([A-Za-z]\w*)`", (DOCS / "developing.md").read_text()))
    cited = {name for name in names if "_" in name or re.search(r"[a-z][A-Z]|^[A-Z][a-z]", name)}
    assert {"HookRelay", "API_MODULES", "ctx_host", "FAST_TIER"} <= cited

    # Every name defined at a line's start (a class, function, assignment, annotation or
    # Makefile variable), and every name quoted (a key, an environment variable read by name):
    # one pass each over the text, not one per name.
    definitions = re.findall(r"^\s*(?:class |def |async def )?(\w+)\b\s*(?:[:=(]|\?=)", text, re.M)
    quoted = re.findall(r"(?<=[\"'])(\w+)(?=[\"':])", text)
    defined = set(definitions) | set(quoted)
    assert sorted(cited - defined) == []
