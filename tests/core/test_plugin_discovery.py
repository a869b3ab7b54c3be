"""Entry points found by reading the metadata folders agree with :mod:`importlib.metadata`."""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from ctxmodes.plugin_discovery import find_entry_points

GROUP = "ctxmodes"


def dist(where: Path, folder: str, name: str, entry_points: str | None) -> None:
    info = where / folder
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\nName: x\n"
    )
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def by_the_standard_library() -> list[tuple[str, str, str | None]]:
    found = importlib.metadata.entry_points(group=GROUP)
    return [(ep.name, ep.value, ep.dist.metadata["Name"] if ep.dist else None) for ep in found]


def ours(path: list[str]) -> list[tuple[str, str, str | None]]:
    return [(ep.name, ep.value, ep.distribution) for ep in find_entry_points(GROUP, path)]


def test_the_files_are_read_as_the_standard_library_reads_them(tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    dist(
        first,
        "My.Plugin-1.0.dist-info",
        "My.Plugin",
        "# a comment\n[console_scripts]\nmine = my:main\n\n[ctxmodes]\n  alpha = my_plugin \n"
        "beta=my_plugin.sub:Factory.build [extra]\n[other]\ngamma = no\n",
    )
    dist(first, "legacy-2.0.egg-info", "legacy", "[ctxmodes]\nold = legacy_mode\n")
    dist(first, "no_entry_points-1.0.dist-info", "no-entry-points", None)
    # The same distribution later on the path (by its normalised name) is shadowed.
    dist(second, "my_plugin-0.9.dist-info", "my_plugin", "[ctxmodes]\nshadowed = my_plugin\n")
    dist(second, "other-1.0.dist-info", "Other", "[ctxmodes]\nalpha = other_mode\n")
    path = [str(first), str(second), str(tmp_path / "missing")]
    monkeypatch.setattr(sys, "path", path)
    expected = sorted(by_the_standard_library())
    assert sorted(ours(path)) == expected
    assert ("beta", "my_plugin.sub:Factory.build [extra]", "My.Plugin") in expected
    assert not any(name == "shadowed" for name, _, _ in expected)


def test_the_installed_plugins_are_found_as_the_standard_library_finds_them():
    expected = [(ep.name, ep.value) for ep in importlib.metadata.entry_points(group=GROUP)]
    assert [(ep.name, ep.value) for ep in find_entry_points(GROUP)] == expected
    assert {"off", "local", "tree", "remote"} <= {name for name, _ in expected}


def test_an_archive_on_the_path_is_left_to_the_standard_library(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        bundle.writestr("zipped-1.0.dist-info/entry_points.txt", "[ctxmodes]\nzipped = zipped\n")
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    found = {ep.name: ep for ep in find_entry_points(GROUP)}
    assert found["zipped"].distribution == "zipped"
    assert found["zipped"].value == "zipped"


def test_loading_resolves_the_attribute_path(tmp_path, monkeypatch):
    (tmp_path / "nested_plugin.py").write_text("class Factory:\n    class Inner:\n        pass\n")
    dist(
        tmp_path,
        "nested_plugin-1.0.dist-info",
        "nested-plugin",
        "[ctxmodes]\nn = nested_plugin:Factory.Inner\n",
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    (found,) = [ep for ep in find_entry_points(GROUP) if ep.name == "n"]
    assert found.load().__qualname__ == "Factory.Inner"


def test_a_malformed_value_fails_to_load(tmp_path):
    dist(tmp_path, "bad-1.0.dist-info", "bad", "[ctxmodes]\nbad = not a module\n")
    (found,) = find_entry_points(GROUP, [str(tmp_path)])
    with pytest.raises(ValueError, match="malformed entry point value"):
        found.load()
