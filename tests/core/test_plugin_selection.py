"""What the selection makes of each installed plugin, and the words for a plugin it does not
load or that fails to load: why, and which settings change it, in one line."""

from __future__ import annotations

import pytest

from ctxmodes.plugin_selection import (
    BLOCKED,
    NOT_ALLOWED,
    PluginSelection,
    load_failure_words,
    not_loaded_words,
    select_entry_points,
)


def test_block_wins_over_allow_and_the_essential_plugin_survives_any_allow_list():
    selection = PluginSelection(allow=frozenset({"tree", "local"}), block=frozenset({"tree"}))
    statuses = {ep.name: status for ep, status in select_entry_points(selection)}
    assert statuses == {
        "local": "loaded",
        "off": "loaded",
        "remote": NOT_ALLOWED,
        "tree": BLOCKED,
    }


def test_a_blocked_plugin_names_both_block_lists():
    assert not_loaded_words("tree", BLOCKED) == (
        "plugin 'tree' is blocked: remove it from plugins.block and CTXMODES_BLOCK_PLUGINS "
        "to load it"
    )


def test_a_plugin_the_allow_list_leaves_out_names_both_allow_lists():
    assert not_loaded_words("tree", NOT_ALLOWED) == (
        "plugin 'tree' is not allowed: the allow list (plugins.allow, CTXMODES_LOAD_PLUGINS) "
        "leaves it out; add it there to load it"
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ImportError("needs fastmath\nbuild it first\n"), "needs fastmath"),
        (RuntimeError("\n  indented first line  \nmore"), "indented first line"),
        (RuntimeError(), "RuntimeError"),
        (KeyError("key"), "'key'"),
    ],
)
def test_a_load_failure_is_the_first_line_of_its_error_and_the_way_to_run_without_it(error, reason):
    assert load_failure_words("fancy", "fancy_modes:plugin", error, blockable=True) == (
        f"plugin 'fancy' (fancy_modes:plugin) failed to load: {reason} "
        "(to run without it, block it: plugins.block or CTXMODES_BLOCK_PLUGINS)"
    )


@pytest.mark.parametrize(("name", "blockable"), [("off", True), ("ctxmodes.tools", False)])
def test_no_blocking_is_offered_for_a_plugin_that_cannot_be_blocked(name, blockable):
    words = load_failure_words(name, "target", ValueError("bad"), blockable=blockable)
    assert words == f"plugin {name!r} (target) failed to load: bad"
