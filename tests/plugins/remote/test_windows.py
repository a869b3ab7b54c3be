"""Remote's windows: Local's lifecycle with the backend's thread hint in each new window's
marker, and every turn's request carrying the window identity (§9.3 of the extension)."""

from __future__ import annotations

import logging
import threading

import orjson
from support.local_rig import call, developer_texts, markers, text, used, window_of

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import CompactionEntry
from ctxmodes.windows.budget import CONTEXT_WINDOW_FALLBACK_BUFFER
from ctxmodes.windows.compaction import is_no_summary_compaction

WINDOW = 40_000
#: Enough text for Pi's cut-point search to find something to compact.
BULK = " filler" * 15_000


def test_each_new_window_carries_the_backends_thread_hint(remote, emulator, account, wire):
    h = remote(
        [
            call("write_file", "notes", path="checkpoint.md", text=emulator.encrypt(account, "x")),
            call("new_context"),
            text("resumed"),
        ],
        wire=wire,
    )
    h.prompt("work, then roll over")

    window0, window1 = markers(h, "window")
    assert window_of(window1)["windowNumber"] == 1
    assert window_of(window1)["trimPreviousWindow"] is True
    hint = "Recent notes (up to 5, most-recent first):\n- /root/notes/checkpoint.md (1 lines)"
    assert hint not in window0.content  # nothing was written before window 0 opened
    assert hint in window1.content
    hints = [c for c in emulator.calls if c.path.endswith("/thread_hint")]
    assert len(hints) == 2  # one per window, before its first request
    assert hints[1].body == {
        "context": {"session_id": h.manager.session_id, "current_agent_name": "/root"}
    }
    assert orjson.loads(hints[1].headers["x-openai-tool-output-truncation-policy"]) == {
        "mode": "bytes",
        "limit": 4000,
    }
    # The model sees only the new window, opened by its marker as a developer message.
    last = h.requests()[-1]
    assert developer_texts(last) == [window1.content]


def test_a_failed_or_oversized_hint_means_no_hint(remote, emulator, account):
    emulator.fail_with_body(orjson.dumps({"text": "é" * 2001}))  # 4,002 UTF-8 bytes
    h = remote([text("ok")])
    h.prompt("hi")
    (window0,) = markers(h, "window")
    assert "é" not in window0.content
    assert window0.content.rstrip().endswith("</context_window>")


def test_every_turn_carries_the_window_identity(remote, emulator, account):
    h = remote([call("new_context"), text("in window one")])
    h.prompt("go")
    first, second = h.requests()
    session_id = h.manager.session_id
    for request, number in ((first, 0), (second, 1)):
        marker = markers(h, "window")[number]
        window_id = f"{session_id}:{number}"
        metadata = orjson.loads(request.headers["x-codex-turn-metadata"])
        assert request.headers["x-codex-window-id"] == window_id
        assert metadata == {
            "session_id": session_id,
            "thread_id": session_id,
            "agent_name": "/root",
            "window_id": window_id,
            "window_number": number,
            "context_window_id": window_of(marker)["currentWindowId"],
            "request_kind": "turn",
            "history_ingest_requested": True,
        }
        assert request.client_metadata["x-codex-window-id"] == window_id
        assert (
            request.client_metadata["x-codex-turn-metadata"]
            == (request.headers["x-codex-turn-metadata"])
        )


def test_history_finds_what_an_earlier_window_said(remote, emulator, account):
    detail = "the staging bucket is eu-west-9-blue"
    h = remote(
        [
            text(f"noted: {detail}"),
            call("new_context"),
            call("search_contents", "history", query=emulator.encrypt(account, "eu-west-9")),
            text("found it"),
        ]
    )
    h.prompt("remember the bucket")
    h.prompt("now roll over and look it up")
    (found,) = [
        r for r in h.entries() if getattr(getattr(r, "message", None), "tool_name", "") == "history"
    ]
    answer = emulator.decrypt_json(
        account, found.message.details["codexHistoryNotes"]["encrypted_output"]
    )
    window0 = window_of(markers(h, "window")[0])["currentWindowId"]
    assert [(i["window_id"], i["role"]) for i in answer["items"]] == [(window0, "assistant")]
    assert detail in answer["items"][0]["truncated_content"]


def test_compaction_follows_locals_policy(remote):
    """Threshold compaction is cancelled except for the one-time trim at the boundary
    new_context opened; /compact writes the fixed compaction and opens a fresh window."""
    over_threshold = used(WINDOW - CONTEXT_WINDOW_FALLBACK_BUFFER + 5_000)
    h = remote(
        [
            call("new_context") | used(1_000),
            text("window 1 grows") | over_threshold,
            text("checkpointing") | over_threshold,
            text("after compact"),
        ],
        context_window=WINDOW,
    )
    h.prompt("start" + BULK)
    h.prompt("more" + BULK)
    _, boundary = markers(h, "window")
    (trim,) = [e for e in h.entries() if isinstance(e, CompactionEntry)]
    assert trim.first_kept_entry_id == boundary.id
    assert trim.details["windowId"] == window_of(boundary)["currentWindowId"]
    assert len(markers(h, "window")) == 2, "the trim keeps the current window"

    manual = h.session.compact()
    assert is_no_summary_compaction(manual)
    assert [window_of(m)["windowNumber"] for m in markers(h, "window")] == [0, 1, 2]


def test_an_abort_ends_the_wait_for_a_thread_hint_at_once(remote, emulator, account, caplog):
    # The deadline is far away: only the abort can end the hint's call.
    note = call("write_file", "notes", path="checkpoint.md", text=emulator.encrypt(account, "x"))
    h = remote([note, text("noted"), call("new_context"), text("never sent")], timeout=30)
    h.prompt("start")  # window 0 opens, and its note is written, before anything hangs
    emulator.hang(only="/thread_hint")
    aborter = threading.Thread(target=lambda: emulator.hanging.wait(10) and h.session.abort())
    aborter.start()
    try:
        with caplog.at_level(logging.INFO, logger="ctxmodes_remote"):
            h.prompt("roll over")
    finally:
        aborter.join()
        emulator.release.set()
    assert emulator.hanging.is_set()
    hint_failures = [r.getMessage() for r in caplog.records if "thread hint" in r.getMessage()]
    assert hint_failures == ["no thread hint: aborted"]
    assert not any("timed out" in r.getMessage() for r in caplog.records)
    # The window still opened, without a hint, and the session file is whole.
    _, window1 = markers(h, "window")
    assert window_of(window1)["windowNumber"] == 1
    assert "checkpoint.md" not in window1.content  # what the hint would have named
    h.manager.flush()
    with SessionManager.open(h.manager.session_file, read_only=True) as reopened:
        assert [e.id for e in reopened.get_entries()] == [e.id for e in h.entries()]
