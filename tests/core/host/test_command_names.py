"""The built-in commands keep their names whatever plugins register, as Pi's built-in
commands do: a plugin's command of a built-in's name keeps that name too, listed after the
built-ins, and ``/name`` runs the built-in. Plugins' commands of one name are numbered
among themselves (compared with the real Pi in ``tests/core/rpc/test_command_names.py``)."""

from __future__ import annotations

from typing import Any

from ctxmodes import Command, hookimpl
from ctxmodes.host import records
from ctxmodes.host.builtin_commands import BUILTIN_COMMANDS, TREE_USAGE


class SameNames:
    """A plugin registering ``/tree`` and two ``/deploy``; records which one ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    @hookimpl
    def ctx_register_commands(self, register: Any, session: Any) -> None:
        for name, said in (("tree", "plugin tree"), ("/deploy", "first"), ("deploy", "second")):
            register(Command(name, said, lambda args, context, said=said: self.ran.append(said)))


def test_a_built_in_keeps_its_name_and_runs_before_a_plugin_s(make_rig: Any) -> None:
    plugin = SameNames()
    rig = make_rig([], plugins=[plugin])
    builtins = [command.name for command in BUILTIN_COMMANDS]
    names = [command.name for command in rig.session.commands]
    assert names == [*builtins, "tree", "deploy:1", "deploy:2"]
    rig.session.submit("/tree")
    rig.session.submit("/deploy:2")
    rig.session.submit("/deploy:1 now")
    invoked = [
        (record.name, record.args, record.error) for record in rig.of(records.CommandInvoked)
    ]
    assert invoked == [("tree", "", TREE_USAGE), ("deploy:2", "", None), ("deploy:1", "now", None)]
    assert plugin.ran == ["second", "first"]


def test_without_the_built_in_commands_a_plugin_s_tree_runs(make_rig: Any) -> None:
    plugin = SameNames()
    rig = make_rig([], plugins=[plugin], default_plugins=())
    assert [command.name for command in rig.session.commands] == ["tree", "deploy:1", "deploy:2"]
    rig.session.submit("/tree")
    assert plugin.ran == ["plugin tree"]
