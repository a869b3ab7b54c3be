"""pytest fixtures for testing one plugin in isolation.

``ctx_plugin_manager`` builds a *fresh* plugin manager holding only the plugins a test names:
no entry points, no defaults, so a test never depends on what happens to be installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pytest

from ctxmodes.plugins import CtxPluginManager, make_plugin_manager


class PluginManagerFactory(Protocol):
    def __call__(self, *plugins: object) -> CtxPluginManager: ...


def isolated_plugin_manager(*plugins: object) -> CtxPluginManager:
    """A new manager with the hookspecs and exactly ``plugins`` registered."""
    return make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=plugins)


@pytest.fixture
def ctx_plugin_manager() -> Callable[..., CtxPluginManager]:
    """Factory: ``ctx_plugin_manager(plugin, ...)`` returns a fresh, isolated manager."""
    return isolated_plugin_manager
