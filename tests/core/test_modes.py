import sys

import pytest
from pydantic import BaseModel, ConfigDict

from ctxmodes import hookimpl
from ctxmodes.errors import ConfigError, PluginError
from ctxmodes.modes import ModeRegistry, ModeSpec, missing_mode_words, mode_plugin_name
from ctxmodes.plugins import PluginRecord
from ctxmodes.session_mode import describe_change
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


def test_a_mode_named_like_a_plugin_that_is_not_loaded_says_why_and_what_loads_it():
    pm = isolated_plugin_manager(declaring("a"))
    pm.entry_point_records.append(PluginRecord("tree", "ctxmodes_tree", "ctxmodes", "blocked"))
    registry = ModeRegistry.from_plugin_manager(pm)
    with pytest.raises(ConfigError) as caught:
        registry.get("tree", where="environment: mode")
    assert str(caught.value) == (
        "environment: mode: no loaded plugin provides mode 'tree'; plugin 'tree' is blocked: "
        "remove it from plugins.block and CTXMODES_BLOCK_PLUGINS to load it"
    )


@pytest.mark.parametrize(
    ("unloaded", "words"),
    [
        ({}, "unknown mode 'fancy'; installed modes: local, off"),
        (
            {"tree": "blocked", "fancy-modes": "not allowed"},
            "unknown mode 'fancy'; installed modes: local, off; plugins not loaded: "
            "fancy-modes (not allowed), tree (blocked)",
        ),
        (
            {"fancy": "not allowed"},
            "no loaded plugin provides mode 'fancy'; plugin 'fancy' is not allowed: the allow "
            "list (plugins.allow, CTXMODES_LOAD_PLUGINS) leaves it out; add it there to load it",
        ),
    ],
)
def test_a_missing_mode_is_unknown_unless_a_plugin_of_its_name_was_not_loaded(unloaded, words):
    assert missing_mode_words("fancy", ["off", "local"], unloaded) == words


def test_no_modes_at_all_says_none():
    assert missing_mode_words("x", [], {}) == "unknown mode 'x'; installed modes: none"


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


class Misspelled:
    def __init__(self, session):
        pass

    @hookimpl
    def ctx_sesion_start(self, session, reason):  # the typo is the point
        raise AssertionError("never called")


class UnmarkedAndMisspelled:
    def __init__(self, session):
        pass

    def ctx_agent_setled(self, session):  # neither marked nor spelled right
        raise AssertionError("never called")


class ReservedPrefix:
    def __init__(self, session):
        pass

    def ctx_helper(self):  # a helper named like a hook
        raise AssertionError("never called")


class ExtraArgument:
    def __init__(self, session):
        pass

    @hookimpl
    def ctx_session_start(self, session, reason, verbose):
        raise AssertionError("never called")


class MarkedWithoutPrefix:
    def __init__(self, session):
        pass

    @hookimpl
    def project_context(self, session, projection):  # the missing prefix is the point
        raise AssertionError("never called")


class UnmarkedOverride(Active):
    def ctx_session_start(self, session, reason):  # loses the inherited @hookimpl
        raise AssertionError("never called")


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (Misspelled, "ctx_sesion_start is not a ctxmodes hook (did you mean ctx_session_start?)"),
        (
            UnmarkedAndMisspelled,
            "ctx_agent_setled is not a ctxmodes hook (did you mean ctx_agent_settled?)",
        ),
        (
            ReservedPrefix,
            "ctx_helper is not a ctxmodes hook (the ctx_ prefix is reserved for hooks)",
        ),
        (ExtraArgument, "ctx_session_start takes 'verbose', which the hook does not pass"),
        (UnmarkedOverride, "ctx_session_start is not marked @hookimpl"),
        (
            MarkedWithoutPrefix,
            "project_context is not a ctxmodes hook (did you mean ctx_project_context?)",
        ),
    ],
)
def test_a_mode_object_is_validated_when_activated(factory, message):
    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            register(ModeSpec(name="broken", description="d", factory=factory))

    pm = isolated_plugin_manager(Declarer())
    registry = ModeRegistry.from_plugin_manager(pm)
    with pytest.raises(PluginError) as raised:
        registry.activate(pm, "broken", session="S")
    text = str(raised.value)
    assert text.startswith("mode 'broken' (plugin ")
    assert message in text
    assert "\n" not in text
    assert pm.get_plugin(mode_plugin_name("broken")) is None


class Tuning(BaseModel):
    model_config = ConfigDict(extra="forbid")
    depth: int = 2


class Tuned:
    def __init__(self, session, settings: Tuning):
        self.settings = settings


def declaring_tuned():
    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            register(ModeSpec(name="tuned", description="d", factory=Tuned, settings=Tuning))
            register(ModeSpec(name="plain", description="d", factory=Active))

    return Declarer()


def test_a_mode_table_reaches_the_factory_validated():
    pm = isolated_plugin_manager(declaring_tuned())
    registry = ModeRegistry.from_plugin_manager(pm)
    tuned = registry.activate(pm, "tuned", session="S", settings={"depth": 7})
    assert tuned.settings == Tuning(depth=7)
    registry.deactivate(pm, "tuned")
    assert registry.activate(pm, "tuned", session="S").settings == Tuning()


def test_unknown_mode_settings_are_errors_naming_the_mode():
    pm = isolated_plugin_manager(declaring_tuned())
    registry = ModeRegistry.from_plugin_manager(pm)
    with pytest.raises(ConfigError, match=r"^\[modes\.tuned\]: unknown setting 'deep'"):
        registry.activate(pm, "tuned", session="S", settings={"deep": 1})
    with pytest.raises(ConfigError, match=r"^\[modes\.plain\]: mode 'plain' takes no settings"):
        registry.activate(pm, "plain", session="S", settings={"x": 1})


def test_the_host_refuses_bad_settings_before_any_session(tmp_path):
    from ctxmodes.host.runtime import AgentHost

    pm = isolated_plugin_manager(declaring_tuned())
    with pytest.raises(ConfigError, match=r"\[modes\.tuned\]: depth"):
        AgentHost(pm=pm, mode="tuned", mode_settings={"tuned": {"depth": "deep"}})


@pytest.mark.parametrize(
    ("tables", "message"),
    [
        ({"tunde": {"depth": 3}}, r"^\[modes\.tunde\]: unknown mode 'tunde'; installed modes: "),
        ({"tuned": {"depth": "deep"}}, r"^\[modes\.tuned\]: depth"),
    ],
)
def test_the_host_refuses_any_bad_mode_table_not_only_the_active_modes(tables, message):
    """A misspelled table would otherwise be ignored, and another mode's bad table would
    surface only when a session switches to that mode."""
    from ctxmodes.host.runtime import AgentHost

    pm = isolated_plugin_manager(declaring_tuned())
    with pytest.raises(ConfigError, match=message):
        AgentHost(pm=pm, mode="plain", mode_settings=tables)


def test_a_table_of_a_mode_whose_plugin_is_not_loaded_does_not_stop_the_host():
    """Blocking a plugin (as its load failure advises) must not also take editing the
    configuration: the mode cannot be switched to, so its table is not in the way."""
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.plugins import PluginRecord

    pm = isolated_plugin_manager(declaring_tuned())
    pm.entry_point_records.append(PluginRecord("sleeping", "sleeping", "sleeping", "blocked"))
    AgentHost(pm=pm, mode="plain", mode_settings={"sleeping": {"depth": 3}})


def test_a_settings_model_named_by_reference_is_imported_when_validated(tmp_path, monkeypatch):
    (tmp_path / "lazy_tuning.py").write_text(
        "from pydantic import BaseModel\n\nclass Tuning(BaseModel):\n    depth: int = 2\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = ModeSpec(name="lazy", description="d", factory=Tuned, settings="lazy_tuning:Tuning")
    assert "lazy_tuning" not in sys.modules
    built = spec.build("S", {"depth": 5})
    assert type(built.settings).__module__ == "lazy_tuning"
    assert built.settings.depth == 5
    with pytest.raises(ConfigError, match=r"^\[modes\.lazy\]: unknown setting 'deep'"):
        spec.build("S", {"deep": 1})


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_colon", "is not a model or a 'package.module:Model' reference"),
        ("a.b:c d", "is not a model or a 'package.module:Model' reference"),
    ],
)
def test_a_malformed_settings_reference_is_refused_when_declared(reference, message):
    with pytest.raises(PluginError, match=message):
        ModeSpec(name="lazy", description="d", factory=Tuned, settings=reference)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("ctxmodes_no_such_module:Model", "settings model 'ctxmodes_no_such_module:Model' failed"),
        ("ctxmodes.modes:NoSuchModel", "failed to load: module 'ctxmodes.modes' has no attribute"),
        ("ctxmodes.modes:MODE_NAME", "settings 'ctxmodes.modes:MODE_NAME' is not a pydantic model"),
    ],
)
def test_a_settings_reference_that_does_not_resolve_is_one_plugin_error(reference, message):
    spec = ModeSpec(name="lazy", description="d", factory=Tuned, settings=reference)
    with pytest.raises(PluginError, match=message) as caught:
        spec.build("S", {})
    assert "\n" not in str(caught.value)


def test_a_mode_spec_is_an_immutable_value():
    spec = ModeSpec(name="same", description="d", factory=Active, settings="pkg.mod:Model")
    with pytest.raises(AttributeError, match="immutable"):
        spec.name = "other"  # type: ignore[misc]
    twin = ModeSpec(name="same", description="d", factory=Active, settings="pkg.mod:Model")
    assert spec == twin
    assert hash(spec) == hash(twin)
    assert spec != ModeSpec(name="same", description="other", factory=Active)
    assert repr(spec).startswith("ModeSpec(name='same', description='d', factory=")


def test_the_switch_line_is_told_the_target_and_the_older_form_still_counts():
    told = []

    def describe_switch(view, target):
        told.append((view, target))
        return f"what {target} keeps"

    def describe_leaving(view):
        return "what is left behind"

    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            register(ModeSpec("new", "d", Active, describe_switch=describe_switch))
            register(ModeSpec("old", "d", Active, describe_leaving=describe_leaving))
            both = {"describe_switch": describe_switch, "describe_leaving": describe_leaving}
            register(ModeSpec("both", "d", Active, **both))
            register(ModeSpec("mute", "d", Active))

    registry = ModeRegistry.from_plugin_manager(isolated_plugin_manager(Declarer()))
    view = object()
    entering = "mute manages the context from the next prompt"
    assert describe_change(view, registry, "new", "mute") == (
        f"switching this session from new to mute: what mute keeps; {entering}"
    )
    assert told == [(view, "mute")]
    assert describe_change(view, registry, "old", "mute") == (
        f"switching this session from old to mute: what is left behind; {entering}"
    )
    assert describe_change(view, registry, "both", "mute").endswith(
        f": what mute keeps; {entering}"
    )
    assert describe_change(view, registry, "mute", "new") == (
        "switching this session from mute to new: new manages the context from the next prompt"
    )


def _declaring_one(**spec_fields):
    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            register(ModeSpec(name="mine", description="d", **spec_fields))

    return Declarer()


class Exploding:
    def __init__(self, session):
        raise RuntimeError("no backend configured")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"factory": Active, "settings": Tuning},
            "mode 'mine' (plugin 'declarer'): its factory Active takes (session), "
            "but is called with (session, settings) since the mode declares settings",
        ),
        (
            {"factory": Tuned},
            "mode 'mine' (plugin 'declarer'): its factory Tuned takes (session, settings), "
            "but is called with (session) since the mode declares no settings",
        ),
        (
            {"factory": Exploding},
            "mode 'mine' (plugin 'declarer') failed to start: "
            "RuntimeError: no backend configured (test_modes.py, line ",
        ),
    ],
)
def test_a_factory_that_cannot_build_the_mode_is_one_plugin_error(fields, message):
    pm = isolated_plugin_manager()
    pm.register(_declaring_one(**fields), name="declarer")
    registry = ModeRegistry.from_plugin_manager(pm)
    with pytest.raises(PluginError) as raised:
        registry.activate(pm, "mine", session="S")
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
    assert pm.get_plugin(mode_plugin_name("mine")) is None


def test_a_settings_class_that_is_no_pydantic_model_is_one_plugin_error():
    spec = ModeSpec(name="mine", description="d", factory=Tuned, settings=dict)  # type: ignore[arg-type]
    with pytest.raises(PluginError, match=r"^mode 'mine': settings dict is not a pydantic model"):
        spec.build("S", {})


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        (
            lambda: ModeSpec(name="My Mode", description="d", factory=Active),
            "plugin 'declarer': invalid mode name 'My Mode'",
        ),
        (
            lambda: ModeSpec(nam="mine", description="d", factory=Active),  # type: ignore[call-arg]
            "plugin 'declarer': ctx_register_modes failed: TypeError: ",
        ),
    ],
)
def test_a_mistake_in_declaring_a_mode_names_the_plugin(declare, message):
    class Declarer:
        @hookimpl
        def ctx_register_modes(self, register):
            register(declare())

    pm = isolated_plugin_manager()
    pm.register(Declarer(), name="declarer")
    with pytest.raises(PluginError) as raised:
        ModeRegistry.from_plugin_manager(pm)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
