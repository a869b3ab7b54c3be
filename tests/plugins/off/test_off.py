import ctxmodes_off
from ctxmodes.modes import ModeRegistry
from ctxmodes.testing.conformance import ModeConformance
from ctxmodes.testing.plugin import isolated_plugin_manager


class TestOffConformance(ModeConformance):
    plugin = ctxmodes_off
    mode_name = "off"


def test_off_implements_no_lifecycle_hook():
    pm = isolated_plugin_manager(ctxmodes_off)
    registry = ModeRegistry.from_plugin_manager(pm)
    mode = registry.activate(pm, "off", session=None)
    implemented = {
        name
        for name in dir(pm.hook)
        if name.startswith("ctx_")
        for impl in getattr(pm.hook, name).get_hookimpls()
        if impl.plugin is mode
    }
    assert implemented == set()
