"""The declared public surface, and the fence around it: the built-in modes and the service
import from ctxmodes only what a third party's mode may import — the names a public module
lists in ``__all__`` — and never reach past a public module into the one that defines it."""

import ast
import importlib
from pathlib import Path

import pytest
from support.public_surface import PUBLIC_MODULES, fence_violations

ROOT = Path(__file__).resolve().parents[2]


def test_modes_and_the_service_import_only_public_names() -> None:
    violations = [
        violation
        for path in sorted((ROOT / "plugins").rglob("*.py"))
        for violation in fence_violations(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert violations == []


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_module_declares_what_it_offers(module: str) -> None:
    imported = importlib.import_module(module)
    names = imported.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(imported, name) is not None, f"{module}.{name}"


def test_the_fence_catches_a_private_and_a_deep_import() -> None:
    source = (
        "from ctxmodes.session.manager import SessionManager\n"
        "from ctxmodes.windows.state import WindowState\n"
        "from ctxmodes.host.runtime import AgentHost\n"
        "from ctxmodes import not_a_public_name\n"
        "import ctxmodes.hooks\n"
        "from ctxmodes import hookimpl\n"
        "from ctxmodes.windows import WindowState as Offered\n"
    )
    assert fence_violations(source, "probe.py") == [
        "probe.py:1: ctxmodes.session.manager.SessionManager (import it from ctxmodes.session)",
        "probe.py:2: ctxmodes.windows.state.WindowState (import it from ctxmodes.windows)",
        "probe.py:3: ctxmodes.host.runtime.AgentHost (not public)",
        "probe.py:4: ctxmodes.not_a_public_name (not in its __all__)",
        "probe.py:5: ctxmodes.hooks. (not public)",
    ]


def test_every_other_module_says_it_is_internal() -> None:
    """A reader opening any module knows whether it is part of the contract: each internal
    top-level module or package says so (a package for all of its submodules), each public
    package says that its submodules are internal, and private files start with ``_``."""
    package = ROOT / "core" / "ctxmodes"
    unmarked = []
    for path in sorted([*package.glob("*.py"), *package.glob("*/__init__.py")]):
        relative = path.relative_to(package.parent)
        dotted = ".".join(
            relative.parent.parts if path.name == "__init__.py" else relative.with_suffix("").parts
        )
        if path.name.startswith("_") and path.name != "__init__.py":
            continue
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        if dotted in PUBLIC_MODULES:
            marked = dotted == "ctxmodes" or "submodules are internal" in " ".join(
                docstring.split()
            )
        else:
            marked = any(line.startswith("Internal") for line in docstring.splitlines())
        if not marked:
            unmarked.append(dotted)
    assert unmarked == []
