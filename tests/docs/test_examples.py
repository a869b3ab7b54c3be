"""Every code block in the README and the documentation site is run, or checked as far as its
kind allows, by a test; a block no test claims fails here until one does.

- Python examples run (the embedding example in test_embedding_example.py, the example mode's
  files in test_example_mode.py, the managed-mode example below).
- Shell examples marked ``<!-- example: NAME -->`` run in bash on a fresh directory with the
  installed ``ctxmodes``; every other shell line is a ``ctxmodes`` command that must parse
  with the real command line, a ``make`` target that must exist, or a ``pip install`` whose
  extras must exist.
- TOML examples are loaded as a user configuration file by ``ctxmodes config show``, which
  refuses an unknown key or a bad value; provider tables must then list their models.
- The hook reference's signatures are generated and compared by tests/core/test_hookspecs.py.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.doc_pages import DOCS, MARKERS, PYPROJECT, ROOT, Block, all_blocks, example

from ctxmodes.cli import _command_names, build_parser
from ctxmodes.cli.pi_command_line import meant_command_line

SHELL = {"sh", "bash"}
#: Blocks that are not code: the site's table of contents, a diagram in words.
NOT_CODE = {"{toctree}", "text"}
#: Examples run by a test of their own (the example mode's files are named by their first line).
RUN_ELSEWHERE = {
    **dict.fromkeys(
        ("embedding", "embedding-tools", "embedding-user-bash", "embedding-asyncio"),
        "test_embedding_example.py",
    ),
    "rpc-client": "test_rpc_example.py",
}
EXAMPLE_MODE_FILES = {path.name for path in (DOCS / "example-mode").iterdir()}
#: Shell examples run whole by test_shell_examples_run, with what their output must show.
RUNNABLE_SHELL = {
    "tour": [
        "Window 1: reading my plan and carrying on.",
        "window 0",
        "Step 1 done; next: step 2.",
    ],
    "remote-offline": [
        "notes operation completed",
        "Carrying on with step 2.",
        "the session file holds no note text",
    ],
}

#: The service's recipe for the real Codex CLI, run after the offline example it builds on.
CODEX_EXAMPLE = "codex-cli"


def is_example_mode_file(block: Block) -> bool:
    match = re.fullmatch(r"(?:#|//) ([\w.]+)", block.first_line)
    return match is not None and match.group(1) in EXAMPLE_MODE_FILES


def claim(block: Block) -> str | None:
    """The check that covers ``block``, or ``None`` when none does."""
    if block.language in NOT_CODE:
        return "not code"
    if block.page == DOCS / "hooks.md":
        return "generated"
    if is_example_mode_file(block):
        return "example mode"
    if block.example in RUN_ELSEWHERE or block.example == "managed-mode":
        return "python"
    if block.example == CODEX_EXAMPLE:
        return "codex cli"
    if block.language in SHELL:
        return "shell run" if block.example in RUNNABLE_SHELL else "shell commands"
    if block.language == "toml":
        return "toml"
    if block.language == "json" and block.page == DOCS / "terminal.md":
        return "keybindings"
    return None


def test_every_block_is_checked_by_a_test():
    unclaimed = [f"{block.where} ({block.language})" for block in all_blocks() if not claim(block)]
    assert unclaimed == [], "code blocks no test runs or checks"


def test_every_marked_example_is_run():
    marked = {block.example for block in all_blocks() if block.example}
    assert marked == {*RUN_ELSEWHERE, *RUNNABLE_SHELL, CODEX_EXAMPLE, "managed-mode"}


# --- shell ---------------------------------------------------------------------------------


def shell_commands(body: str) -> list[str]:
    """The block's command lines: continuations joined, comments and heredoc bodies dropped."""
    lines = body.replace("\\\n", " ").splitlines()
    commands = []
    heredoc_end: str | None = None
    for line in lines:
        if heredoc_end is not None:
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        if line.lstrip().startswith("#") or not line.strip():
            continue
        heredoc = re.search(r"<<-?'?(\w+)'?", line)
        if heredoc:
            heredoc_end = heredoc.group(1)
        commands.append(line)
    return commands


def check_paths(line: str, paths: list[str]) -> None:
    """Each path a development command names exists (``file::test`` names the file)."""
    for path in paths:
        assert (ROOT / path.split("::")[0]).exists(), f"`{line}`: no {path}"


def check_pytest(line: str, arguments: list[str]) -> None:
    paths = []
    words = iter(arguments)
    for word in words:
        if word == "-m":
            expression = next(words)
            named = set(re.findall(r"\w+", expression)) - {"and", "or", "not"}
            assert named <= MARKERS, f"`{line}`: unknown markers {sorted(named - MARKERS)}"
        elif word in {"-n", "--dist", "-k"}:
            next(words)
        elif not word.startswith("-"):
            paths.append(word)
    check_paths(line, paths)


def check_development_tool(line: str, program: str, arguments: list[str]) -> None:
    """The tools of the virtual environment: what each names must exist."""
    if ">" in arguments:  # a redirection: the output's file is written, not read
        arguments = arguments[: arguments.index(">")]
    if program == "pytest":
        check_pytest(line, arguments)
    elif program == "python":
        check_paths(line, arguments[:1])
    elif program == "ruff":
        assert arguments[0] in {"check", "format"}, line
        check_paths(line, [word for word in arguments[1:] if not word.startswith("-")])
    elif program == "mypy":
        packages = [arguments[index + 1] for index, word in enumerate(arguments) if word == "-p"]
        assert packages, line
        for package in packages:
            assert importlib.util.find_spec(package) is not None, f"`{line}`: no {package}"
    elif program == "sphinx-build":
        words = iter(arguments)
        positional = [word for word in words if not (word in {"-b", "-d"} and next(words))]
        positional = [word for word in positional if not word.startswith("-")]
        assert (ROOT / positional[0] / "conf.py").is_file(), f"`{line}`: no Sphinx source"
    else:
        pytest.fail(f"`{line}`: no check for {program}")


def check_command(line: str) -> None:
    words = shlex.split(line, comments=True)
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        words = words[1:]  # VARIABLE=value before the command
    if words[0] == "nice":
        words = words[1:]
    program, arguments = words[0], words[1:]
    if program.startswith(".venv/bin/") and program != ".venv/bin/ctxmodes":
        check_development_tool(line, program.removeprefix(".venv/bin/"), arguments)
    elif program in {"ctxmodes", ".venv/bin/ctxmodes"}:
        # Pi's command line (`ctxmodes --mode rpc`, `ctxmodes -p`) means a command, as in main.
        commands = _command_names(build_parser())
        meant = meant_command_line(arguments, is_command=commands.__contains__, terminal=True)
        arguments = arguments if meant is None else meant
        parser = build_parser(argv=arguments)
        try:
            parser.parse_args(arguments)
        except SystemExit as exit_:
            pytest.fail(f"`{line}` does not parse: exit {exit_.code}")
    elif program == "make":
        makefile = (ROOT / "Makefile").read_text()
        for target in arguments:
            assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"no make target {target}"
    elif program == "pip":
        assert arguments[0] == "install", line
        extras = PYPROJECT["project"]["optional-dependencies"]
        for requirement in arguments[1:]:
            name, _, rest = requirement.partition("[")
            assert name == "ctxmodes", line
            for extra in filter(None, rest.rstrip("]").split(",")):
                assert extra in extras, f"no extra {extra!r}"
    elif program in {"echo", "cat"}:
        pass  # writing the example's input file
    else:
        pytest.fail(f"`{line}`: no check for {program}")


@pytest.mark.parametrize(
    "block",
    [block for block in all_blocks() if claim(block) == "shell commands"],
    ids=lambda block: block.where,
)
def test_shell_commands_exist_as_written(block: Block):
    for line in shell_commands(block.body):
        check_command(line)


@pytest.mark.slow  # each a script of real ctxmodes processes
@pytest.mark.parametrize("name", sorted(RUNNABLE_SHELL))
def test_shell_examples_run(name: str, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    result = run_shell_example(name, work, tmp_path)
    assert result.returncode == 0, result.stderr
    for expected in RUNNABLE_SHELL[name]:
        assert expected in result.stdout


def run_shell_example(
    name: str, work: Path, private: Path, path: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Example ``name`` in bash in ``work``, with the installed ``ctxmodes`` (and ``path``)
    first on PATH, and a home and settings of its own in ``private``."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("CTXMODES_")}
    search = os.pathsep.join(str(directory) for directory in (Path(sys.executable).parent, *path))
    environ |= {
        "PATH": f"{search}{os.pathsep}{environ.get('PATH', '')}",
        "HOME": str(private / "home"),
        "CTXMODES_CONFIG_DIR": str(private / "config"),
        "PI_CODING_AGENT_DIR": str(private / "pi"),
    }
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", example(name).body],
        cwd=work,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.codex_cli
def test_the_codex_cli_recipe_runs_against_the_service(tmp_path: Path):
    """The service page's recipe for the Codex CLI, as a reader runs it: after the offline
    example (whose upstream script it uses), a CA and certificate from openssl, a token,
    the service on HTTPS, Codex's home written, and `codex exec` through a whole cycle."""
    from support.serve_process import codex_binary

    codex = codex_binary()
    if codex is None:
        pytest.skip("the Codex CLI is not installed (make codex-cli)")
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    work = tmp_path / "work"
    work.mkdir()
    offline = run_shell_example("remote-offline", work, tmp_path)
    assert offline.returncode == 0, offline.stderr
    result = run_shell_example(CODEX_EXAMPLE, work, tmp_path, path=(codex.parent,))
    assert result.returncode == 0, result.stderr
    assert "Carrying on with step 2." in result.stdout
    assert "Unable to perform operation" not in result.stdout + result.stderr
    statuses = re.findall(r'"path":"([^"]+)","status":(\d+)', result.stderr)
    assert ("/backend-api/codex/alpha/notes/v2/write_file", "200") in statuses
    assert ("/backend-api/codex/alpha/notes/v2/read_file", "200") in statuses
    assert not [status for status in statuses if status[1] == "401"]


# --- TOML ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [block for block in all_blocks() if claim(block) == "toml"],
    ids=lambda block: block.where,
)
def test_configuration_examples_are_accepted(block: Block, tmp_path, monkeypatch, capsys):
    isolate_settings(tmp_path, monkeypatch)
    values = tomllib.loads(block.body)
    if set(values) == {"modes"}:
        # A third-party mode's table: validated by that mode's own settings model.
        (name,) = values["modes"]
        assert name == "recent-turns", block.where
        settings = load_example_mode().RecentTurnsSettings.model_validate(values["modes"][name])
        assert settings.model_dump() == values["modes"][name]
        return
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(block.body)
    code, out, err = ctxmodes(capsys, "config", "show")
    assert (code, err) == (0, ""), block.where
    for key in values:  # each table or key of the example is shown as set by the file
        shown = [line for line in out.splitlines() if line.startswith((f"{key} ", f"{key}."))]
        assert any(line.endswith(f"# {config / 'config.toml'}") for line in shown), key
    for provider, table in values.get("providers", {}).items():
        code, out, err = ctxmodes(capsys, "models", "--provider", provider)
        assert code == 0, err
        for model in table["models"]:
            assert f"{provider}/{model['id']}" in out


def load_example_mode() -> types.ModuleType:
    module = types.ModuleType("recent_turns")
    source = DOCS / "example-mode" / "recent_turns.py"
    exec(compile(source.read_text(), str(source), "exec"), module.__dict__)
    return module


# --- Python --------------------------------------------------------------------------------


def test_the_managed_mode_example_assembles_a_working_mode(ctx_host, caplog):
    block = example("managed-mode")
    plugin = types.ModuleType("metered")
    exec(compile(block.body, block.where, "exec"), plugin.__dict__)
    host = ctx_host(
        [
            {"text": "Rolling over.", "tool_calls": [{"name": "new_context"}]},
            {"text": "In window 1."},
        ],
        plugins=[plugin],
        mode="metered",
    )
    with caplog.at_level(logging.INFO, logger="metered"):
        host.prompt("go")
    first, second = host.requests()
    assert {"new_context", "history", "notes"} <= {tool.name for tool in first.tools}
    sizes = [int(r.getMessage().split()[2]) for r in caplog.records if r.name == "metered"]
    assert len(sizes) == 2
    # The second request starts the new window: the first window's turn is not in it.
    assert len(second.messages) < len(first.messages) + 2
    assert sizes == [len(first.messages), len(second.messages)]


# --- keybindings ---------------------------------------------------------------------------


def test_the_keybindings_examples_bind_what_they_say(tmp_path):
    from ctxmodes.tui.keymap import DEFAULTS, KeyMap, parse_key

    blocks = [b for b in all_blocks() if claim(b) == "keybindings"]
    assert blocks
    for block in blocks:
        path = tmp_path / "keybindings.json"
        path.write_text(block.body)
        keymap = KeyMap.load(path)
        assert keymap.problems == (), block.where
        for action, keys in json.loads(block.body).items():
            assert action in DEFAULTS, f"{block.where}: {action} is not an action of the terminal"
            names = [keys] if isinstance(keys, str) else keys
            assert keymap.of(action) == tuple(parse_key(name) for name in names)
