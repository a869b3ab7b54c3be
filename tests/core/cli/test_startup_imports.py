"""``ctxmodes --help`` and every ``ctxmodes <command> --help`` stay import-light.

Each case runs in a fresh interpreter, because the test process has long since imported
everything; what matters is which modules a cold start loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: What no help text needs: validation, the wire, the terminal UI and its export, images,
#: the embedding API, the service, the kit; and neither a plugin manager nor the standard
#: library's scan of every installed distribution (plugins' commands are found without).
HEAVY_MODULES = (
    "pluggy",
    "importlib.metadata",
    "pydantic",
    "pydantic_core",
    "httpx",
    "httpcore",
    "cryptography",
    "prompt_toolkit",
    "rich",
    "jinja2",
    "markdown_it",
    "PIL",
    "ctxmodes.sdk",
    "ctxmodes.tui",
    "ctxmodes.export",
    "aiohttp",
    "prometheus_client",
    "psycopg",
    "psycopg_pool",
    "orjson",
    "msgspec",
    "ctxmodes.session.models",
    "ctxmodes.windows",
    "ctxmodes.host",
    "ctxmodes.providers",
)

PROBE = """
import contextlib, io, json, sys
from ctxmodes.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # argparse's --help exits
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def cold_start(
    tmp_path: Path, *argv: str, config: str | None = "", trusted: bool = False
) -> dict[str, object]:
    """What ``ctxmodes *argv`` printed and loaded, in a project whose ``.ctxmodes.toml`` holds
    ``config`` (``None``: a project without one)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("CTXMODES_")}
    env["CTXMODES_CONFIG_DIR"] = str(tmp_path / "config")
    env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "trust.json").write_text(json.dumps({str(tmp_path): trusted}))
    if config is not None:
        (tmp_path / ".ctxmodes.toml").write_text(config)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def heavy(modules: object) -> list[str]:
    assert isinstance(modules, list)
    return [name for name in HEAVY_MODULES if name in modules]


def test_help_lists_plugin_commands_without_heavy_imports(tmp_path):
    result = cold_start(tmp_path, "--help")
    assert result["code"] == 0
    assert {"demo", "serve"} <= set(str(result["out"]).split())
    assert heavy(result["modules"]) == []


def test_help_imports_no_core_command_module(tmp_path):
    modules = cold_start(tmp_path, "--help")["modules"]
    assert isinstance(modules, list)
    assert [name for name in modules if name.endswith("_cmd")] == []


@pytest.mark.parametrize("command", ["run", "session", "config", "models", "demo", "serve"])
def test_a_command_help_imports_nothing_heavy(tmp_path, command):
    result = cold_start(tmp_path, command, "--help")
    assert result["code"] == 0
    assert f"usage: ctxmodes {command}" in str(result["out"])
    assert heavy(result["modules"]) == []


@pytest.mark.parametrize("argv", [("run", "--help"), ("--version",)])
def test_a_core_command_loads_no_plugin(tmp_path, argv):
    modules = cold_start(tmp_path, *argv)["modules"]
    assert isinstance(modules, list)
    assert [name for name in modules if name.startswith("ctxmodes_")] == []
    assert "pluggy" not in modules


@pytest.mark.parametrize("argv", [("--help",), ("--version",)])
def test_the_bare_command_line_loads_neither_dataclasses_nor_pathlib(tmp_path, argv):
    # Together a fifth of `ctxmodes --help`'s start: only reading a prompt's @FILE (or a
    # project's own settings) needs them.
    modules = cold_start(tmp_path, *argv, config=None)["modules"]
    assert isinstance(modules, list)
    assert [name for name in ("dataclasses", "inspect", "pathlib") if name in modules] == []


@pytest.mark.parametrize("trusted", [True, False])
def test_the_block_list_of_a_trusted_project_applies_to_help(tmp_path, trusted):
    result = cold_start(tmp_path, "--help", config='[plugins]\nblock = ["tree"]\n', trusted=trusted)
    assert ("demo" in str(result["out"]).split()) is not trusted
    assert "serve" in str(result["out"]).split()


#: What reading a session file and printing its context as JSON does not need.
MODELS_AND_TERMINAL = ("pydantic", "pydantic_core", "ctxmodes.session.models", "rich", "httpx")

LOADED_MODULES = """
import json, sys
from ctxmodes.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _loaded_modules(tmp_path: Path, *argv: str) -> tuple[str, list[str]]:
    """The output of ``ctxmodes *argv`` on a two-line session (``{session}`` in ``argv``)
    and the modules the command loaded."""
    session = tmp_path / "s.jsonl"
    session.write_text(
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z",'
        '"cwd":"/p"}\n{"type":"message","id":"a","parentId":null,'
        '"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi",'
        '"timestamp":1}}\n'
    )
    argv = tuple(str(session) if part == "{session}" else part for part in argv)
    done = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result = json.loads(done.stderr.splitlines()[-1])
    assert result["code"] == 0
    return done.stdout, result["modules"]


def test_session_context_json_loads_no_models(tmp_path):
    out, modules = _loaded_modules(tmp_path, "session", "context", "{session}", "--json")
    assert json.loads(out)["contextEntryIds"] == ["a"]
    assert [name for name in MODELS_AND_TERMINAL if name in modules] == []


def test_naming_a_sessions_mode_loads_no_model_client(tmp_path):
    # `session show` asks every mode whether it recognizes the file; none needs to talk to
    # a model or a backend for that.
    out, modules = _loaded_modules(tmp_path, "session", "show", "{session}")
    assert "mode off" in out
    assert [
        name for name in ("httpx", "httpcore", "ctxmodes_remote.backend") if name in modules
    ] == []
