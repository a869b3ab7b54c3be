"""The host runs its sessions with the options the effective settings set, Pi's own among
them: a session opened where Pi's settings name compaction, branch-summary and delivery
settings runs with them, and with ctxmodes' own where both name one."""

from __future__ import annotations

import json

from ctxmodes.sdk import open_agent


def test_a_session_runs_with_the_options_of_pis_settings_and_ctxmodes_own(
    project, user_dir, agent_dir, monkeypatch
):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(user_dir))
    (agent_dir / "settings.json").write_text(
        json.dumps(
            {
                "defaultThinkingLevel": "medium",
                "steeringMode": "all",
                "compaction": {"enabled": False, "reserveTokens": 8192},
                "branchSummary": {"skipPrompt": True},
            }
        )
    )
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"followUpMode": "all", "compaction": {"keepRecentTokens": 4000}})
    )
    (user_dir / "config.toml").write_text("[branch_summary]\nreserve_tokens = 1000\n")
    script = project / "script.json"
    script.write_text(json.dumps({"responses": []}))
    with open_agent(cwd=project, model=f"scripted:{script}", session_dir=project / "s") as agent:
        options = agent.session.options
    assert options.thinking_level == "medium"
    assert (options.steering_mode, options.follow_up_mode) == ("all", "all")
    compaction = options.compaction
    assert (compaction.enabled, compaction.reserve_tokens) == (False, 8192)
    assert compaction.keep_recent_tokens == 4000
    summary = options.branch_summary
    assert (summary.skip_prompt, summary.reserve_tokens) == (True, 1000)
