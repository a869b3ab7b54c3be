"""``--models`` on ``chat`` (and a bare ``ctxmodes``), as Pi's: comma-separated patterns,
each trimmed, over the ``enabled_models`` setting and Pi's ``enabledModels``."""

from __future__ import annotations

import json
from pathlib import Path

from ctxmodes.cli import _chat_shorthand, build_parser
from ctxmodes.cli.options import agent_settings, run_trust


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
