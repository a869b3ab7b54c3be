"""Nothing names a model: the real Pi and ctxmodes start on the same one, picked among the
models with credentials (Pi's ``findInitialModel``), and send it the prompt."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.pi_print import API, pi_agent_dir, pi_cli
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.providers.catalog import default_models

pytestmark = pytest.mark.pi


def _both(tmp_path: Path, pi_agent: Path, env: dict[str, str]) -> tuple[str, str]:
    """``-p hello`` with no model named, Pi then ctxmodes, each with ``pi_agent``'s
    ``models.json``; their standard outputs."""
    ours_agent = tmp_path / "agent"
    ours_agent.mkdir(exist_ok=True)
    shutil.copy(pi_agent / "models.json", ours_agent / "models.json")
    pi = pi_cli(tmp_path, pi_agent, ["-p", "hello"], env=env)
    assert pi.returncode == 0, pi.stderr
    ours = run_ctxmodes(tmp_path, "-p", "hello", env=env)
    assert ours.returncode == 0, ours.stderr
    return pi.stdout, ours.stdout


def test_a_providers_key_alone_starts_both_on_the_providers_default_model(
    tmp_path: Path,
) -> None:
    """Keys for Groq and Anthropic, Anthropic's endpoint on loopback: both prefer
    Anthropic, as Pi's table orders them, and ask for its default model."""
    api = "anthropic-messages"
    replies = [Reply(text_stream(api, "from pi")), Reply(text_stream(api, "from ours"))]
    with WireServer(replies) as server:
        pi_agent = tmp_path / "pi-agent"
        pi_agent.mkdir()
        (pi_agent / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": server.base_url}}})
        )
        env = {"ANTHROPIC_API_KEY": "sk-ant-loop", "GROQ_API_KEY": "gsk-loop"}
        outputs = _both(tmp_path, pi_agent, env)
    assert outputs == ("from pi\n", "from ours\n")
    asked = [json.loads(request["body"])["model"] for request in server.requests]
    assert asked == [default_models()["anthropic"]] * 2
    assert server.requests[0]["path"] == server.requests[1]["path"]


def test_a_configured_endpoint_with_a_key_is_taken_when_no_provider_has_a_default(
    tmp_path: Path,
) -> None:
    """Only a ``models.json`` provider has credentials, and Pi's table names none of its
    models: both start on its first model."""
    replies = [Reply(text_stream(API, "from pi")), Reply(text_stream(API, "from ours"))]
    with WireServer(replies) as server:
        pi_agent = pi_agent_dir(tmp_path, server.base_url, more_models=[{"id": "n"}])
        outputs = _both(tmp_path, pi_agent, {})
    assert outputs == ("from pi\n", "from ours\n")
    asked = [json.loads(request["body"])["model"] for request in server.requests]
    assert asked == ["m", "m"]


def test_with_no_credentials_at_all_both_refuse_a_print_run(tmp_path: Path) -> None:
    """No model has credentials: ``-p`` fails before any request, in Pi and in ctxmodes
    (which says how to give one)."""
    pi_agent = tmp_path / "pi-agent"
    pi_agent.mkdir()
    (pi_agent / "models.json").write_text('{"providers": {}}')
    pi = pi_cli(tmp_path, pi_agent, ["-p", "hello"])
    ours = run_ctxmodes(tmp_path, "-p", "hello")
    assert (pi.returncode, ours.returncode) == (1, 1)
    assert ours.stdout == ""
    assert ours.stderr.startswith("ctxmodes: error: no model available: ")
    assert "ctxmodes login" in ours.stderr
