"""Plugins add ``ctxmodes`` subcommands through ``ctx_register_cli_commands``."""

from __future__ import annotations

import argparse

import pytest
from support.cli_rig import ctxmodes, isolate_settings, trust_project

from ctxmodes import CliCommand, hookimpl
from ctxmodes.cli import build_parser
from ctxmodes.cli.core_commands import CORE_COMMANDS
from ctxmodes.errors import PluginError
from ctxmodes.testing.plugin import isolated_plugin_manager


class Greeter:
    def __init__(self, name: str = "greet") -> None:
        self.name = name
        self.ran: list[argparse.Namespace] = []

    @hookimpl
    def ctx_register_cli_commands(self, register):
        def configure(parser: argparse.ArgumentParser) -> None:
            parser.add_argument("--who", default="world")

        def run(args: argparse.Namespace) -> int:
            self.ran.append(args)
            return 7

        register(CliCommand(name=self.name, help="say hello", run=run, configure=configure))


def test_a_plugin_command_is_parsed_and_run():
    greeter = Greeter()
    parser = build_parser(isolated_plugin_manager(greeter))
    args = parser.parse_args(["greet", "--who", "pi"])
    assert args.handler(args) == 7
    assert greeter.ran[0].who == "pi"
    assert "say hello" in parser.format_help()


def test_a_core_command_name_cannot_be_taken():
    with pytest.raises(
        PluginError, match=r"command 'run' of plugin .* is already provided by the core"
    ):
        build_parser(isolated_plugin_manager(Greeter("run")))


def test_two_plugins_cannot_share_a_name():
    pm = isolated_plugin_manager(Greeter(), Greeter())
    with pytest.raises(PluginError, match=r"command 'greet' of plugin .* is already provided by"):
        build_parser(pm)


def test_a_bad_command_name_is_refused():
    with pytest.raises(PluginError, match="invalid command name"):
        CliCommand(name="Bad Name", help="x", run=lambda args: 0)


def test_the_core_has_no_mode_specific_command():
    assert "demo" not in CORE_COMMANDS
    assert not any("demo" in command.module for command in CORE_COMMANDS.values())


def test_a_bad_plugins_table_is_one_error_line_from_the_settings_model(
    tmp_path, monkeypatch, capsys
):
    isolate_settings(tmp_path, monkeypatch)
    trust_project(tmp_path, monkeypatch)
    (tmp_path / ".ctxmodes.toml").write_text('[plugins]\nblock = "tree"\n')
    code, out, err = ctxmodes(capsys, "--help")
    assert (code, out) == (1, "")
    assert err.startswith("ctxmodes: error: ")
    assert "plugins.block" in err
    assert len(err.splitlines()) == 1


def test_help_lists_every_command_as_the_full_parser_does():
    pm = isolated_plugin_manager(Greeter())
    assert build_parser(pm, argv=["--help"]).format_help() == build_parser(pm).format_help()


def test_only_the_named_plugin_command_is_configured():
    configured: list[str] = []

    class Counted(Greeter):
        @hookimpl
        def ctx_register_cli_commands(self, register):
            def configure(parser: argparse.ArgumentParser) -> None:
                configured.append(self.name)
                parser.add_argument("--who")

            register(CliCommand(name=self.name, help="h", run=lambda a: 0, configure=configure))

    pm = isolated_plugin_manager(Counted("one"), Counted("two"))
    args = build_parser(pm, argv=["two", "--who", "pi"]).parse_args(["two", "--who", "pi"])
    assert (configured, args.who) == (["two"], "pi")
