import pytest

from ctxmodes import hookimpl
from ctxmodes.errors import ConfigError, PluginError
from ctxmodes.modes import ModeRegistry, ModeSpec, mode_plugin_name
from ctxmodes.testing.plugin import isolated_plugin_manager


class Active:
    def __init__(self, session):
        self.session = session
        self.started = []

    @hookimpl
    def ctx_session_start(self, session, reason):
        self.started.append(reason)


def declaring(*names):
    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            for name in names:
                register(ModeSpec(name=name, description=f"the {name} mode", factory=Active))

    return Declarer()


def test_registry_lists_modes_by_name():
    pm = isolated_plugin_manager(declaring("beta", "alpha"))
    registry = ModeRegistry.from_plugin_manager(pm)
    assert registry.names() == ["alpha", "beta"]
    assert "alpha" in registry
    assert [m.spec.name for m in registry] == ["alpha", "beta"]


def test_unknown_mode_error_lists_installed_modes():
    registry = ModeRegistry.from_plugin_manager(isolated_plugin_manager(declaring("a", "b")))
    with pytest.raises(ConfigError, match=r"unknown mode 'c'; installed modes: a, b"):
        registry.get("c")


def test_duplicate_mode_names_both_plugins():
    pm = isolated_plugin_manager()
    pm.register(declaring("same"), name="first")
    pm.register(declaring("same"), name="second")
    with pytest.raises(PluginError, match=r"'first'.*'second'|'second'.*'first'"):
        ModeRegistry.from_plugin_manager(pm)


@pytest.mark.parametrize("name", ["", "Tree", "has space", "x" * 41, "1st"])
def test_invalid_mode_names_are_rejected(name):
    with pytest.raises(PluginError, match="invalid mode name"):
        ModeSpec(name=name, description="d", factory=Active)


def test_only_the_activated_mode_receives_lifecycle_hooks():
    pm = isolated_plugin_manager(declaring("one", "two"))
    registry = ModeRegistry.from_plugin_manager(pm)
    active = registry.activate(pm, "one", session="S")
    pm.hook.ctx_session_start(session="S", reason="startup")
    assert active.started == ["startup"]
    assert pm.get_plugin(mode_plugin_name("two")) is None

    registry.deactivate(pm, "one")
    pm.hook.ctx_session_start(session="S", reason="resume")
    assert active.started == ["startup"]
