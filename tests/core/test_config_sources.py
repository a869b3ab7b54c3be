"""Reading the mode and the plugin lists from the configuration files without validating
the rest."""

import sys

import platformdirs
import pytest

from ctxmodes.config import load_settings
from ctxmodes.config_sources import project_config_file, read_startup_settings, user_config_dir
from ctxmodes.errors import ConfigError


def environ(user_dir, **more):
    return {"CTXMODES_CONFIG_DIR": str(user_dir), **more}


def read_plugin_lists(**options):
    startup = read_startup_settings(**options)
    return None if startup is None else (startup.allow, startup.block)


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
    settings = load_settings(cwd=project, environ=environ(user_dir)).settings
    startup = read_startup_settings(cwd=project, environ=environ(user_dir))
    assert startup is not None
    assert (startup.mode, startup.allow, startup.block) == (
        settings.mode,
        settings.plugins.allow,
        settings.plugins.block,
    )


@pytest.mark.parametrize(
    ("env", "flag", "expected"),
    [({}, None, "local"), ({"CTXMODES_MODE": "tree"}, None, "tree"), ({}, "remote", "remote")],
)
def test_the_mode_is_merged_as_the_settings_model_merges_it(project, user_dir, env, flag, expected):
    (user_dir / "config.toml").write_text('mode = "off"\n')
    (project / ".ctxmodes.toml").write_text('mode = "local"\n')
    options = {"cwd": project, "environ": environ(user_dir, **env)}
    assert load_settings(**options, cli={"mode": flag}).settings.mode == expected
    startup = read_startup_settings(**options, mode=flag)
    assert startup is not None
    assert startup.mode == expected


def test_a_mode_that_is_no_string_is_left_to_the_settings_model(project, user_dir):
    (project / ".ctxmodes.toml").write_text('mode = 5\n[plugins]\nblock = ["tree"]\n')
    startup = read_startup_settings(cwd=project, environ=environ(user_dir))
    assert startup is not None
    assert (startup.mode, startup.block) == (None, ["tree"])
    with pytest.raises(ConfigError, match="mode"):
        load_settings(cwd=project, environ=environ(user_dir))


def test_an_untrusted_project_file_is_left_out_and_named(tmp_path, user_dir):
    (tmp_path / ".ctxmodes.toml").write_text('mode = "tree"\n')
    startup = read_startup_settings(
        cwd=tmp_path, environ=environ(user_dir), trusted=lambda _directory: False
    )
    assert startup is not None
    assert (startup.mode, startup.skipped) == ("off", tmp_path / ".ctxmodes.toml")


@pytest.mark.parametrize(
    ("text", "is_config"),
    [
        ('[project]\nname = "x"\n', False),
        ("[project\nnot toml at all\n", False),
        ('[tool.ctxmodes]\nmode = "tree"\n', True),
        ('[tool."\\u0063txmodes"]\nmode = "tree"\n', True),
        ('[tool.other]\nname = "ctxmodes"\n', False),
        ("[tool.ctxmodes\n", True),  # broken, and perhaps meant for ctxmodes: waits for trust
    ],
)
def test_a_pyproject_file_is_project_configuration_only_with_a_ctxmodes_table(
    tmp_path, text, is_config
):
    (tmp_path / "pyproject.toml").write_text(text)
    expected = tmp_path / "pyproject.toml" if is_config else None
    assert project_config_file(tmp_path) == expected


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


@pytest.mark.skipif(sys.platform != "linux", reason="the folder is named here only on Linux")
@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/someone"},
        {"HOME": "/home/someone/"},
        {"HOME": "/"},
        {"HOME": "/home/someone", "XDG_CONFIG_HOME": "/elsewhere/config"},
        {"HOME": "/home/someone", "XDG_CONFIG_HOME": "/elsewhere/config/"},
        {"HOME": "/home/someone", "XDG_CONFIG_HOME": "relative/config"},
        {"HOME": "/home/someone", "XDG_CONFIG_HOME": ""},
    ],
)
def test_the_user_folder_is_the_one_platformdirs_names(monkeypatch, env):
    for name in ("HOME", "XDG_CONFIG_HOME", "ANDROID_DATA", "ANDROID_ROOT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert user_config_dir() == platformdirs.user_config_dir("ctxmodes")
