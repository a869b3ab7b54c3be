import ctxmodes_off
from ctxmodes.modes import ModeRegistry
from ctxmodes.testing.conformance import ModeConformance
from ctxmodes.testing.plugin import isolated_plugin_manager


class TestOffConformance(ModeConformance):
    plugin = ctxmodes_off
    mode_name = "off"


def test_off_implements_only_the_marker_stripping_projection():
    # Off adds no tools, markers or entries, so no other hook has anything to do; it
    # projects only to keep window markers of a formerly managed session from the model.
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
    assert implemented == {"ctx_project_context"}
