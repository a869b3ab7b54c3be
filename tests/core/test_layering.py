"""The core never imports a mode, and modes never import each other: a built-in mode is a
plugin like any third party's, found only through its entry point."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODE_PACKAGES = {path.name: f"ctxmodes_{path.name}" for path in (ROOT / "plugins").iterdir()}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_imports_no_mode():
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_modules(path) & set(MODE_PACKAGES.values()))
        for path in (ROOT / "core").rglob("*.py")
    }
    assert {path: mods for path, mods in offenders.items() if mods} == {}


def test_modes_import_no_other_mode():
    for directory, package in MODE_PACKAGES.items():
        others = set(MODE_PACKAGES.values()) - {package}
        for path in (ROOT / "plugins" / directory).rglob("*.py"):
            assert not imported_modules(path) & others, path
