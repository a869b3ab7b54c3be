"""The real Pi's command line and ctxmodes' beside it, both reaching one loopback model
(``loop/m``, an OpenAI Chat Completions endpoint), for differential tests of Pi's flags."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.cli_process import run_ctxmodes
from support.pi_oracle import PI_PACKAGE, require_agent_node, require_pi_modules
from support.tmux import Tmux

API = "openai-completions"


def run_pi(
    tmp_path: Path,
    base_url: str,
    argv: list[str],
    stdin: str = "",
    *,
    api_key: str | None = "sk-loop",
    model_input: list[str] | None = None,
) -> Any:
    """``pi ARGV`` in ``tmp_path``, its agent directory ``tmp_path/pi-agent`` holding the
    model (with ``api_key`` as its configured key, ``None``: none; taking ``model_input``,
    ``None``: text only, Pi's default). Skips without Pi."""
    agent = pi_agent_dir(tmp_path, base_url, api_key=api_key, model_input=model_input)
    return pi_cli(tmp_path, agent, argv, stdin)


def pi_agent_dir(
    tmp_path: Path,
    base_url: str,
    *,
    api_key: str | None = "sk-loop",
    model_input: list[str] | None = None,
    more_models: Sequence[dict[str, Any]] = (),
) -> Path:
    """Pi's agent directory ``tmp_path/pi-agent``, its ``models.json`` holding the loopback
    model ``loop/m`` (see :func:`run_pi`), then ``more_models`` on the same endpoint."""
    agent = tmp_path / "pi-agent"
    agent.mkdir(exist_ok=True)
    model: dict[str, Any] = {"id": "m"}
    if model_input is not None:
        model["input"] = model_input
    models = [model, *more_models]
    provider: dict[str, Any] = {"baseUrl": f"{base_url}/v1", "api": API, "models": models}
    if api_key is not None:
        provider["apiKey"] = api_key
    (agent / "models.json").write_text(json.dumps({"providers": {"loop": provider}}))
    return agent


def pi_command(agent: Path, env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line that starts the real Pi (``pi`` before its arguments) with
    ``agent`` as its agent directory, offline, and its environment. Skips without Pi."""
    node = require_agent_node()
    cli = require_pi_modules() / PI_PACKAGE.parent / "dist" / "cli.js"
    environment = {**os.environ, **(env or {}), "PI_CODING_AGENT_DIR": str(agent)}
    return [node, str(cli)], {**environment, "PI_OFFLINE": "1"}


def pi_terminal(
    cwd: Path, agent: Path, home: Path, *arguments: str, columns: int = 120, rows: int = 40
) -> Tmux:
    """The real Pi's interactive session in a real terminal (tmux), started in ``cwd`` with
    ``agent`` as its agent directory and ``home`` as its home, offline, its environment
    holding nothing else of this process's but ``PATH``. Skips without Pi."""
    pi, environment = pi_command(agent, {"HOME": str(home)})
    keep = ("PI_CODING_AGENT_DIR", "PI_OFFLINE", "HOME", "PATH")
    return Tmux(
        ["env", "-C", str(cwd), *pi, *arguments],
        {**{key: environment[key] for key in keep}, "TERM": "xterm-256color"},
        columns=columns,
        rows=rows,
    )


def pi_cli(
    cwd: Path, agent: Path, argv: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> Any:
    """The real Pi's command line ``pi ARGV`` in ``cwd``, with ``agent`` as its agent
    directory, offline (no start-up requests), ``env`` over this process's environment.
    Skips without Pi."""
    pi, environment = pi_command(agent, env)
    return subprocess.run(
        [*pi, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=120,
        check=False,
    )


def run_ours(
    tmp_path: Path,
    base_url: str,
    argv: list[str],
    stdin: str = "",
    *,
    api_key: str | None = "sk-loop",
    env: dict[str, str] | None = None,
    model_input: list[str] | None = None,
) -> Any:
    """``ctxmodes ARGV`` with the same model as :func:`run_pi` in its configuration."""
    configure_ours(tmp_path, base_url, api_key=api_key, model_input=model_input)
    return run_ctxmodes(tmp_path, *argv, stdin=stdin, env=env)


def configure_ours(
    tmp_path: Path,
    base_url: str,
    *,
    api_key: str | None = "sk-loop",
    model_input: list[str] | None = None,
    more_models: Sequence[dict[str, Any]] = (),
) -> None:
    """ctxmodes' configuration in ``tmp_path/config`` with the models of :func:`run_pi`
    (``more_models`` as :func:`pi_agent_dir` takes them)."""
    (tmp_path / "config").mkdir(exist_ok=True)
    key = f'api_key = "{api_key}"\n' if api_key is not None else ""
    first: dict[str, Any] = {"id": "m"}
    if model_input is not None:
        first["input"] = model_input
    # JSON's strings, lists and booleans are TOML's too.
    tables = ", ".join(
        "{ " + ", ".join(f"{name} = {json.dumps(value)}" for name, value in model.items()) + " }"
        for model in (first, *more_models)
    )
    (tmp_path / "config" / "config.toml").write_text(
        f'[providers.loop]\napi = "{API}"\nbase_url = "{base_url}/v1"\n{key}models = [{tables}]\n'
    )
