import json

import pytest

from ctxmodes.windows.compaction import (
    NO_SUMMARY_COMPACTION_TEXT,
    no_summary_compaction,
    parse_no_summary_details,
)


def test_fixed_summary_text():
    assert NO_SUMMARY_COMPACTION_TEXT == (
        "[Pi Codex context-window boundary; no conversation summary was generated.]"
    )


def test_compaction_cuts_at_the_boundary():
    compaction = no_summary_compaction(
        boundary_entry_id="marker1",
        default_first_kept_entry_id="pi-cut",
        tokens_before=1234,
        window_id="w1",
    )
    assert compaction.summary == NO_SUMMARY_COMPACTION_TEXT
    assert compaction.first_kept_entry_id == "marker1"
    assert compaction.tokens_before == 1234
    assert json.dumps(compaction.details.dump(), separators=(",", ":")) == (
        '{"protocol":1,"strategy":"codex-context-window","windowId":"w1"}'
    )


def test_without_a_boundary_pi_cut_is_kept_and_window_is_omitted():
    compaction = no_summary_compaction(
        boundary_entry_id=None,
        default_first_kept_entry_id="pi-cut",
        tokens_before=0,
        window_id=None,
    )
    assert compaction.first_kept_entry_id == "pi-cut"
    assert compaction.details.dump() == {"protocol": 1, "strategy": "codex-context-window"}


@pytest.mark.parametrize(
    ("details", "window_id"),
    [
        ({"protocol": 1, "strategy": "codex-context-window", "windowId": "w"}, "w"),
        ({"protocol": 1, "strategy": "codex-context-window"}, None),
    ],
)
def test_recognised(details, window_id):
    parsed = parse_no_summary_details(details)
    assert parsed is not None
    assert parsed.window_id == window_id


@pytest.mark.parametrize(
    "details",
    [
        None,
        {"readFiles": [], "modifiedFiles": []},
        {"protocol": 2, "strategy": "codex-context-window"},
        {"protocol": 1, "strategy": "codex-context-tree"},
    ],
)
def test_other_compactions_are_not_recognised(details):
    assert parse_no_summary_details(details) is None
