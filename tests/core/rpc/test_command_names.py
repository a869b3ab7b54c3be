"""Commands of the same name, as Pi names its extensions' commands: two Pi extensions and
two ctxmodes plugins register the same commands in the same order; RPC ``get_commands``
lists them under the same names, and ``/name:N`` runs the same one in both."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import WireServer

#: Pi's built-in llama.cpp extension registers ``/llama`` in every session.
PI_LLAMA = "<inline:llama.cpp>"

#: Each plugin's commands, in the order it registers them: ``(name, description)``. The
#: first takes ``dup:1`` before any ``dup``, so the numbered ``dup`` commands skip it;
#: ``tree`` is a built-in command's name in both programs.
FIRST = (("dup:1", "taken early"), ("dup", "first dup"), ("tree", "own tree"))
SECOND = (("dup", "second dup"), ("solo", "only one"))


def _extension(commands: tuple[tuple[str, str], ...]) -> str:
    """A Pi extension registering ``commands``; each notifies its description."""
    lines = [
        f"  pi.registerCommand({name!r}, {{ description: {text!r}, handler: async (args, ctx)"
        f" => {{ ctx.ui.notify({text!r}); }} }});"
        for name, text in commands
    ]
    return "export default function (pi) {\n" + "\n".join(lines) + "\n}\n"


def _plugin(commands: tuple[tuple[str, str], ...]) -> str:
    """A ctxmodes plugin registering ``commands``; each notifies its description."""
    registrations = "\n".join(
        f"    register(Command({name!r}, {text!r}, lambda args, context: "
        f"context.ui.notify({text!r})))"
        for name, text in commands
    )
    return (
        "from ctxmodes import Command, hookimpl\n\n\n"
        "@hookimpl\n"
        "def ctx_register_commands(register, session):\n" + registrations + "\n"
    )


def _install(plugins: Path, module: str, entry_point: str, source: str) -> None:
    plugins.mkdir(exist_ok=True)
    (plugins / f"{module}.py").write_text(source)
    info = plugins / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[ctxmodes]\n{entry_point} = {module}\n")


def _pi(where: Path, base_url: str) -> RpcProcess:
    where.mkdir()
    paths = []
    for name, commands in (("first", FIRST), ("second", SECOND)):
        path = where / f"{name}.js"
        path.write_text(_extension(commands))
        paths += ["-e", str(path)]
    return pi_rpc(where, base_url, paths)


def _ours(where: Path, base_url: str) -> RpcProcess:
    where.mkdir()
    plugins = where / "plugins"
    # Entry points are registered by name and asked last-registered first: the first
    # plugin's name sorts last.
    _install(plugins, "names_first", "names_b", _plugin(FIRST))
    _install(plugins, "names_second", "names_a", _plugin(SECOND))
    path = os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])
    return our_rpc(where, base_url, env={"PYTHONPATH": path})


def _listed_and_run(process: RpcProcess, invoked: list[str]) -> tuple[list[Any], list[str]]:
    """``(name, description, source)`` of each command ``get_commands`` lists, and what
    each of the ``invoked`` commands notified."""
    answer = process.request({"type": "get_commands"})
    assert answer["success"] is True, answer
    listed = [
        (c["name"], c["description"], c["source"])
        for c in answer["data"]["commands"]
        if c["sourceInfo"]["path"] != PI_LLAMA
    ]
    notified = []
    for name in invoked:
        process.send({"type": "prompt", "message": f"/{name}"})
        told = process.wait_for(
            lambda line: (
                line.get("type") == "extension_ui_request" and line.get("method") == "notify"
            )
        )
        notified.append(told["message"])
    assert process.close() == 0
    return listed, notified


@pytest.mark.pi
def test_commands_of_one_name_are_numbered_and_run_as_pis(tmp_path: Path) -> None:
    invoked = ["dup:1", "dup:2", "dup:3", "solo"]
    with WireServer([]) as server, _pi(tmp_path / "pi", server.base_url) as pi:
        theirs = _listed_and_run(pi, invoked)
    with WireServer([]) as server, _ours(tmp_path / "ours", server.base_url) as ours:
        mine = _listed_and_run(ours, invoked)
    assert mine == theirs
    listed, notified = theirs
    # Every dup is numbered; the first takes the number after the one already taken.
    assert [name for name, _, _ in listed] == ["dup:1", "dup:2", "tree", "dup:3", "solo"]
    assert notified == ["taken early", "first dup", "second dup", "only one"]
