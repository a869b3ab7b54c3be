"""``ctxmodes config show`` names the source of every value, whichever spelling set it."""

import re
from pathlib import Path

import pytest

from ctxmodes.config import DEFAULT_SOURCE, load_settings
from ctxmodes.errors import ConfigError


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


def test_two_files_may_spell_one_key_each_its_own_way(user_dir: Path, project: Path):
    """The user file in Pi's spelling, the project's in ctxmodes' own: the project's wins."""
    (user_dir / "config.toml").write_text("[retry]\nmaxRetries = 5\nbaseDelayMs = 10\n")
    (project / ".ctxmodes.toml").write_text("[retry]\nmax_retries = 1\n")
    loaded = load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    retry = loaded.settings.retry
    assert (retry.max_retries, retry.base_delay_ms) == (1, 10)
    assert loaded.origins["retry.max_retries"] == str(project / ".ctxmodes.toml")
    assert loaded.origins["retry.base_delay_ms"] == str(user_dir / "config.toml")


def test_a_command_line_value_is_attributed_to_the_command_line(user_dir: Path, project: Path):
    loaded = load_settings(
        cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)}, cli={"mode": "local"}
    )
    assert loaded.origins["mode"] == "command line"
    assert loaded.origins["model"] == DEFAULT_SOURCE


@pytest.mark.slow  # runs ctxmodes in a process of its own
def test_config_show_refuses_a_mode_that_is_not_installed_naming_where_it_was_set(
    tmp_path: Path,
) -> None:
    """``config show`` validates every value, the mode of new sessions included: a typo
    there is one line naming its source, as ``run`` would refuse it at its first prompt."""
    from support.cli_process import run_ctxmodes

    shown = run_ctxmodes(tmp_path, "config", "show", env={"CTXMODES_MODE": "tre"})
    assert shown.returncode == 1
    assert shown.stdout == ""
    (line,) = shown.stderr.splitlines()
    assert line.startswith("ctxmodes: error: environment: mode: unknown mode 'tre'; installed")
    assert "tree" in line.split("installed modes: ")[1].split(", ")
    (tmp_path / "config").mkdir()
    user_file = tmp_path / "config" / "config.toml"
    user_file.write_text('mode = "locale"\n')
    shown = run_ctxmodes(tmp_path, "config", "show")
    assert shown.returncode == 1
    assert shown.stderr.startswith(f"ctxmodes: error: {user_file}: mode: unknown mode 'locale'")
    user_file.write_text('mode = "local"\n')
    shown = run_ctxmodes(tmp_path, "config", "show")
    assert shown.returncode == 0, shown.stderr
    assert re.search(rf'^mode +\= "local"  # {re.escape(str(user_file))}$', shown.stdout, re.M)


def test_one_table_spelling_a_key_both_ways_is_an_error_naming_both(user_dir: Path, project: Path):
    (user_dir / "config.toml").write_text("[retry]\nmaxRetries = 5\nmax_retries = 1\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(cwd=project, environ={"CTXMODES_CONFIG_DIR": str(user_dir)})
    assert str(raised.value) == (
        f"{user_dir / 'config.toml'}: retry: max_retries and maxRetries are one setting: "
        "keep one of them"
    )
