"""The built-in system prompt points the model at ctxmodes' own documentation, for a user
who asks about ctxmodes itself (as Pi's points at Pi's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxmodes.host import system_prompt
from ctxmodes.host.system_prompt import build_system_prompt
from ctxmodes.own_documentation import own_documentation
from ctxmodes.resources import LoadedResources
from ctxmodes.tools.files import ReadTool

ROOT = Path(__file__).resolve().parents[3]


def test_a_checkout_points_at_its_own_pages_and_every_page_named_exists() -> None:
    found = own_documentation()
    assert found is not None
    assert (found.readme, found.pages) == (ROOT / "README.md", ROOT / "docs")
    prompt = build_system_prompt([ReadTool()], Path("/project"))
    assert f"- Overview: {found.readme}" in prompt
    [pages] = re.findall(r"^- Pages: \S+ \((.*)\)$", prompt, flags=re.M)
    named = re.findall(r"([\w/-]+(?:\.md|/))", pages)
    assert len(named) == 8
    assert all((found.pages / name).exists() for name in named), named


def test_no_pointer_without_a_tool_to_read_it_or_without_the_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "ctxmodes" not in build_system_prompt([], Path("/project"))
    monkeypatch.setattr(system_prompt, "own_documentation", lambda: None)
    assert "ctxmodes" not in build_system_prompt([ReadTool()], Path("/project"))


def test_a_user_s_system_prompt_replaces_the_pointer_too() -> None:
    resources = LoadedResources(system_prompt="Only this.")
    assert build_system_prompt([ReadTool()], Path("/p"), resources).startswith("Only this.")
    assert "Overview" not in build_system_prompt([ReadTool()], Path("/p"), resources)
