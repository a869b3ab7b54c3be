"""Entries written by the extension's code path through the real Pi are read and rebuilt by
us byte for byte: the marker details, note entries and note snapshots."""

import shutil
import subprocess
from pathlib import Path

import pytest
from support.pi_oracle import pi_node_modules

from ctxmodes.session import codec
from ctxmodes.session.models import CustomEntry, CustomMessageEntry, entry_from_json, to_json
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import (
    ContextManagementDetails,
    WindowMarkerDetails,
    parse_marker_details,
)
from ctxmodes.windows.note_entries import NoteEntryData, parse_note_entry, parse_note_snapshot

pytestmark = pytest.mark.pi

SCRIPT = Path(__file__).with_name("pi_extension_lines.mjs")
PACKAGE = Path("@earendil-works") / "pi-coding-agent"


def _pi_package() -> Path | None:
    node_modules = pi_node_modules()
    return None if node_modules is None else node_modules / PACKAGE


@pytest.fixture(scope="module")
def pi_lines():
    package = _pi_package()
    node = shutil.which("node")
    if package is None or node is None:
        pytest.skip(
            "real Pi not found (set PI_NODE_MODULES or install .pi/node_modules) or no node"
        )
    run = subprocess.run(
        [node, str(SCRIPT), str(package)], capture_output=True, check=True, timeout=60
    )
    return run.stdout.splitlines(keepends=True)


def test_pi_writes_six_entries(pi_lines):
    kinds = [codec.loads(line)["type"] for line in pi_lines]
    assert kinds == [
        "custom_message",
        "custom",
        "custom_message",
        "custom_message",
        "custom_message",
        "custom",
    ]


def test_marker_details_rebuild_byte_for_byte(pi_lines):
    markers = [entry_from_json(codec.loads(line)) for line in pi_lines]
    markers = [m for m in markers if isinstance(m, CustomMessageEntry)]
    for line, entry in zip(
        [line for line in pi_lines if b'"custom_message"' in line], markers, strict=True
    ):
        details = parse_marker_details(entry.details)
        stored = codec.loads(line)
        stored["details"] = details.dump()
        assert codec.dumps_line(stored) == line


def test_our_builder_writes_what_the_extension_writes(pi_lines):
    entries = [codec.loads(line) for line in pi_lines]
    second = WindowIdentity("w-0", "w-1", "w-0", 1)
    ours = WindowMarkerDetails(
        protocol=1,
        id="m-3",
        context_management=ContextManagementDetails(
            protocol=1,
            kind="window",
            first_window_id=second.first_window_id,
            current_window_id=second.current_window_id,
            previous_window_id=second.previous_window_id,
            window_number=second.window_number,
            trim_previous_window=True,
        ),
    )
    assert codec.dumps(ours.dump()) == codec.dumps(entries[4]["details"])
    first = WindowIdentity.first("w-0")
    ours_first = WindowMarkerDetails(
        protocol=1,
        id="m-0",
        context_management=ContextManagementDetails(
            protocol=1,
            kind="window",
            first_window_id=first.first_window_id,
            current_window_id=first.current_window_id,
            window_number=0,
        ),
    )
    assert codec.dumps(ours_first.dump()) == codec.dumps(entries[0]["details"])


def test_note_entries_rebuild_byte_for_byte(pi_lines):
    for line in pi_lines:
        entry = entry_from_json(codec.loads(line))
        if not isinstance(entry, CustomEntry):
            continue
        parsed = parse_note_entry(entry.data) or parse_note_snapshot(entry.data)
        assert parsed is not None
        stored = to_json(entry)
        stored["data"] = parsed.dump()
        assert codec.dumps_line(stored) == line
    ours = NoteEntryData(
        protocol=1,
        action="write",
        path="/root/notes/checkpoint.md",
        text="progress é\n",
        timestamp=1767225600000,
    )
    assert codec.dumps(ours.dump()) == codec.dumps(codec.loads(pi_lines[1])["data"])
