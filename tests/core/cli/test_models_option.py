"""``--models`` on ``chat`` (and a bare ``ctxmodes``), as Pi's: comma-separated patterns,
each trimmed, over the ``enabled_models`` setting and Pi's ``enabledModels``; without
``--model``, a new session starts on the scope's model as Pi picks it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxmodes.cli import build_parser
from ctxmodes.cli.core_commands import CORE_COMMANDS
from ctxmodes.cli.options import (
    agent_settings,
    configured_defaults,
    run_trust,
    scope_start_model,
)
from ctxmodes.cli.pi_command_line import meant_command_line
from ctxmodes.config import Settings

pytestmark = pytest.mark.slow  # most tests run ctxmodes as a process, end to end


def test_models_are_split_on_commas_and_win_over_pi_s_enabled_models(
    project: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"enabledModels": ["from-pi"]}))
    argv = ["chat", "--cwd", str(project), "--model", "scripted:x.json"]
    parser = build_parser(argv=argv)
    args = parser.parse_args([*argv, "--models", "anthropic/*, sonnet:high,gpt-5"])
    _, settings = agent_settings(args, run_trust(args))
    assert settings.enabled_models == ["anthropic/*", "sonnet:high", "gpt-5"]
    args = parser.parse_args(argv)
    _, settings = agent_settings(args, run_trust(args))
    assert settings.enabled_models == ["from-pi"]


def test_the_defaults_the_model_picker_marks_are_the_configuration_s_not_the_flags(
    project: Path, agent_dir: Path
) -> None:
    """The model and patterns a start without ``--model`` and ``--models`` takes, as Pi's
    settings manager gives them to its model selector, whatever the flags of this run."""
    pi_settings = {
        "defaultProvider": "loop",
        "defaultModel": "deep",
        "enabledModels": ["loop/*"],
        "defaultThinkingLevel": "high",
    }
    (agent_dir / "settings.json").write_text(json.dumps(pi_settings))
    argv = ["chat", "--cwd", str(project)]
    parser = build_parser(argv=argv)
    flags_given = ["--model", "scripted:x.json", "--models", "far/*", "--thinking", "low"]
    for flags in ([], flags_given):
        args = parser.parse_args([*argv, *flags])
        trust = run_trust(args)
        cwd, _ = agent_settings(args, trust)
        defaults = configured_defaults(trust, cwd)
        configured = (defaults.model, defaults.enabled_models, defaults.thinking_level)
        assert configured == ("loop/deep", ("loop/*",), "high"), flags
        file = agent_dir / "settings.json"
        assert defaults.origins["thinking_level"] == f"{file} (Pi's defaultThinkingLevel)"


def test_a_bare_ctxmodes_takes_models_as_chat_s_option() -> None:
    def meant(*argv: str) -> list[str] | None:
        return meant_command_line(argv, is_command=CORE_COMMANDS.__contains__, terminal=True)

    assert meant("--models", "sonnet,haiku") == ["chat", "--models", "sonnet,haiku"]
    assert meant("--models", "sonnet", "run") is None


LOOP = {
    "api": "openai-completions",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key": "sk-loop",
    "models": [{"id": "plain"}, {"id": "deep", "reasoning": True}, {"id": "wide"}],
}
DARK = {"api": "openai-completions", "base_url": "http://127.0.0.1:9/v1", "models": [{"id": "x"}]}


@pytest.mark.parametrize(
    ("configured", "patterns", "started"),
    [
        # No model configured: the scope's first, at its pattern's level.
        (None, ["dark/*", "deep:high", "plain"], "loop/deep:high"),
        # The configured model when the scope holds it (at its level there), else the first.
        ("loop/plain", ["deep:high", "plain:low"], "loop/plain:low"),
        ("loop/wide:medium", ["deep", "wide"], "loop/wide:medium"),
        ("loop/wide", ["plain", "deep"], "loop/plain"),
        # A configured model that names none (gone from the catalog) leaves the scope's.
        ("loop/gone", ["plain", "deep"], "loop/plain"),
        # Nothing with credentials in the scope: no model from it.
        ("loop/wide", ["dark/*", "nope"], None),
    ],
)
def test_a_new_session_starts_on_the_scope_s_model_as_pi_picks_it(
    configured: str | None,
    patterns: list[str],
    started: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)
    settings = Settings.model_validate(
        {"model": configured, "enabled_models": patterns, "providers": {"loop": LOOP, "dark": DARK}}
    )
    assert scope_start_model(settings) == started


def test_run_and_print_mode_start_a_new_session_on_the_scope_s_model(tmp_path: Path) -> None:
    """As Pi's print mode: without ``--model``, the scope's pick (``--models``, else Pi's
    ``enabledModels``), at its pattern's level."""
    from support.cli_process import run_ctxmodes
    from support.wire_server import Reply, WireServer, text_stream

    with WireServer([Reply(text_stream("openai-completions", "ok"))] * 2) as server:
        loop = {**LOOP, "base_url": f"{server.base_url}/v1"}
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "config.toml").write_text(
            "[providers.loop]\n"
            + "".join(f"{k} = {json.dumps(v)}\n" for k, v in loop.items() if k != "models")
            + 'models = [{ id = "plain" }, { id = "deep", reasoning = true }]\n'
        )
        (tmp_path / "agent").mkdir()
        (tmp_path / "agent" / "settings.json").write_text(json.dumps({"enabledModels": ["plain"]}))
        printed = run_ctxmodes(tmp_path, "-p", "--no-session", "hi")
        scoped = run_ctxmodes(tmp_path, "run", "--models", "deep:low", "hi")
    assert (printed.returncode, printed.stdout) == (0, "ok\n"), printed.stderr
    assert scoped.returncode == 0, scoped.stderr
    models = [json.loads(request["body"])["model"] for request in server.requests]
    assert models == ["plain", "deep"]
    [session] = (tmp_path / "agent").rglob("*.jsonl")
    levels = [json.loads(line).get("thinkingLevel") for line in session.read_text().splitlines()]
    assert "low" in levels
