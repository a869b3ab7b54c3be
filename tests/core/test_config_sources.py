"""Reading the plugin lists from the configuration files without validating the rest."""

import pytest

from ctxmodes.config import load_settings
from ctxmodes.config_sources import read_plugin_lists
from ctxmodes.errors import ConfigError


def environ(user_dir):
    return {"CTXMODES_CONFIG_DIR": str(user_dir)}


def test_nothing_configured_allows_every_plugin(project, user_dir):
    assert read_plugin_lists(cwd=project, environ=environ(user_dir)) == (None, [])


@pytest.mark.parametrize(
    ("user_file", "project_file"),
    [
        ('[plugins]\nblock = ["remote"]\n', '[plugins]\nallow = ["tree"]\n'),
        ('[plugins]\nallow = ["local"]\nblock = ["tree"]\n', '[plugins]\nblock = ["remote"]\n'),
        ('mode = "tree"\n', "[plugins]\nallow = []\n"),
        ("", ""),
    ],
)
def test_the_lists_are_those_the_settings_model_loads(project, user_dir, user_file, project_file):
    (user_dir / "config.toml").write_text(user_file)
    (project / ".ctxmodes.toml").write_text(project_file)
    plugins = load_settings(cwd=project, environ=environ(user_dir)).settings.plugins
    lists = read_plugin_lists(cwd=project, environ=environ(user_dir))
    assert lists == (plugins.allow, plugins.block)


def test_a_bad_setting_elsewhere_does_not_hide_the_lists(project, user_dir):
    (project / ".ctxmodes.toml").write_text('mode = 5\n[plugins]\nblock = ["tree"]\n')
    assert read_plugin_lists(cwd=project, environ=environ(user_dir)) == (None, ["tree"])


@pytest.mark.parametrize(
    "text",
    [
        'plugins = "tree"\n',
        '[plugins]\nblock = "tree"\n',
        "[plugins]\nallow = [1]\n",
        '[plugins]\nblocked = ["tree"]\n',
    ],
)
def test_an_unusual_plugins_table_is_left_to_the_settings_model(project, user_dir, text):
    (project / ".ctxmodes.toml").write_text(text)
    assert read_plugin_lists(cwd=project, environ=environ(user_dir)) is None
    with pytest.raises(ConfigError, match="plugins"):
        load_settings(cwd=project, environ=environ(user_dir))


def test_invalid_toml_is_an_error_naming_the_file(project, user_dir):
    (project / ".ctxmodes.toml").write_text("plugins = [\n")
    with pytest.raises(ConfigError, match=r"\.ctxmodes\.toml: invalid TOML"):
        read_plugin_lists(cwd=project, environ=environ(user_dir))
