import pytest

from ctxmodes import hookimpl
from ctxmodes.errors import PluginError
from ctxmodes.plugins import PluginSelection, make_plugin_manager


class Misspelled:
    @hookimpl
    def ctx_sesion_start(self, session, reason):  # the typo is the point of the test
        raise AssertionError("never called")


class Recorder:
    def __init__(self):
        self.calls = []

    @hookimpl
    def ctx_agent_start(self, session):
        self.calls.append(session)


def test_each_call_returns_a_new_manager():
    first = make_plugin_manager(load_entrypoints=False)
    second = make_plugin_manager(load_entrypoints=False)
    assert first is not second
    first.register(Recorder(), name="only-in-first")
    assert second.get_plugin("only-in-first") is None


def test_misspelled_hook_fails_loudly():
    with pytest.raises(PluginError, match="ctx_sesion_start"):
        make_plugin_manager(load_entrypoints=False, plugins=[Misspelled()])


def test_entry_point_plugins_are_loaded_with_their_distribution():
    pm = make_plugin_manager(selection=PluginSelection())
    assert pm.get_plugin("off") is not None
    assert pm.distributions()["off"] == "ctxmodes"


def test_blocked_entry_point_is_not_loaded_and_is_reported():
    pm = make_plugin_manager(selection=PluginSelection(block=frozenset({"local"})))
    assert pm.get_plugin("local") is None
    statuses = {r.name: r.status for r in pm.entry_point_records}
    assert statuses["local"] == "blocked"


def test_allow_list_loads_only_named_plugins_and_the_essential_ones():
    pm = make_plugin_manager(selection=PluginSelection(allow=frozenset({"someone-else"})))
    statuses = {r.name: r.status for r in pm.entry_point_records}
    # The default mode survives any allow list, as pytest's essential plugins do.
    assert statuses.pop("off") == "loaded"
    assert pm.get_plugin("off") is not None
    assert set(statuses.values()) == {"not allowed"}
    # The allow list limits entry points; the core's default plugins still load.
    assert pm.get_plugin("ctxmodes.tools.builtin") is not None


def test_the_essential_off_mode_cannot_be_blocked():
    with pytest.raises(PluginError, match="plugin 'off' is essential and cannot be blocked"):
        make_plugin_manager(selection=PluginSelection(block=frozenset({"off"})))


def test_limiting_plugins_keeps_the_default_mode(monkeypatch, tmp_path):
    from ctxmodes.cli import main

    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CTXMODES_LOAD_PLUGINS", "my-mode")
    assert main(["modes"]) == 0


def test_selection_merges_config_and_environment():
    env = {"CTXMODES_BLOCK_PLUGINS": "a, b", "CTXMODES_LOAD_PLUGINS": "c"}
    selection = PluginSelection.from_env(env, allow=["d"], block=["e"])
    assert selection.block == {"a", "b", "e"}
    assert selection.allow == {"c", "d"}
    assert not selection.permits("a")
    assert selection.permits("c")
    assert not selection.permits("x")


def test_no_allow_list_permits_everything_not_blocked():
    selection = PluginSelection.from_env({}, block=["x"])
    assert selection.allow is None
    assert selection.permits("anything")
    assert not selection.permits("x")


def test_default_plugin_factories_give_each_manager_its_own_instance():
    first = make_plugin_manager(load_entrypoints=False)
    second = make_plugin_manager(load_entrypoints=False)
    tools = first.get_plugin("ctxmodes.tools.builtin")
    assert tools is not None
    assert tools is not second.get_plugin("ctxmodes.tools.builtin")


def test_default_plugins_can_be_blocked(tmp_path, monkeypatch):
    module = tmp_path / "ctx_default_probe.py"
    module.write_text(
        "from ctxmodes import hookimpl\n@hookimpl\ndef ctx_agent_start(session):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=["ctx_default_probe"])
    assert pm.get_plugin("ctx_default_probe") is not None
    blocked = make_plugin_manager(
        load_entrypoints=False,
        default_plugins=["ctx_default_probe"],
        selection=PluginSelection(block=frozenset({"ctx_default_probe"})),
    )
    assert blocked.get_plugin("ctx_default_probe") is None


def test_broken_plugin_import_is_a_clear_error():
    with pytest.raises(PluginError, match="no_such_module_for_ctxmodes"):
        make_plugin_manager(load_entrypoints=False, default_plugins=["no_such_module_for_ctxmodes"])


def test_trace_switch_reports_hook_calls(monkeypatch, capsys):
    monkeypatch.setenv("CTXMODES_TRACE_PLUGINS", "1")
    recorder = Recorder()
    pm = make_plugin_manager(load_entrypoints=False, plugins=[recorder])
    pm.hook.ctx_agent_start(session="s")
    assert recorder.calls == ["s"]
    err = capsys.readouterr().err.splitlines()
    # Arguments, the plugins reached and the outcome, as Datasette's tracing shows them.
    assert "ctxmodes trace: ctx_agent_start(session='s') -> [" in err[0]
    assert err[1] == "ctxmodes trace: ctx_agent_start returned []"


class Answering:
    @hookimpl
    def ctx_register_modes(self, register):
        from ctxmodes.modes import ModeSpec

        register(ModeSpec(name="traced", description="d", factory=lambda session: object()))


def test_mode_registration_is_traced(monkeypatch, capsys):
    from ctxmodes.modes import ModeRegistry

    monkeypatch.setenv("CTXMODES_TRACE_PLUGINS", "1")
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=(), plugins=[Answering()])
    registry = ModeRegistry.from_plugin_manager(pm)
    assert "traced" in registry
    err = capsys.readouterr().err
    assert "ctxmodes trace: ctx_register_modes(register=<function" in err
    assert "ctxmodes trace: ctx_register_modes returned []" in err


def test_trace_bounds_long_arguments(monkeypatch, capsys):
    monkeypatch.setenv("CTXMODES_TRACE_PLUGINS", "1")
    pm = make_plugin_manager(load_entrypoints=False, plugins=[Recorder()])
    pm.hook.ctx_agent_start(session="x" * 10_000)
    assert len(capsys.readouterr().err) < 1_000


def test_the_package_root_exports_what_a_plugin_author_needs():
    import ctxmodes

    for name in ctxmodes.__all__:
        assert getattr(ctxmodes, name) is not None, name
    assert set(ctxmodes.__all__) == {"__version__", "hookimpl", *ctxmodes._EXPORTS}
    from ctxmodes.events import ContextProjection
    from ctxmodes.modes import ModeSpec

    assert ctxmodes.ModeSpec is ModeSpec
    assert ctxmodes.ContextProjection is ContextProjection
