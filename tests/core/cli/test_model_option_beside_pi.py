"""``--model`` patterns and ``--provider``, beside the real Pi: the same command line asks
the same model, and the same refusals are said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.pi_print import configure_ours, pi_agent_dir, pi_cli
from support.wire_server import Reply, WireServer, text_stream

pytestmark = [pytest.mark.pi, pytest.mark.slow]  # real Pi processes

#: Beside ``loop/m``: a dated version and its undated alias, and another model.
MORE = [{"id": "alpha-large-20250101"}, {"id": "alpha-large"}, {"id": "beta-small"}]


@pytest.mark.parametrize(
    "argv",
    [
        ["--model", "alpha-lar"],  # part of an id: the undated alias
        ["--model", "LOOP/beta"],  # a provider's, in any case
        ["--provider", "loop", "--model", "alpha-large-2025"],  # the dated version
        ["--provider", "loop", "--model", "loop/alpha"],
    ],
    ids=["part", "provider-prefix", "provider-dated", "provider-and-prefix"],
)
def test_both_ask_the_model_the_command_line_names(tmp_path: Path, argv: list[str]) -> None:
    asked: dict[str, str] = {}
    for program in ("pi", "ours"):
        where = tmp_path / program
        where.mkdir()
        with WireServer([Reply(text_stream("openai-completions", "done"))]) as server:
            line = [*argv, "-p", "go"]
            if program == "pi":
                agent = pi_agent_dir(where, server.base_url, more_models=MORE)
                done = pi_cli(where, agent, line)
            else:
                configure_ours(where, server.base_url, more_models=MORE)
                done = run_ctxmodes(where, *line)
            assert done.returncode == 0, done.stderr
            (request,) = server.requests
            asked[program] = json.loads(request["body"])["model"]
    assert asked["ours"] == asked["pi"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--provider", "nosuch", "--model", "m"], 'Unknown provider "nosuch".'),
        (["--model", "gamma"], 'Model "gamma" not found.'),
    ],
)
def test_both_refuse_what_names_no_model(tmp_path: Path, argv: list[str], said: str) -> None:
    with WireServer([]) as server:
        agent = pi_agent_dir(tmp_path, server.base_url, more_models=MORE)
        theirs = pi_cli(tmp_path, agent, [*argv, "-p", "go"])
        configure_ours(tmp_path, server.base_url, more_models=MORE)
        ours = run_ctxmodes(tmp_path, *argv, "-p", "go")
    assert said in theirs.stderr
    assert ours.returncode == 1
    assert said in ours.stderr
    assert ours.stderr.count("\n") == 1
