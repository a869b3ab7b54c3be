"""``--models`` on ``chat`` (and a bare ``ctxmodes``), as Pi's: comma-separated patterns,
each trimmed, over the ``enabled_models`` setting and Pi's ``enabledModels``; without
``--model``, a new session starts on the scope's model as Pi picks it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxmodes.cli import _chat_shorthand, build_parser
from ctxmodes.cli.chat_cmd import scope_start_model
from ctxmodes.cli.options import agent_settings, run_trust
from ctxmodes.config import Settings


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


def test_a_bare_ctxmodes_takes_models_as_chat_s_option() -> None:
    assert _chat_shorthand(["--models", "sonnet,haiku"])
    assert not _chat_shorthand(["--models", "sonnet", "run"])


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
