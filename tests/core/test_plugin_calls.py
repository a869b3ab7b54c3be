"""Registration hooks called without a plugin manager answer as the manager does, and leave
every unusual plugin to it."""

from __future__ import annotations

import os
import sys

import pytest

from ctxmodes.errors import PluginError
from ctxmodes.plugin_calls import registration_callers
from ctxmodes.plugin_selection import PluginSelection, select_entry_points
from ctxmodes.plugins import each_plugin, make_plugin_manager

HOOK = "ctx_register_cli_commands"


def callers_for(selection=None):
    return registration_callers(HOOK, select_entry_points(selection or PluginSelection()))


def registered(callers):
    names = []
    for plugin_name, call in callers:
        call(register=lambda command, plugin_name=plugin_name: names.append((plugin_name, command)))
    return names


def test_the_installed_plugins_register_what_a_manager_has_them_register():
    selection = PluginSelection()
    direct = callers_for(selection)
    assert direct is not None
    pm = make_plugin_manager(selection=selection, default_plugins=())
    through_manager = sorted(each_plugin(pm, HOOK))
    assert registered(direct) == registered(through_manager)
    assert {command.name for _, command in registered(direct)} >= {"demo", "serve"}


def test_a_blocked_plugin_is_not_imported(installed):
    installed("probe_blocked", "raise RuntimeError('imported')\n")
    callers = callers_for(PluginSelection(block=frozenset({"probe_blocked"})))
    assert callers is not None
    assert "probe_blocked" not in sys.modules


def test_a_plugin_that_fails_to_import_is_one_error_naming_it(installed):
    installed("probe_broken", "raise RuntimeError('no network here')\n")
    with pytest.raises(PluginError) as caught:
        callers_for()
    assert str(caught.value) == (
        "plugin 'probe_broken' (probe_broken) failed to load: no network here "
        "(probe_broken.py, line 1) (to run without it, block it: plugins.block or "
        "CTXMODES_BLOCK_PLUGINS)"
    )


@pytest.mark.parametrize(
    "source",
    [
        # a hook wrapper
        """
        from ctxmodes import hookimpl
        @hookimpl(wrapper=True)
        def ctx_register_cli_commands(register):
            return (yield)
        """,
        # two implementations of the hook in one plugin
        """
        from ctxmodes import hookimpl
        @hookimpl
        def ctx_register_cli_commands(register):
            pass
        @hookimpl(specname="ctx_register_cli_commands")
        def more_commands(register):
            pass
        """,
        # an argument the hook does not pass (the manager words the error)
        """
        from ctxmodes import hookimpl
        @hookimpl
        def ctx_register_cli_commands(register, extra):
            pass
        """,
        # Hooks a manager refuses, so that ``--help`` and ``modes`` report the mistake rather
        # than leave the plugin's modes and commands out without a word:
        # a misspelled registration hook, marked: it would register nothing, unnoticed
        """
        from ctxmodes import hookimpl
        @hookimpl
        def ctx_register_mode(register):
            pass
        """,
        # marked, without the hooks' prefix
        """
        from ctxmodes import hookimpl
        @hookimpl
        def register_modes(register):
            pass
        """,
        # the right name, unmarked
        """
        def ctx_register_modes(register):
            pass
        """,
        # another hook misspelled, beside a correct registration hook
        """
        from ctxmodes import hookimpl
        @hookimpl
        def ctx_register_cli_commands(register):
            pass
        @hookimpl
        def ctx_sesion_start(session, reason):
            pass
        """,
    ],
)
def test_an_unusual_implementation_is_left_to_a_manager(installed, source):
    installed("probe_unusual", source)
    assert callers_for() is None


def test_the_known_hook_names_are_the_hookspecs():
    from ctxmodes import hookspecs
    from ctxmodes.plugin_calls import HOOK_NAMES

    assert {name for name in dir(hookspecs) if name.startswith("ctx_")} == HOOK_NAMES


@pytest.mark.parametrize(
    ("argv", "hook"),
    [(["modes"], "ctx_register_mode"), (["--help"], "ctx_register_cli_command")],
)
def test_a_misspelled_registration_hook_is_one_error_line(
    installed, tmp_path, monkeypatch, capsys, argv, hook
):
    from ctxmodes.cli import main

    for name in [name for name in os.environ if name.startswith("CTXMODES_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    installed(
        "probe_typo",
        f"""
        from ctxmodes import hookimpl
        @hookimpl
        def {hook}(register):
            pass
        """,
    )
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"ctxmodes: error: plugin 'probe_typo': {hook} is not a ctxmodes hook "
        f"(did you mean {hook}s?)\n"
    )


def test_an_entry_point_named_as_a_built_in_one_is_one_error_naming_both(installed):
    """Rather than one of the two plugins (the built-in Local) silently not loading."""
    installed("probe_local", "", entry_point="local")
    with pytest.raises(PluginError) as caught:
        callers_for()
    assert str(caught.value) == (
        "plugin name 'local' is declared twice: by ctxmodes (ctxmodes_local) and by "
        "probe_local (probe_local); rename one of the entry points"
    )


def test_tracing_is_left_to_a_manager(monkeypatch):
    monkeypatch.setenv("CTXMODES_TRACE_PLUGINS", "1")
    assert callers_for() is None


def test_an_implementation_found_by_its_specname_is_called(installed):
    installed(
        "probe_named",
        """
        from ctxmodes import CliCommand, hookimpl
        @hookimpl(specname="ctx_register_cli_commands")
        def commands(register):
            register(CliCommand(name="probe", help="h", run=lambda args: 0))
        """,
    )
    callers = callers_for()
    assert callers is not None
    assert ("probe_named", "probe") in [
        (plugin, command.name) for plugin, command in registered(callers)
    ]


@pytest.mark.parametrize(
    ("source", "failure"),
    [
        (
            "import probe_missing_dependency\n",
            "No module named 'probe_missing_dependency' (probe_broken.py, line 1)",
        ),
        ("\n\nratio = 1 / 0\n", "division by zero (probe_broken.py, line 3)"),
        ("def broken(:\n", "invalid syntax (probe_broken.py, line 1)"),
    ],
)
def test_a_plugin_that_fails_to_import_says_where(installed, source, failure):
    installed("probe_broken", source)
    with pytest.raises(PluginError) as caught:
        callers_for()
    assert str(caught.value) == (
        f"plugin 'probe_broken' (probe_broken) failed to load: {failure} "
        "(to run without it, block it: plugins.block or CTXMODES_BLOCK_PLUGINS)"
    )


@pytest.mark.parametrize("argv", [["--help"], ["modes"], ["demo", "--help"]])
def test_a_broken_plugin_is_one_error_line(installed, tmp_path, monkeypatch, capsys, argv):
    from ctxmodes.cli import main

    for name in [name for name in os.environ if name.startswith("CTXMODES_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    installed("probe_broken", "raise RuntimeError('no network here')\n")
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "ctxmodes: error: plugin 'probe_broken' (probe_broken) failed to load: no network here "
        "(probe_broken.py, line 1) (to run without it, block it: plugins.block or "
        "CTXMODES_BLOCK_PLUGINS)\n"
    )
