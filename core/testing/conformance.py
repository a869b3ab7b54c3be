"""The mode conformance suite: what every mode, built-in or third-party, must satisfy.

Subclass :class:`ModeConformance` in a test module, set ``plugin`` (the object or module
holding the mode's ``ctx_register_modes``) and ``mode_name``; pytest then runs every check
against a fresh plugin manager holding only that plugin.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from ctxmodes.hooks import HookRelay
from ctxmodes.modes import ModeRegistry, mode_plugin_name
from ctxmodes.offline import OfflineSession
from ctxmodes.plugins import CtxPluginManager
from ctxmodes.testing.plugin import isolated_plugin_manager


class ModeConformance:
    """Base class of the suite; not collected by itself (its name does not start with Test)."""

    plugin: ClassVar[object]
    mode_name: ClassVar[str]

    @pytest.fixture
    def pm(self) -> CtxPluginManager:
        return isolated_plugin_manager(self.plugin)

    @pytest.fixture
    def registry(self, pm: CtxPluginManager) -> ModeRegistry:
        return ModeRegistry.from_plugin_manager(pm)

    @pytest.fixture
    def offline_session(self, tmp_path: Path) -> OfflineSession:
        from ctxmodes.session.manager import SessionManager

        manager = SessionManager.create(cwd=tmp_path, session_dir=tmp_path / "sessions")
        return OfflineSession(manager, mode_name=self.mode_name, cwd=tmp_path)

    def test_declares_its_mode(self, registry: ModeRegistry) -> None:
        spec = registry.get(self.mode_name).spec
        assert spec.description.strip(), "a mode needs a description for `ctxmodes modes`"
        assert "\n" not in spec.description, "the description is shown on one line"

    def test_is_inert_until_activated(self, pm: CtxPluginManager) -> None:
        # Before activation only the registration hook may be implemented at module level;
        # lifecycle hooks of an unselected mode must never run.
        lifecycle = {
            impl.plugin_name
            for name in dir(pm.hook)
            if name.startswith("ctx_") and name != "ctx_register_modes"
            for impl in getattr(pm.hook, name).get_hookimpls()
        }
        assert lifecycle == set()

    def test_activation_registers_valid_hooks(
        self, pm: CtxPluginManager, registry: ModeRegistry, offline_session: OfflineSession
    ) -> None:
        mode_object = registry.activate(pm, self.mode_name, offline_session)
        assert pm.get_plugin(mode_plugin_name(self.mode_name)) is mode_object
        pm.check_pending()  # a misspelled hook implementation fails here
        registry.deactivate(pm, self.mode_name)
        assert pm.get_plugin(mode_plugin_name(self.mode_name)) is None

    def test_session_lifecycle_keeps_existing_lines(
        self, pm: CtxPluginManager, registry: ModeRegistry, offline_session: OfflineSession
    ) -> None:
        manager = offline_session.session_manager
        manager.append_custom_entry("conformance-probe", {"keep": "me"})
        path = manager.session_file
        assert path is not None
        before = path.read_bytes()
        registry.activate(pm, self.mode_name, offline_session)
        relay = HookRelay(pm, offline_session)
        relay.session_start("startup")
        relay.session_shutdown("quit")
        after = path.read_bytes()
        assert after.startswith(before), "a mode may append to a session file, never rewrite it"
