"""The core never imports a mode, and modes never import each other: a built-in mode is a
plugin like any third party's, found only through its entry point."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODE_PACKAGES = {path.name: f"ctxmodes_{path.name}" for path in (ROOT / "plugins").iterdir()}


def imported_modules(path: Path, mentioning: str = "") -> set[str]:
    """The top-level names of every absolute import in ``path`` (none in a file that does
    not mention ``mentioning``: such a file cannot import it, and parsing is the cost)."""
    return {name.split(".")[0] for name in imported_paths(path, mentioning)}


def test_core_imports_no_mode():
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            imported_modules(path, "ctxmodes_") & set(MODE_PACKAGES.values())
        )
        for path in (ROOT / "core").rglob("*.py")
    }
    assert {path: mods for path, mods in offenders.items() if mods} == {}


def test_modes_import_no_other_mode():
    for directory, package in MODE_PACKAGES.items():
        others = set(MODE_PACKAGES.values()) - {package}
        for path in (ROOT / "plugins" / directory).rglob("*.py"):
            assert not imported_modules(path, "ctxmodes_") & others, path


def imported_paths(path: Path, mentioning: str = "") -> set[str]:
    """Full dotted names of every absolute import in ``path`` (see :func:`imported_modules`
    for ``mentioning``)."""
    text = path.read_text()
    if mentioning not in text:
        return set()
    tree = ast.parse(text, filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


KIT = "ctxmodes.windows"


def uses_kit(path: Path) -> bool:
    return any(name == KIT or name.startswith(f"{KIT}.") for name in imported_paths(path, KIT))


def test_inside_the_core_only_the_cli_and_test_support_use_the_kit():
    core = ROOT / "core" / "ctxmodes"
    users = {
        str(path.relative_to(core))
        for path in core.rglob("*.py")
        if uses_kit(path) and path.relative_to(core).parts[0] != "windows"
    }
    # The front ends (command line, embedding API, terminal) show the contract's state.
    front_ends = ("cli", "testing", "sdk", "tui")
    assert {user for user in users if user.split("/")[0] not in front_ends} == set()


def test_modes_use_the_kit_through_its_facade_only():
    for path in (ROOT / "plugins").rglob("*.py"):
        internals = {name for name in imported_paths(path, KIT) if name.startswith(f"{KIT}.")}
        assert internals == set(), f"{path.relative_to(ROOT)} imports {sorted(internals)}"


def test_the_facade_declares_what_it_exports():
    import ctxmodes.windows as kit

    assert sorted(kit.__all__) == sorted(set(kit.__all__))
    for name in kit.__all__:
        assert getattr(kit, name) is not None


def test_hookimpl_is_imported_one_way():
    offenders = [
        str(path.relative_to(ROOT))
        for directory in ("core", "plugins", "tests")
        for path in (ROOT / directory).rglob("*.py")
        if path not in (ROOT / "core" / "ctxmodes" / "__init__.py", Path(__file__))
        and "from ctxmodes.hookspecs import hookimpl" in path.read_text()
    ]
    assert offenders == []
