"""Pi's RPC ``get_commands``: for the same project (templates and skills in Pi's standard
places, in settings entries and on the command line), ``ctxmodes --mode rpc`` lists what the
real ``pi --mode rpc`` lists, with the same ``sourceInfo``; plugins' commands are listed as
Pi lists its extensions' commands."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.rpc_client import our_rpc, pi_rpc
from support.wire_server import WireServer

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
#: Pi's built-in llama.cpp extension registers ``/llama`` in every session; ctxmodes has no
#: llama.cpp router to manage, so it has no such command to list.
PI_LLAMA = "<inline:llama.cpp>"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n"


def _project(where: Path, agent: Path) -> list[str]:
    """A project and agent directory with resources of every origin; the command line's
    extra paths."""
    _write(agent / "prompts" / "mine.md", "---\ndescription: The user's template\n---\nHi $1")
    _write(agent / "skills" / "user-skill" / "SKILL.md", _skill("user-skill", "The user's"))
    _write(where / ".git" / "HEAD", "ref: refs/heads/main\n")
    config = where / ".pi"
    _write(config / "prompts" / "review.md", "Review the change with care, file by file " * 3)
    _write(config / "skills" / "proj-skill" / "SKILL.md", _skill("proj-skill", "Project's"))
    _write(config / "skills" / "loose.md", "---\ndescription: A loose skill file\n---\nx\n")
    _write(where / ".agents" / "skills" / "agents-skill" / "SKILL.md", _skill("agents-skill", "A"))
    _write(where / "shared" / "listed.md", "---\ndescription: Named by settings\n---\nx\n")
    _write(where / "shared-skills" / "set" / "SKILL.md", _skill("set", "Named by settings"))
    entries = {"prompts": ["../shared"], "skills": ["../shared-skills"]}
    _write(config / "settings.json", json.dumps(entries))
    _write(where / "given" / "flag.md", "---\ndescription: Given as a flag\n---\nx\n")
    _write(where / "given-skills" / "flagged" / "SKILL.md", _skill("flagged", "Given as a flag"))
    return ["--prompt-template", "given/flag.md", "--skill", "given-skills"]


def _commands(tmp_path: Path, *, approve: bool) -> tuple[list[JsonObject], list[JsonObject]]:
    listed = []
    for start, name, agent in ((pi_rpc, "pi", "pi-agent"), (our_rpc, "ours", "agent")):
        where = tmp_path / name
        argv = _project(where, where / agent) + (["--approve"] if approve else [])
        with WireServer([]) as server, start(where, server.base_url, argv) as process:
            answer = process.request({"type": "get_commands"})
            assert process.close() == 0
        assert answer["success"] is True
        text = json.dumps(answer["data"]["commands"])
        text = text.replace(str(where / agent), "<agent>").replace(str(where), "<dir>")
        listed.append(json.loads(text))
    theirs, ours = listed
    return [c for c in theirs if c["sourceInfo"]["path"] != PI_LLAMA], ours


@pytest.mark.pi
def test_templates_and_skills_of_a_trusted_project_are_pis(tmp_path: Path) -> None:
    theirs, ours = _commands(tmp_path, approve=True)
    assert ours == theirs
    assert [(c["name"], c["source"], c["sourceInfo"]["source"]) for c in theirs] == [
        ("listed", "prompt", "local"),
        ("review", "prompt", "auto"),
        ("mine", "prompt", "auto"),
        ("flag", "prompt", "local"),
        ("skill:set", "skill", "local"),
        ("skill:skills", "skill", "auto"),  # a loose file takes its folder's name
        ("skill:proj-skill", "skill", "auto"),
        ("skill:agents-skill", "skill", "auto"),
        ("skill:user-skill", "skill", "auto"),
        ("skill:flagged", "skill", "local"),
    ]


@pytest.mark.pi
def test_an_untrusted_project_lists_no_resource_of_its_own(tmp_path: Path) -> None:
    theirs, ours = _commands(tmp_path, approve=False)
    assert ours == theirs
    assert [c["name"] for c in theirs] == ["mine", "flag", "skill:user-skill", "skill:flagged"]


PLUGIN = """
    from ctxmodes import Command, hookimpl


    def deploy(args, context):
        context.ui.notify("deployed")


    @hookimpl
    def ctx_register_commands(register, session):
        register(Command("deploy", "Ship the build", deploy))
        register(Command("compact", "A plugin's own compact", deploy))
"""


def test_plugins_commands_are_listed_as_extension_commands(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    _write(plugins / "rpc_probe_plugin.py", textwrap.dedent(PLUGIN))
    info = plugins / "rpc_probe_plugin-1.0.dist-info"
    _write(info / "METADATA", "Metadata-Version: 2.1\nName: rpc_probe_plugin\nVersion: 1.0\n")
    _write(info / "entry_points.txt", "[ctxmodes]\nrpc_probe = rpc_probe_plugin\n")
    path = os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])
    with (
        WireServer([]) as server,
        our_rpc(tmp_path, server.base_url, env={"PYTHONPATH": path}) as process,
    ):
        answer = process.request({"type": "get_commands"})
        assert process.close() == 0
    # Pi's sourceInfo for an extension file outside its resource folders.
    source = {
        "path": str((plugins / "rpc_probe_plugin.py").resolve()),
        "source": "local",
        "scope": "temporary",
        "origin": "top-level",
        "baseDir": str(plugins.resolve()),
    }
    # ctxmodes' own /compact is left out, as Pi leaves out its built-in commands; the
    # plugin's keeps its name, as an extension's command named like one of Pi's does.
    assert answer["data"]["commands"] == [
        {
            "name": "deploy",
            "description": "Ship the build",
            "source": "extension",
            "sourceInfo": source,
        },
        {
            "name": "compact",
            "description": "A plugin's own compact",
            "source": "extension",
            "sourceInfo": source,
        },
    ]
