"""``ctxmodes config show`` prints a working configuration file: its listing, copied into
``config.toml`` somewhere else, gives the same settings, now all from that file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings

USER_FILE = """\
mode = "tree"
durability = "flush"
[plugins]
block = ["some-plugin"]
[modes.tree]
archive_max_items = 7
[providers.local]
api = "openai-completions"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "LOCAL_KEY"
headers = { X-Title = "a \\"quoted\\" ünïcode title\\u007f", "X Odd Name" = "1" }
compat = { supportsDeveloperRole = false }
models = [
  { id = "qwen3", name = "Qwen 3", reasoning = true, cost = { input = 0.5, cacheRead = 0.1 } },
  { id = "plain" },
]
"""
PI_SETTINGS = {
    "defaultThinkingLevel": "high",
    "steeringMode": "all",
    "compaction": {"reserveTokens": 8192},
    "branchSummary": {"skipPrompt": True},
    "retry": {"maxRetries": 5, "provider": {"timeoutMs": 1000}},
}


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = ctxmodes(capsys, "config", "show", *argv)
    assert (code, err) == (0, "")
    return out


def _values(out: str) -> dict[str, object]:
    return {key: row["value"] for key, row in json.loads(out).items()}


def test_the_listing_copied_into_a_config_file_gives_the_same_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    here = tmp_path / "first"
    here.mkdir()
    isolate_settings(here, monkeypatch)
    (here / "config").mkdir()
    (here / "config" / "config.toml").write_text(USER_FILE)
    agent = here / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps(PI_SETTINGS))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("CTXMODES_MODEL", "local/qwen3")
    listing = _show(capsys)
    expected = _values(_show(capsys, "--json"))
    assert "# plugins.allow is not set  # default" in listing.splitlines()
    assert expected["thinking_level"] == "high"  # from Pi's settings
    assert expected["retry.max_retries"] == 5

    elsewhere = tmp_path / "second"
    elsewhere.mkdir()
    isolate_settings(elsewhere, monkeypatch)
    (elsewhere / "agent").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(elsewhere / "agent"))  # no Pi settings
    (elsewhere / "config").mkdir()
    copied = elsewhere / "config" / "config.toml"
    copied.write_text(listing)
    assert tomllib.loads(listing)["retry"]["max_retries"] == 5
    shown = json.loads(_show(capsys, "--json"))
    assert _values(json.dumps(shown)) == expected
    # Every value set is now the copied file's, and nothing unset was written.
    assert {row["source"] for row in shown.values() if row["value"] is not None} == {str(copied)}
    assert {row["source"] for row in shown.values() if row["value"] is None} == {"default"}
    assert _show(capsys).replace(str(copied), "SOURCE") == _show(capsys).replace(
        str(copied), "SOURCE"
    )


def test_with_no_model_set_the_listing_names_the_model_a_session_starts_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxmodes.providers.catalog import default_models

    isolate_settings(tmp_path, monkeypatch)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert _show(capsys).splitlines()[-1] == (
        "# no model is set and none has credentials: see `ctxmodes login`"
    )
    monkeypatch.setenv("GROQ_API_KEY", "g")
    assert _show(capsys).splitlines()[-1] == (
        f"# no model is set: a new session starts on groq/{default_models()['groq']}, "
        "the first with credentials"
    )
    monkeypatch.setenv("CTXMODES_MODEL", "groq/llama-3.1-8b-instant")
    assert "no model is set" not in _show(capsys)


@pytest.mark.parametrize("argv", [(), ("--json",), ("--mode", "tree")])
def test_config_alone_is_config_show(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(USER_FILE)
    code, out, err = ctxmodes(capsys, "config", *argv)
    assert (code, err) == (0, "")
    assert out == _show(capsys, *argv)
    assert '"tree"' in out  # the user file's mode, in either form
