"""Fuzzing the archive manifest validator: random manifest data, and every manifest of
mutated real Tree sessions verified against the damaged session, within a time bound."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import SeedSessions, bounded, fuzz_settings, mutated_session, seed_sessions
from support.pi_oracle import require_oracle_cases

from ctxmodes.session.errors import SessionError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import CustomEntry
from ctxmodes_tree.manifest import TreeArchiveManifest, parse_manifest
from ctxmodes_tree.traversal import (
    ArchiveLimits,
    ArchiveRejection,
    VerifiedArchive,
    is_manifest_entry,
    verify_archive,
)

pytestmark = pytest.mark.slow

FIELDS = ["windowId", "boundaryEntryId", "summaryEntryId", "archivedLeafId", "branchBaseId"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@fuzz_settings(max_examples=300)
@given(
    data=st.fixed_dictionaries(
        {"protocol": st.sampled_from([1, 2, "1", None]) | JSON},
        optional={
            "strategy": st.sampled_from(["codex-context-tree", "other"]) | JSON,
            **{name: st.sampled_from(["a1", "", None]) | JSON for name in FIELDS},
        },
    )
)
def test_manifest_data_is_a_manifest_or_nothing(data: dict) -> None:
    manifest = bounded(lambda: parse_manifest(data))
    if manifest is None:
        return
    assert isinstance(manifest, TreeArchiveManifest)
    for name in FIELDS[:-1]:
        assert isinstance(data[name], str)
        assert data[name]
    assert data["strategy"] == "codex-context-tree"
    assert parse_manifest(manifest.dump()) == manifest


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> SeedSessions:
    # The demo session comes first: a Tree session with two archives.
    lines = seed_sessions(tmp_path_factory.mktemp("seeds"), require_oracle_cases())
    return SeedSessions(lines[:1])


@fuzz_settings(max_examples=150)
@given(data=st.data())
def test_every_manifest_of_a_damaged_session_verifies_or_is_rejected(
    seeds: SeedSessions, data: st.DataObject
) -> None:
    content = data.draw(mutated_session(seeds.lines))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fuzzed.jsonl"
        path.write_bytes(content)
        try:
            manager = SessionManager.open(path, read_only=True)
        except SessionError:
            return
        with manager:
            limits = ArchiveLimits(max_depth=100)
            for entry in manager.get_entries():
                if isinstance(entry, CustomEntry) and is_manifest_entry(entry):
                    outcome = bounded(lambda entry=entry: verify_archive(entry, manager, limits))
                    assert isinstance(outcome, VerifiedArchive | ArchiveRejection)
                    if isinstance(outcome, VerifiedArchive):
                        assert outcome.manifest.boundary_entry_id in outcome.entry_ids
                        assert len(outcome.entry_ids) <= limits.max_depth
