"""The "Writing a mode" page's example is a real distribution in docs/example-mode/: its
files are the page's, verbatim, and its own tests (the conformance suite among them) run
here. tests/test_packaging.py builds and installs it beside ctxmodes."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from support.doc_pages import DOCS, blocks

EXAMPLE = DOCS / "example-mode"
FILES = ("pyproject.toml", "recent_turns.py", "script.json", "test_recent_turns.py")


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the example's tests import it by name
    spec.loader.exec_module(module)
    return module


_load("recent_turns", EXAMPLE / "recent_turns.py")
_example_tests = _load("test_recent_turns", EXAMPLE / "test_recent_turns.py")

# Collected here as if they were the example's own test run.
TestRecentTurns = _example_tests.TestRecentTurns
test_the_model_sees_only_the_latest_turns = _example_tests.test_the_model_sees_only_the_latest_turns


def page_blocks() -> dict[str, str]:
    """The page's code blocks whose first line names an example file (``# recent_turns.py``)."""
    found: dict[str, str] = {}
    for block in blocks(DOCS / "writing-a-mode.md"):
        match = re.fullmatch(r"(?:#|//) ([\w.]+)", block.first_line)
        if match and match.group(1) in FILES:
            found[match.group(1)] = block.body.partition("\n")[2]
    return found


@pytest.mark.parametrize("name", FILES)
def test_the_page_shows_each_file_verbatim(name):
    blocks = page_blocks()
    assert name in blocks, f"the page does not show {name}"
    assert blocks[name] == (EXAMPLE / name).read_text()
