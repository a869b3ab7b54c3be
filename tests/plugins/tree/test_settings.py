"""``[modes.tree]``: the archive bounds reach Tree's state; ``config show`` prints them."""

from __future__ import annotations

import json

import pytest
from support.cli_rig import trust_project

import ctxmodes_tree
from ctxmodes.cli import main
from ctxmodes.errors import ConfigError
from ctxmodes.modes import ModeRegistry
from ctxmodes.offline import OfflineSession
from ctxmodes.session.manager import SessionManager
from ctxmodes.testing.plugin import isolated_plugin_manager
from ctxmodes_tree.limits import ArchiveLimits


def test_the_table_sets_the_archive_limits(tmp_path):
    pm = isolated_plugin_manager(ctxmodes_tree)
    registry = ModeRegistry.from_plugin_manager(pm)
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    mode = registry.activate(
        pm, "tree", OfflineSession(manager, mode_name="tree"), {"archive_max_items": 3}
    )
    assert mode.parts.state.archives.limits == ArchiveLimits(max_items=3)
    manager.close()


def test_a_bad_value_names_the_mode_and_key():
    spec = ModeRegistry.from_plugin_manager(isolated_plugin_manager(ctxmodes_tree)).get("tree")
    with pytest.raises(ConfigError, match=r"^\[modes\.tree\]: archive_max_depth: Input should"):
        spec.spec.validate_settings({"archive_max_depth": 0})


@pytest.fixture
def configured(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "user"))
    monkeypatch.chdir(tmp_path)
    trust_project(tmp_path, monkeypatch)
    return tmp_path / ".ctxmodes.toml"


def test_config_show_prints_mode_settings_with_sources(configured, capsys):
    configured.write_text("[modes.tree]\narchive_max_items = 10\n")
    assert main(["config", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["modes.tree.archive_max_items"] == {"value": 10, "source": str(configured)}
    assert shown["modes.tree.archive_max_depth"] == {"value": 10_000_000, "source": "default"}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            "[modes.tree]\narchive_max_itemz = 1\n",
            "[modes.tree]: unknown setting 'archive_max_itemz'",
        ),
        ("[modes.nope]\nx = 1\n", "[modes.nope]: unknown mode 'nope'; installed modes:"),
    ],
)
def test_config_show_refuses_what_no_mode_accepts(configured, capsys, table, message):
    configured.write_text(table)
    assert main(["config", "show"]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
