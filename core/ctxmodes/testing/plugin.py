"""pytest fixtures for testing one plugin in isolation.

``ctx_plugin_manager`` builds a *fresh* plugin manager holding only the plugins a test names:
no entry points, no defaults, and no selection from the environment, so a test never depends
on what happens to be installed or on the developer's ``CTXMODES_*`` variables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ctxmodes.plugins import CtxPluginManager, PluginSelection, make_plugin_manager

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.testing.harness import HostHarness


class PluginManagerFactory(Protocol):
    def __call__(self, *plugins: object) -> CtxPluginManager: ...


def isolated_plugin_manager(*plugins: object) -> CtxPluginManager:
    """A new manager with the hookspecs and exactly ``plugins`` registered."""
    return make_plugin_manager(
        load_entrypoints=False, selection=PluginSelection(), default_plugins=(), plugins=plugins
    )


@pytest.fixture
def ctx_plugin_manager() -> Callable[..., CtxPluginManager]:
    """Factory: ``ctx_plugin_manager(plugin, ...)`` returns a fresh, isolated manager."""
    return isolated_plugin_manager


@pytest.fixture
def ctx_session_manager(tmp_path: Path) -> Iterator[SessionManager]:
    """A new session file in a temporary directory (durability ``none``: tests need no fsync)."""
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.writer import Durability

    manager = SessionManager.create(tmp_path, tmp_path / "sessions", durability=Durability.NONE)
    yield manager
    manager.close()


@pytest.fixture
def ctx_host(tmp_path: Path) -> Iterator[Callable[..., HostHarness]]:
    """Factory: ``ctx_host(responses, plugins=[my_mode], mode="mine")`` starts a real host on
    a new session with the scripted model (see :class:`~ctxmodes.testing.harness.HostHarness`);
    every host made is closed after the test."""
    from ctxmodes.testing.harness import HostHarness

    made: list[HostHarness] = []

    def make(responses: list[dict[str, Any]], **options: Any) -> HostHarness:
        harness = HostHarness(tmp_path / f"host{len(made)}", responses, **options)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()
