from __future__ import annotations

import gc
import json
import re
import shutil
import sys
from collections import defaultdict
from collections.abc import Container
from pathlib import Path
from typing import Any

import pytest
from support.long_sessions import write_chain

from ctxmodes.session import codec
from ctxmodes.session.errors import (
    EntryNotFoundError,
    ReadOnlySessionError,
    SessionLockedError,
)
from ctxmodes.session.ids import PI_IDENTITY, IdentitySource, InvalidSessionIdError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import (
    AssistantMessage,
    CompactionEntry,
    LabelEntry,
    MessageEntry,
    TextContent,
    Usage,
    UserMessage,
)
from ctxmodes.session.store import _LineReader
from ctxmodes.session.writer import Durability

USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {
        "input": 0.00003,
        "output": 0.000075,
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": 0.000105,
    },
}


def user(text: str, timestamp: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def assistant(text: str, model: str = "claude-sonnet-4-5") -> AssistantMessage:
    return AssistantMessage.model_validate(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": model,
            "usage": USAGE,
            "stopReason": "stop",
            "timestamp": 2,
        }
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def populate(manager: SessionManager) -> dict[str, str]:
    """One entry of every kind Pi writes, in a plausible order; returns their ids by name."""
    ids: dict[str, str] = {}
    ids["model"] = manager.append_model_change("anthropic", "claude-sonnet-4-5")
    ids["thinking"] = manager.append_thinking_level_change("high")
    ids["u1"] = manager.append_message(user("q1"))
    ids["a1"] = manager.append_message(assistant("a1"))
    ids["custom"] = manager.append_custom_entry("ext", {"k": [1, 2]})
    ids["bare_custom"] = manager.append_custom_entry("ext")
    ids["cmsg"] = manager.append_custom_message_entry("ext", "note", True, {"d": 1})
    ids["cmsg_blocks"] = manager.append_custom_message_entry("ext", [TextContent(text="t")], False)
    ids["label"] = manager.append_label(ids["u1"], "start")
    ids["clear"] = manager.append_label(ids["u1"], None)
    ids["info"] = manager.append_session_info("  my\r\n\nsession  ")
    ids["compaction"] = manager.append_compaction("S", ids["u1"], 100)
    ids["compaction_full"] = manager.append_compaction(
        "S2",
        ids["a1"],
        200,
        {"readFiles": [], "modifiedFiles": []},
        False,
        Usage.model_validate(USAGE),
    )
    ids["bash"] = manager.append_message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 3,
        }
    )
    ids["summary"] = manager.branch_with_summary(ids["a1"], "went elsewhere")
    ids["summary_full"] = manager.branch_with_summary(
        None, "from root", {"readFiles": ["a"], "modifiedFiles": []}, True, USAGE
    )
    return ids


def pi_key_orders(oracle_cases: Path) -> dict[str, set[tuple[str, ...]]]:
    """Key orders of every entry type in files Pi wrote itself."""
    manifest = json.loads((oracle_cases / "manifest.json").read_text())
    orders: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for case in manifest["cases"]:
        if case["kind"] == "foreign":
            continue
        for name in case["files"]:
            if name.endswith(".jsonl"):
                for record in lines(oracle_cases / name):
                    orders[record["type"]].add(tuple(record))
    return orders


def test_entries_use_pis_key_order(tmp_path: Path, oracle_cases: Path) -> None:
    orders = pi_key_orders(oracle_cases)
    with SessionManager.create(tmp_path, tmp_path / "sessions") as manager:
        populate(manager)
        path = manager.session_file
    assert path is not None
    written = lines(path)
    assert tuple(written[0]) in orders["session"]
    for record in written[1:]:
        assert tuple(record) in orders[record["type"]], record


def test_appends_chain_to_the_leaf_and_write_at_once(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        path = manager.session_file
        assert path is not None
        assert not path.exists()
        first = manager.append_message(user("hi"))
        assert re.fullmatch(r"[0-9a-f]{8}", first)
        assert [record["type"] for record in lines(path)] == ["session", "message"]
        second = manager.append_message(assistant("yo"))
        assert manager.get_leaf_id() == second
        assert lines(path)[-1]["parentId"] == first
        assert manager.get_branch_ids() == [first, second]
    header = lines(path)[0]
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_" + header["id"] + r"\.jsonl", path.name
    )
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", header["id"]
    )
    assert header["cwd"] == str(tmp_path)


@pytest.mark.parametrize("durability", [Durability.NONE, Durability.FSYNC])
def test_appended_entries_read_back_as_the_file_holds_them(
    tmp_path: Path, durability: Durability
) -> None:
    content: list[Any] = [{"type": "text", "text": "before"}]
    # What JSON.stringify writes differently from the Python values: a whole float, a tuple.
    data = {"ratio": 2.0, "pair": (1, 2)}
    with SessionManager.create(tmp_path, tmp_path / "s", durability=durability) as manager:
        first = manager.append_message({"role": "user", "content": content, "timestamp": 1})
        custom = manager.append_custom_entry("kind", data)
        # The caller's objects change after the append; the session's entries do not.
        content.append({"type": "text", "text": "after"})
        data["ratio"] = 3.5
        appended = [manager.get_entry_json(first), manager.get_entry_json(custom)]
        assert appended[1] is not None
        assert appended[1]["data"] == {"ratio": 2, "pair": [1, 2]}
        assert manager.get_branch()[0].model_dump(exclude_unset=True)["message"]["content"] == [
            {"type": "text", "text": "before"}
        ]
        context = manager.build_session_context().to_json()
        path = manager.session_file
    assert path is not None
    with SessionManager.open(path, read_only=True) as reopened:
        assert [reopened.get_entry_json(first), reopened.get_entry_json(custom)] == appended
        assert reopened.build_session_context().to_json() == context


def test_every_entry_reads_back_as_stored_in_file_order(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        first = manager.append_message(user("q"))
        manager.append_custom_entry("kind", {"ratio": 2.0})
        manager.branch(first)
        manager.append_message(assistant("other branch"))
        manager.append_label(first, "start")
        appended = manager.get_entries_json()
        path = manager.session_file
    assert path is not None
    lines = path.read_bytes().splitlines()[1:]
    assert [codec.dumps(entry) for entry in appended] == lines
    with SessionManager.open(path, read_only=True, preload=False) as reopened:
        assert reopened.get_entries_json() == appended


def test_a_branched_session_copies_appended_lines_as_written(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        manager.append_message(user("q"))
        manager.append_custom_entry("kind", {"ratio": 2.0, "big": 1e21, "1": "index key"})
        # Read back once (and cached) or never: both copy the bytes the file holds.
        manager.get_entry_json(manager.append_message(assistant("a")))
        source = manager.session_file
        assert source is not None
        written = source.read_bytes().splitlines()[1:]
        created = manager.create_branched_session()
    assert created is not None
    assert created.read_bytes().splitlines()[1:] == written


def test_optional_fields_are_left_out_and_names_sanitised(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path) as manager:
        ids = populate(manager)
        path = manager.session_file
        assert manager.get_session_name() == "my session"
        assert manager.get_label(ids["u1"]) is None
    assert path is not None
    by_id = {record.get("id"): record for record in lines(path)}
    assert "data" not in by_id[ids["bare_custom"]]
    assert "details" not in by_id[ids["cmsg_blocks"]]
    assert "label" not in by_id[ids["clear"]]
    assert set(by_id[ids["compaction"]]) == {
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
    }
    assert by_id[ids["compaction_full"]]["fromHook"] is False
    assert by_id[ids["summary"]]["fromId"] == ids["bash"]
    assert by_id[ids["summary"]]["parentId"] == ids["a1"]
    assert by_id[ids["summary_full"]]["parentId"] is None
    assert by_id[ids["summary_full"]]["fromId"] == ids["summary"]
    assert by_id[ids["info"]]["name"] == "my session"


def test_navigation(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        u1 = manager.append_message(user("q1"))
        a1 = manager.append_message(assistant("a1"))
        manager.branch(u1)
        a2 = manager.append_message(assistant("a2"))
        assert manager.get_branch_ids() == [u1, a2]
        assert [entry.id for entry in manager.get_children(u1)] == [a1, a2]
        with pytest.raises(EntryNotFoundError, match="Entry nope not found"):
            manager.branch("nope")
        with pytest.raises(EntryNotFoundError):
            manager.append_label("nope", "x")
        with pytest.raises(EntryNotFoundError):
            manager.branch_with_summary("nope", "s")
        manager.reset_leaf()
        assert manager.get_leaf_id() is None
        assert list(manager.build_session_context().message_json) == []
        root = manager.append_message(user("again"))
        assert manager.get_branch_ids() == [root]
        assert manager.get_entry(root) == manager.get_leaf_entry()
        assert manager.get_entry("nope") is None
        assert manager.get_branch_ids("nope") == []
        assert [entry.id for entry in manager.get_branch(a1)] == [u1, a1]
        summary = manager.branch_with_summary(a1, "explored")
        assert manager.get_entry(summary).from_id == root  # type: ignore[union-attr]
        manager.reset_leaf()
        root_summary = manager.branch_with_summary(None, "s")
        assert manager.get_entry(root_summary).from_id == "root"  # type: ignore[union-attr]
        assert len(manager.get_entries()) == manager.entry_count() == 6


def test_summary_messages_cannot_be_appended_as_messages(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager, pytest.raises(ValueError, match="summary"):
        manager.append_message(
            {"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 1}
        )


def test_incremental_context_equals_a_fresh_build(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path) as manager:
        ids = populate(manager)
        for step in range(30):
            if step % 7 == 3:
                manager.branch(ids["a1"])
            if step % 11 == 5:
                manager.append_compaction("C", manager.get_branch_ids()[-2], step)
            manager.append_message(user(f"q{step}", step) if step % 2 else assistant(f"a{step}"))
            leaf = manager.get_leaf_id()
            built = manager.build_session_context().to_json()
            assert built == manager.position_at(leaf).context.to_json()
        path = manager.session_file
        final = manager.build_session_context().to_json()
    assert path is not None
    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.build_session_context().to_json() == final


def test_subscribers_see_every_append(tmp_path: Path) -> None:
    seen: list[Any] = []
    late: list[Any] = []
    with SessionManager.in_memory(tmp_path) as manager:
        unsubscribe = manager.subscribe(seen.append)
        first = manager.append_message(user("q"))
        label = manager.append_label(first, "l")
        assert [entry.id for entry in seen] == [first, label]
        assert isinstance(seen[0], MessageEntry)
        assert isinstance(seen[1], LabelEntry)

        def broken(entry: Any) -> None:
            raise RuntimeError("boom")

        stop_broken = manager.subscribe(broken)
        manager.subscribe(late.append)
        # A failing callback does not keep later ones from running, nor undo the append.
        with pytest.raises(RuntimeError, match="boom"):
            manager.append_session_info("x")
        assert manager.get_leaf_id() == late[0].id == seen[-1].id
        stop_broken()
        unsubscribe()
        unsubscribe()
        manager.append_session_info("y")
        assert len(seen) == 3
        assert len(late) == 2


def test_read_only_managers_refuse_appends(oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "linear_basic.jsonl", read_only=True) as manager:
        with pytest.raises(ReadOnlySessionError):
            manager.append_session_info("x")
        with pytest.raises(ReadOnlySessionError):
            manager.branch_with_summary(None, "x")


def test_one_writer_per_file(tmp_path: Path, oracle_cases: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(oracle_cases / "linear_basic.jsonl", path)
    with SessionManager.open(path) as writer:
        with pytest.raises(SessionLockedError, match="already open for writing"):
            SessionManager.open(path)
        with SessionManager.open(path, read_only=True) as reader:
            assert reader.get_leaf_id() == writer.get_leaf_id()
    with SessionManager.open(path) as again:
        again.append_session_info("fine")


@pytest.mark.parametrize("durability", list(Durability))
def test_durability_modes(tmp_path: Path, durability: Durability) -> None:
    manager = SessionManager.create(tmp_path, tmp_path, durability=durability)
    path = manager.session_file
    assert path is not None
    manager.append_message(user("q"))
    entry = manager.append_message(assistant("a"))
    on_disk = path.read_bytes() if path.exists() else b""
    if durability is Durability.NONE:
        manager.flush()
    else:
        assert entry.encode() in on_disk
    manager.close()
    assert lines(path)[-1]["id"] == entry


def test_torn_last_line_is_terminated_by_the_first_append(
    tmp_path: Path, oracle_cases: Path
) -> None:
    path = tmp_path / "s.jsonl"
    intact = (oracle_cases / "linear_basic.jsonl").read_bytes()
    path.write_bytes(intact + b'{"type":"message","id":"torn","par')
    with SessionManager.open(path) as manager:
        assert path.read_bytes().endswith(b'"par')
        assert [line.reason for line in manager.skipped_lines] == ["not valid JSON"]
        added = manager.append_session_info("after")
    data = path.read_bytes()
    assert data.startswith(intact + b'{"type":"message","id":"torn","par\n{"type":"session_info"')
    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.get_leaf_id() == added
        assert len(reopened.skipped_lines) == 1


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with SessionManager.open(empty, cwd_override=tmp_path) as manager:
        header = json.loads(empty.read_text())
        assert header["id"] == manager.session_id
        assert header["cwd"] == str(tmp_path)
    missing = tmp_path / "sub" / "new.jsonl"
    with SessionManager.open(missing, cwd_override=tmp_path) as manager:
        assert not missing.exists()
        entry = manager.append_message(user("q"))
        assert [record.get("id") for record in lines(missing)] == [manager.session_id, entry]
    with SessionManager.open(tmp_path / "unused.jsonl", cwd_override=tmp_path) as manager:
        manager.append_session_info("never prompted")
    assert not (tmp_path / "unused.jsonl").exists()


def test_a_new_session_is_written_at_its_first_message(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path / "s") as manager:
        path = manager.session_file
        assert path is not None
        model = manager.append_model_change("p", "m")
        level = manager.append_thinking_level_change("off")
        marker = manager.append_custom_message_entry("ext", "window 0", True)
        assert not path.exists()
        assert not manager.is_written()
        assert manager.get_branch_ids() == [model, level, marker]
        first = manager.append_message(user("hi"))
        assert manager.is_written()
        written = lines(path)
        assert [record["id"] for record in written[1:]] == [model, level, marker, first]
        assert written[-1]["parentId"] == marker
    with SessionManager.create(tmp_path, tmp_path / "never") as manager:
        manager.append_model_change("p", "m")
    assert not (tmp_path / "never").exists()


def test_in_memory_sessions_restore_entries(tmp_path: Path, oracle_cases: Path) -> None:
    records = lines(oracle_cases / "branch_with_summary.jsonl")
    with SessionManager.in_memory(tmp_path, entries=records) as restored:
        assert restored.session_id == records[0]["id"]
        with SessionManager.open(oracle_cases / "branch_with_summary.jsonl", read_only=True) as m:
            assert restored.build_session_context().to_json() == m.build_session_context().to_json()
        restored.append_message(user("more"))
        assert restored.session_file is None
    with SessionManager.in_memory(tmp_path, session_id="custom-id", entries=records[1:]) as m:
        assert m.session_id == "custom-id"
        assert m.entry_count() == len(records) - 1
    assert list(tmp_path.iterdir()) == []


def test_create_branched_session_matches_pi(tmp_path: Path, oracle_cases: Path) -> None:
    source = tmp_path / "source.jsonl"
    shutil.copy(oracle_cases / "created_branched_session.jsonl", source)
    pi_lines = (oracle_cases / "created_branched_session.extracted.jsonl").read_bytes().splitlines()
    with SessionManager.open(source) as manager:
        created = manager.create_branched_session("6ec1cccc")
        assert created is not None
        assert created.parent == tmp_path
        assert manager.session_file == created
        assert manager.get_header_json()["parentSession"] == str(source)
        manager.append_session_info("continues in the new file")
    ours = created.read_bytes().splitlines()
    assert len(ours) == len(pi_lines) + 1
    for mine, theirs in zip(ours[1:-1], pi_lines[1:], strict=True):
        a, b = json.loads(mine), json.loads(theirs)
        if a["type"] == "label":
            # Re-created labels get fresh ids (and so does the next label's parent).
            a.update(id=None, parentId=None)
            b.update(id=None, parentId=None)
            assert a == b
        else:
            assert mine == theirs
    assert source.read_bytes() == (oracle_cases / "created_branched_session.jsonl").read_bytes()


def test_create_branched_session_in_memory_and_errors(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        u1 = manager.append_message(user("q"))
        manager.append_label(u1, "L")
        a1 = manager.append_message(assistant("a"))
        manager.append_compaction("S", manager.get_leaf_id() or "", 1)
        with pytest.raises(EntryNotFoundError):
            manager.create_branched_session("missing")
        assert manager.create_branched_session(a1) is None
        assert manager.get_branch_ids()[:2] == [u1, a1]
        assert manager.get_label(u1) == "L"
        assert "parentSession" not in manager.get_header_json()


def test_branched_compaction_keeps_from_the_entry_after_a_dropped_label(tmp_path: Path) -> None:
    with SessionManager.create(tmp_path, tmp_path) as manager:
        u1 = manager.append_message(user("q"))
        label = manager.append_label(u1, "L")
        a1 = manager.append_message(assistant("a"))
        compaction = manager.append_compaction("S", label, 10)
        manager.create_branched_session()
        entry = manager.get_entry(compaction)
        assert isinstance(entry, CompactionEntry)
        assert entry.first_kept_entry_id == a1
        assert manager.get_branch_ids()[:3] == [u1, a1, compaction]


def test_fork_from_copies_every_branch(tmp_path: Path, oracle_cases: Path) -> None:
    source = oracle_cases / "branch_simple.jsonl"
    with SessionManager.fork_from(source, tmp_path / "project", tmp_path / "sessions") as fork:
        assert fork.get_header_json()["parentSession"] == str(source)
        assert fork.cwd == str(tmp_path / "project")
        path = fork.session_file
        with SessionManager.open(source, read_only=True) as original:
            assert fork.get_branch_ids() == original.get_branch_ids()
            assert fork.entry_count() == original.entry_count()
    assert path is not None
    assert path.read_bytes().split(b"\n", 1)[1] == source.read_bytes().split(b"\n", 1)[1]


def test_fork_from_migrates_legacy_sources(tmp_path: Path, oracle_cases: Path) -> None:
    with SessionManager.fork_from(
        oracle_cases / "foreign_v1_migration.jsonl", tmp_path, tmp_path
    ) as fork:
        fork.append_session_info("appendable now")
        path = fork.session_file
    assert path is not None
    records = lines(path)
    assert records[0]["version"] == 3
    assert all("id" in record for record in records)
    assert records[-1]["name"] == "appendable now"


def test_header_and_entry_models(tmp_path: Path, oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "labels.jsonl", read_only=True) as manager:
        header = manager.get_header()
        assert header is not None
        assert header.id == manager.session_id
        labels = [entry for entry in manager.get_entries() if isinstance(entry, LabelEntry)]
        assert labels
        assert all(codec.dumps(label.target_id) for label in labels)


def test_context_messages_are_shared_between_builds(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        manager.append_message(user("q1"))
        first = manager.build_session_context()
        model = first.messages[0]
        manager.append_message(assistant("a1"))
        second = manager.build_session_context()
        # The second build extends the first: the earlier context is unchanged and the
        # model validated for it is reused.
        assert len(first.message_json) == 1
        assert len(second.messages) == 2
        assert second.messages[0] is model
        assert list(second.messages[-1:]) == [second.messages[1]]
        assert first.to_json()["messages"] == [second.message_json[0]]


class _Counting:
    """Ids and times that count up, remembering the ids each new entry id had to avoid."""

    def __init__(self) -> None:
        self.entries = 0
        self.sessions = 0
        self.ticks = 0
        self.avoided: list[set[str]] = []

    def entry_id(self, existing: Container[str]) -> str:
        issued = [f"e{n:07d}" for n in range(1, self.entries + 1)]
        self.avoided.append({entry_id for entry_id in issued if entry_id in existing})
        self.entries += 1
        return f"e{self.entries:07d}"

    def session_id(self) -> str:
        self.sessions += 1
        return f"session-{self.sessions}"

    def timestamp(self) -> str:
        self.ticks += 1
        return f"2026-01-01T00:00:{self.ticks:02d}.000Z"

    def identity(self) -> IdentitySource:
        return IdentitySource(self.entry_id, self.session_id, self.timestamp)


def test_new_ids_and_timestamps_come_from_the_identity_source(tmp_path: Path) -> None:
    source = _Counting()
    identity = source.identity()
    with SessionManager.create(tmp_path, tmp_path / "s", identity=identity) as manager:
        assert manager.identity is identity
        u1 = manager.append_message(user("q"))
        manager.append_label(u1, "L")
        a1 = manager.append_message(assistant("a"))
        first = manager.session_file
        created = manager.create_branched_session()
    assert first == tmp_path / "s" / "2026-01-01T00-00-01-000Z_session-1.jsonl"
    assert first is not None
    assert created == tmp_path / "s" / "2026-01-01T00-00-05-000Z_session-2.jsonl"
    assert [(r["id"], r["timestamp"]) for r in lines(first)] == [
        ("session-1", "2026-01-01T00:00:01.000Z"),
        ("e0000001", "2026-01-01T00:00:02.000Z"),
        ("e0000002", "2026-01-01T00:00:03.000Z"),
        ("e0000003", "2026-01-01T00:00:04.000Z"),
    ]
    # The branched copy keeps the entries and re-creates the label with a new id, keeping
    # its time; that id had to avoid the ids of the kept entries.
    copied = lines(created)
    assert [record["id"] for record in copied] == ["session-2", u1, a1, "e0000004"]
    assert copied[-1]["timestamp"] == "2026-01-01T00:00:03.000Z"
    assert source.avoided[-1] == {u1, a1}
    assert source.avoided[:3] == [set(), {u1}, {u1, "e0000002"}]


def test_every_way_to_make_a_session_uses_the_identity_source(
    tmp_path: Path, oracle_cases: Path
) -> None:
    source = _Counting()
    identity = source.identity()
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    made = [
        SessionManager.in_memory(tmp_path, identity=identity),
        SessionManager.open(tmp_path / "missing.jsonl", identity=identity),
        SessionManager.open(empty, identity=identity),
        SessionManager.continue_recent(tmp_path, tmp_path / "none", identity=identity),
        SessionManager.fork_from(
            oracle_cases / "branch_simple.jsonl", tmp_path, tmp_path / "forks", identity=identity
        ),
    ]
    try:
        assert [manager.session_id for manager in made] == [f"session-{n}" for n in range(1, 6)]
        assert all(manager.identity is identity for manager in made)
        made[-1].append_session_info("named")
        assert made[-1].get_leaf_id() == f"e{source.entries:07d}"
    finally:
        for manager in made:
            manager.close()
    assert json.loads(empty.read_bytes())["timestamp"] == "2026-01-01T00:00:03.000Z"


def test_the_default_identity_source_generates_as_pi_does(tmp_path: Path) -> None:
    with SessionManager.in_memory(tmp_path) as manager:
        assert manager.identity is PI_IDENTITY
        entry_id = manager.append_message(user("q"))
        assert re.fullmatch(r"[0-9a-f]{8}", entry_id)
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-.*", manager.session_id)


def test_session_ids_from_a_source_must_be_valid(tmp_path: Path) -> None:
    identity = IdentitySource(session_id=lambda: "not valid!")
    with pytest.raises(InvalidSessionIdError):
        SessionManager.in_memory(tmp_path, identity=identity)


def _line(entry_type: str, entry_id: str, parent: str | None, **fields: object) -> str:
    import json

    stamp = "2026-01-01T00:00:00.000Z"
    return json.dumps(
        {"type": entry_type, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}
    )


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([], None),
        ([("model_change", {"provider": "a", "modelId": "x"})], "a/x"),
        (
            [
                ("model_change", {"provider": "a", "modelId": "x"}),
                ("message", {"message": {"role": "user", "content": "hi", "timestamp": 1}}),
                (
                    "message",
                    {
                        "message": {
                            "role": "assistant",
                            "content": [],
                            "provider": "b",
                            "model": "y",
                            "timestamp": 2,
                        }
                    },
                ),
            ],
            "b/y",
        ),
        ([("model_change", {"provider": "a"})], None),
    ],
)
def test_context_model_is_the_contexts_model_without_building_it(tmp_path, lines, expected):
    """What a reopened session's model is restored from: the same as the context's."""
    path = tmp_path / "s.jsonl"
    header = (
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    )
    body = [
        _line(kind, f"e{n}", f"e{n - 1}" if n else None, **fields)
        for n, (kind, fields) in enumerate(lines)
    ]
    path.write_text("\n".join([header, *body]) + "\n")
    with SessionManager.open(path, read_only=True) as manager:
        assert manager.context_model() == expected
        model = manager.build_session_context().model
        if expected is not None:
            assert model is not None
            assert f"{model.provider}/{model.model_id}" == expected


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
def test_a_session_dropped_without_closing_closes_its_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_chain(path, 50)

    def open_files() -> int:
        return len(list(Path("/proc/self/fd").iterdir()))

    before = open_files()
    manager = SessionManager.open(path, read_only=True, preload=False)
    assert manager.get_entry_json(manager.get_branch_ids()[3]) is not None  # read back
    assert open_files() == before + 1
    del manager
    gc.collect()
    assert open_files() == before


def test_a_line_reader_that_could_not_open_its_file_leaves_nothing_to_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with pytest.raises(FileNotFoundError):
        _LineReader(tmp_path / "gone.jsonl")
    gc.collect()
    assert unraisable == []


def test_a_session_file_removed_while_open_is_written_again_whole(tmp_path: Path) -> None:
    """The sessions folder cleaned up under a running session: the next entry makes the
    file again with every entry it held, the entries read back from the removed file still
    read, and the file opens whole."""
    with SessionManager.create(tmp_path, tmp_path / "sessions") as manager:
        manager.append_message(user("q1"))
        manager.append_message(assistant("a1"))
        path = manager.session_file
        assert path is not None
    with SessionManager.open(path) as manager:
        shutil.rmtree(tmp_path / "sessions")
        manager.append_message(user("q2"))
        manager.append_message(assistant("a2"))
        texts = _texts(manager)
    with SessionManager.open(path, read_only=True) as reopened:
        assert texts == _texts(reopened) == ["q1", "a1", "q2", "a2"]


def _texts(manager: SessionManager) -> list[str]:
    return [
        content.text
        for entry in manager.get_entries()
        if isinstance(entry, MessageEntry)
        for content in entry.message.content
        if isinstance(content, TextContent)
    ]
