"""``ctxmodes config show`` names the source of every value, whichever spelling set it."""

from pathlib import Path

from ctxmodes.config import DEFAULT_SOURCE, load_settings


def test_a_key_spelled_as_pi_spells_it_is_attributed_to_its_file(user_dir: Path, project: Path):
    (user_dir / "config.toml").write_text(
        "[retry]\nmaxRetries = 5\n[retry.provider]\ntimeoutMs = 1000\n"
    )
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    assert loaded.settings.retry.max_retries == 5
    source = str(user_dir / "config.toml")
    assert loaded.origins["retry.max_retries"] == source
    assert loaded.origins["retry.provider.timeout_ms"] == source
    assert loaded.origins["retry.base_delay_ms"] == DEFAULT_SOURCE
    assert "retry.maxRetries" not in loaded.origins


def test_a_command_line_value_is_attributed_to_the_command_line(user_dir: Path, project: Path):
    loaded = load_settings(
        cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)}, cli={"mode": "local"}
    )
    assert loaded.origins["mode"] == "command line"
    assert loaded.origins["model"] == DEFAULT_SOURCE
