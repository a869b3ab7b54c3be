import json

import pytest
from pydantic import BaseModel, Field

from ctxmodes.config import load_settings, validate_owned
from ctxmodes.errors import ConfigError


def load(project, user_dir, env=None, cli=None):
    environ = {"CTXMODES_CONFIG_DIR": str(user_dir), **(env or {})}
    return load_settings(cwd=project, environ=environ, cli=cli)


def test_defaults_when_nothing_is_configured(project, user_dir):
    loaded = load(project, user_dir)
    assert loaded.settings.mode == "off"
    assert loaded.settings.durability == "fsync"
    assert set(loaded.origins.values()) == {"default"}


def test_each_layer_overrides_the_one_below(project, user_dir):
    (user_dir / "config.toml").write_text('mode = "user"\nmodel = "scripted:u.json"\n')
    (project / ".ctxmodes.toml").write_text('mode = "project"\n')
    loaded = load(project, user_dir)
    assert loaded.settings.mode == "project"
    assert loaded.origins["mode"].endswith(".ctxmodes.toml")
    assert loaded.settings.model == "scripted:u.json"
    assert loaded.origins["model"].endswith("config.toml")

    loaded = load(project, user_dir, env={"CTXMODES_MODE": "env"})
    assert (loaded.settings.mode, loaded.origins["mode"]) == ("env", "environment")

    loaded = load(project, user_dir, env={"CTXMODES_MODE": "env"}, cli={"mode": "flag"})
    assert (loaded.settings.mode, loaded.origins["mode"]) == ("flag", "command line")


def test_unset_flags_do_not_override(project, user_dir):
    loaded = load(project, user_dir, env={"CTXMODES_MODE": "env"}, cli={"mode": None})
    assert loaded.settings.mode == "env"


def test_pyproject_table_is_a_project_source(project, user_dir):
    (project / "pyproject.toml").write_text('[project]\nname="x"\n[tool.ctxmodes]\nmode = "py"\n')
    loaded = load(project, user_dir)
    assert loaded.settings.mode == "py"
    assert "[tool.ctxmodes]" in loaded.origins["mode"]


def test_dedicated_project_file_wins_over_pyproject(project, user_dir):
    (project / "pyproject.toml").write_text('[tool.ctxmodes]\nmode = "py"\n')
    (project / ".ctxmodes.toml").write_text('mode = "dedicated"\n')
    assert load(project, user_dir).settings.mode == "dedicated"


def test_nested_tables_merge_key_by_key(project, user_dir):
    (user_dir / "config.toml").write_text('[plugins]\nblock = ["a"]\n')
    (project / ".ctxmodes.toml").write_text('[plugins]\nallow = ["b"]\n')
    loaded = load(project, user_dir)
    assert loaded.settings.plugins.block == ["a"]
    assert loaded.settings.plugins.allow == ["b"]
    assert loaded.origins["plugins.block"].endswith("config.toml")
    assert loaded.origins["plugins.allow"].endswith(".ctxmodes.toml")


def test_invalid_toml_names_the_file(project, user_dir):
    (project / ".ctxmodes.toml").write_text("mode = \n")
    with pytest.raises(ConfigError, match=r"\.ctxmodes\.toml: invalid TOML"):
        load(project, user_dir)


def test_unknown_key_names_the_source_and_key(project, user_dir):
    (user_dir / "config.toml").write_text('mdoe = "tree"\n')
    with pytest.raises(ConfigError, match=r"config\.toml: mdoe"):
        load(project, user_dir)


def test_bad_value_names_the_source(project, user_dir):
    with pytest.raises(ConfigError, match="command line: durability"):
        load(project, user_dir, cli={"durability": "sometimes"})


def test_mode_tables_merge_and_keep_their_sources(project, user_dir):
    (user_dir / "config.toml").write_text("[modes.tree]\narchive_max_items = 5\n")
    (project / ".ctxmodes.toml").write_text("[modes.tree]\narchive_max_depth = 9\n")
    loaded = load(project, user_dir)
    assert loaded.settings.modes == {"tree": {"archive_max_items": 5, "archive_max_depth": 9}}
    assert loaded.origins["modes.tree.archive_max_items"].endswith("config.toml")
    assert loaded.origins["modes.tree.archive_max_depth"].endswith(".ctxmodes.toml")


class Owned(BaseModel):
    limit: int = Field(default=1, ge=1)


def test_an_owned_table_is_validated_by_its_owner():
    assert validate_owned("modes", "mine", Owned, {"limit": 3}).limit == 3
    assert validate_owned("modes", "mine", Owned, {}).limit == 1


def test_an_unknown_owned_key_is_an_error_naming_the_owner_even_if_the_model_ignores_it():
    with pytest.raises(
        ConfigError, match=r"^\[modes\.mine\]: unknown setting 'limt' \(settings: limit\)$"
    ):
        validate_owned("modes", "mine", Owned, {"limt": 3})


def test_a_bad_owned_value_names_the_owner_and_key():
    with pytest.raises(ConfigError, match=r"^\[modes\.mine\]: limit: Input should be greater"):
        validate_owned("modes", "mine", Owned, {"limit": 0})


def test_an_untrusted_project_file_is_not_read(clone, user_dir):
    (user_dir / "config.toml").write_text('mode = "user"\n')
    (clone / ".ctxmodes.toml").write_text('mode = "project"\nnot valid = [\n')
    loaded = load(clone, user_dir)
    assert loaded.settings.mode == "user"
    assert loaded.skipped == clone / ".ctxmodes.toml"
    assert not any(".ctxmodes.toml" in source for source in loaded.origins.values())


def test_a_trusted_project_may_set_what_the_user_file_may(project, user_dir):
    (project / ".ctxmodes.toml").write_text(
        'mode = "tree"\nmodel = "p/m"\ndurability = "none"\n[plugins]\nblock = ["x"]\n'
        '[providers.p]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key = "!echo key"\nheaders = { "X-Team" = "a" }\nmodels = [{ id = "m" }]\n'
    )
    loaded = load(project, user_dir)
    assert loaded.skipped is None
    settings = loaded.settings
    assert (settings.mode, settings.model, settings.durability) == ("tree", "p/m", "none")
    assert settings.plugins.block == ["x"]
    assert settings.providers["p"].api_key == "!echo key"
    assert settings.providers["p"].headers == {"X-Team": "a"}


def _pi_settings(directory, **values):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "settings.json").write_text(json.dumps(values))


def test_pis_default_model_is_the_model_when_nothing_else_names_one(project, user_dir, agent_dir):
    _pi_settings(agent_dir, defaultProvider="anthropic", defaultModel="claude-sonnet-4-5")
    loaded = load(project, user_dir)
    assert loaded.settings.model == "anthropic/claude-sonnet-4-5"
    assert loaded.origins["model"].startswith(str(agent_dir / "settings.json"))
    assert "Pi's defaultProvider and defaultModel" in loaded.origins["model"]
    # ctxmodes' own settings are above it, whichever names the model.
    (user_dir / "config.toml").write_text('model = "openai/gpt-5.1"\n')
    assert load(project, user_dir).settings.model == "openai/gpt-5.1"
    (user_dir / "config.toml").unlink()
    loaded = load(project, user_dir, env={"CTXMODES_MODEL": "scripted:s.json"})
    assert (loaded.settings.model, loaded.origins["model"]) == ("scripted:s.json", "environment")


def test_a_trusted_projects_pi_settings_override_the_global_ones_key_by_key(
    project, clone, user_dir, agent_dir
):
    _pi_settings(agent_dir, defaultProvider="anthropic", defaultModel="claude-sonnet-4-5")
    for directory in (project, clone):
        _pi_settings(directory / ".pi", defaultModel="claude-opus-4-1")
    loaded = load(project, user_dir)
    assert loaded.settings.model == "anthropic/claude-opus-4-1"
    assert loaded.origins["model"].startswith(str(project / ".pi" / "settings.json"))
    # An untrusted project's settings are not read, as Pi reads none of them.
    assert load(clone, user_dir).settings.model == "anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize(
    "values",
    [{}, {"defaultProvider": "anthropic"}, {"defaultModel": "gpt-5.1"}, {"defaultModel": ""}],
)
def test_pi_settings_that_name_no_whole_model_name_none(project, user_dir, agent_dir, values):
    _pi_settings(agent_dir, **values)
    loaded = load(project, user_dir)
    assert (loaded.settings.model, loaded.origins["model"]) == (None, "default")


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_unreadable_pi_settings_name_the_file(project, user_dir, agent_dir, text):
    (agent_dir / "settings.json").write_text(text)
    with pytest.raises(ConfigError, match=str(agent_dir / "settings.json")):
        load(project, user_dir)
