"""The archive manifest's persisted shape and validation."""

from __future__ import annotations

import pytest

from ctxmodes.session import codec
from ctxmodes.session.models import BranchSummaryEntry
from ctxmodes_tree.manifest import manifest_for_summary, parse_manifest

VALID = {
    "protocol": 1,
    "strategy": "codex-context-tree",
    "windowId": "w-1",
    "boundaryEntryId": "b1",
    "summaryEntryId": "s1",
    "archivedLeafId": "l1",
    "branchBaseId": "base",
}


def summary(parent_id: str | None) -> BranchSummaryEntry:
    return BranchSummaryEntry(
        id="s1",
        parent_id=parent_id,
        timestamp="2025-01-01T00:00:00.000Z",
        from_id="l1",
        summary="text",
    )


def test_dump_is_the_wire_form_in_key_order() -> None:
    manifest = manifest_for_summary("w-1", "b1", summary("base"))
    assert codec.dumps(manifest.dump()) == codec.dumps(VALID)
    assert list(manifest.dump()) == list(VALID)


def test_a_root_summary_records_a_null_branch_base() -> None:
    dumped = manifest_for_summary("w-1", "b1", summary(None)).dump()
    assert "branchBaseId" in dumped
    assert dumped["branchBaseId"] is None
    assert parse_manifest(dumped) is not None


def test_round_trip_and_agreement() -> None:
    parsed = parse_manifest(VALID)
    assert parsed is not None
    assert parsed.dump() == VALID
    assert parsed.agrees_with(summary("base"))
    assert not parsed.agrees_with(summary("elsewhere"))


def test_later_protocol_additions_are_ignored() -> None:
    assert parse_manifest({**VALID, "compactionEntryId": "c1"}) is not None


@pytest.mark.parametrize(
    "change",
    [
        {"protocol": 2},
        {"protocol": "1"},
        {"protocol": True},
        {"protocol": False},
        {"strategy": "codex-context-window"},
        {"windowId": ""},
        {"boundaryEntryId": 7},
        {"summaryEntryId": None},
        {"archivedLeafId": ""},
        {"branchBaseId": ""},
        {"branchBaseId": 3},
    ],
)
def test_malformed_fields_make_the_manifest_invalid(change: dict[str, object]) -> None:
    assert parse_manifest({**VALID, **change}) is None


@pytest.mark.parametrize("missing", list(VALID))
def test_every_key_is_required(missing: str) -> None:
    data = {key: value for key, value in VALID.items() if key != missing}
    assert parse_manifest(data) is None


@pytest.mark.parametrize("data", [None, "x", [], 3, {"data": VALID}])
def test_non_objects_are_invalid(data: object) -> None:
    assert parse_manifest(data) is None


def test_the_protocol_is_the_number_one_as_json_compares_it() -> None:
    """``1.0`` is the same JSON number as ``1`` (the extension compares with ``=== 1``)."""
    parsed = parse_manifest({**VALID, "protocol": 1.0})
    assert parsed is not None
    assert parsed.dump()["protocol"] == 1
