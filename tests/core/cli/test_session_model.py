"""A reopened session keeps its model, as Pi's: `--model` names another one; otherwise the
model the session last used (when the catalog has it and it has credentials here), and only
then the configured one. Real processes against a loopback Chat Completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow

API = "openai-completions"


def _configure(tmp_path: Path, server: WireServer, default: str | None = None) -> None:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    lines = [f'model = "{default}"'] if default is not None else []
    lines += [
        "[providers.local]",
        f'api = "{API}"',
        f'base_url = "{server.base_url}/v1"',
        'api_key_env = "LOCAL_SERVER_KEY_NOT_SET"',
        'models = [{ id = "one", context_window = 32768, max_tokens = 1024 },'
        ' { id = "two", context_window = 32768, max_tokens = 1024 }]',
    ]
    (config / "config.toml").write_text("\n".join(lines) + "\n")


def _asked_for(server: WireServer) -> list[str]:
    return [json.loads(request["body"])["model"] for request in server.requests]


def test_a_reopened_session_runs_on_the_model_it_last_used(tmp_path: Path) -> None:
    replies = [Reply(text_stream(API, f"answer {n}")) for n in range(4)]
    with WireServer(replies) as server:
        _configure(tmp_path, server)
        first = run_ctxmodes(tmp_path, "run", "--model", "local/one", "--session", "s.jsonl", "a")
        assert first.returncode == 0, first.stderr
        # No model configured, none given: the session's own.
        again = run_ctxmodes(tmp_path, "run", "--session", "s.jsonl", "b")
        assert again.returncode == 0, again.stderr
        assert "answer 1" in again.stdout
        # A configured default does not replace it ...
        _configure(tmp_path, server, default="local/two")
        continued = run_ctxmodes(tmp_path, "run", "--session", "s.jsonl", "c")
        assert continued.returncode == 0, continued.stderr
        # ... but it is what a new session starts with, and `--model` names another one.
        switched = run_ctxmodes(
            tmp_path, "run", "--model", "local/two", "--session", "s.jsonl", "d"
        )
        assert switched.returncode == 0, switched.stderr
    assert _asked_for(server) == ["one", "one", "one", "two"]


def test_a_session_whose_model_cannot_be_used_here_says_which_it_was(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "hi"}]}')
    made = run_ctxmodes(
        tmp_path, "run", "--model", f"scripted:{script}", "--session", "s.jsonl", "a"
    )
    assert made.returncode == 0, made.stderr
    before = (tmp_path / "s.jsonl").read_bytes()
    reopened = run_ctxmodes(tmp_path, "run", "--session", "s.jsonl", "b")
    assert reopened.returncode == 1
    assert reopened.stderr.splitlines() == [
        "ctxmodes: error: no model available: set a provider's API key (ANTHROPIC_API_KEY, "
        "OPENAI_API_KEY, ...) or run `ctxmodes login`, or pass --model PROVIDER/MODEL "
        "(`ctxmodes models` lists them) or scripted:FILE (this session last used "
        "scripted/scripted, which has no credentials here or is not in `ctxmodes models`)"
    ]
    assert (tmp_path / "s.jsonl").read_bytes() == before


def test_a_session_that_cannot_continue_on_its_model_says_which_one_replaces_it(
    tmp_path: Path,
) -> None:
    """As Pi warns when it cannot restore a session's model: the session made with a script
    goes on with the configured model, and standard error says so; naming the model, or
    continuing on the session's own, says nothing."""
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "scripted"}, {"text": "again"}]}')
    replies = [Reply(text_stream(API, "from local")), Reply(text_stream(API, "kept"))]
    with WireServer(replies) as server:
        _configure(tmp_path, server, default="local/one")
        args = ("run", "--session", "s.jsonl")
        made = run_ctxmodes(tmp_path, *args, "--model", f"scripted:{script}", "a")
        assert made.returncode == 0, made.stderr
        named = run_ctxmodes(tmp_path, *args, "--model", f"scripted:{script}", "b")
        assert named.returncode == 0, named.stderr
        replaced = run_ctxmodes(tmp_path, *args, "c")
        assert replaced.returncode == 0, replaced.stderr
        kept = run_ctxmodes(tmp_path, *args, "d")
        assert kept.returncode == 0, kept.stderr
    assert "cannot be used here" not in made.stderr + named.stderr + kept.stderr
    assert replaced.stderr.splitlines() == [
        "Warning: This session last used scripted/scripted, which cannot be used here (not "
        "in `ctxmodes models`, or no credentials); continuing with local/one"
    ]
    assert "from local" in replaced.stdout
    assert _asked_for(server) == ["one", "one"]


def test_open_agent_restores_the_sessions_model_unless_one_is_named(tmp_path: Path) -> None:
    """The embedding API and the interactive session open a session the same way."""
    from ctxmodes.config import load_settings
    from ctxmodes.sdk import open_agent

    with WireServer([Reply(text_stream(API, "first"))]) as server:
        _configure(tmp_path, server, default="local/two")
        settings = load_settings(
            cwd=tmp_path, environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "config")}
        ).settings
        session = tmp_path / "s.jsonl"
        with open_agent(
            cwd=tmp_path, settings=settings, model="local/one", session_file=session
        ) as agent:
            agent.prompt("a")
        with open_agent(cwd=tmp_path, settings=settings, session_file=session) as agent:
            assert agent.session.model is not None
            assert agent.session.model.id == "one"
        with open_agent(
            cwd=tmp_path, settings=settings, model="local/two", session_file=session
        ) as agent:
            assert agent.session.model is not None
            assert agent.session.model.id == "two"
        with open_agent(
            cwd=tmp_path, settings=settings, session_file=tmp_path / "new.jsonl"
        ) as agent:
            assert agent.session.model is not None
            assert agent.session.model.id == "two"


def test_resuming_a_session_switches_to_the_model_it_last_used(tmp_path: Path) -> None:
    """`/resume` as Pi's switchSession: the resumed session runs on its own model when it
    can be used here; a session whose model cannot keeps the current one."""
    from ctxmodes.config import load_settings
    from ctxmodes.sdk import open_agent

    replies = [Reply(text_stream(API, text)) for text in ("on one", "on two", "on one again")]
    with WireServer(replies) as server:
        _configure(tmp_path, server)
        settings = load_settings(
            cwd=tmp_path, environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "config")}
        ).settings
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        with open_agent(
            cwd=tmp_path, settings=settings, model="local/one", session_file=first
        ) as agent:
            agent.prompt("a")
        script = tmp_path / "script.json"
        script.write_text('{"responses": [{"text": "scripted"}]}')
        scripted = tmp_path / "scripted.jsonl"
        with open_agent(
            cwd=tmp_path, settings=settings, model=f"scripted:{script}", session_file=scripted
        ) as agent:
            agent.prompt("s")
        with open_agent(
            cwd=tmp_path, settings=settings, model="local/two", session_file=second
        ) as agent:
            agent.prompt("b")
            agent.resume(first)
            assert agent.session.model is not None
            assert agent.session.model.id == "one"
            agent.prompt("c")
            agent.resume(scripted)  # scripted/scripted is not in the catalog
            assert agent.session.model is not None
            assert agent.session.model.id == "one"
    assert _asked_for(server) == ["one", "two", "one"]
