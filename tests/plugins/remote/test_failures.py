"""The failure matrix: whatever goes wrong with the backend, the model sees Codex's error text
for that call, nothing falls back to local storage, the run goes on, and the session file
stays intact and readable."""

from __future__ import annotations

import socket
import threading

import pytest
from support.local_rig import call, text, tool_results

from ctxmodes.providers.base import NamespaceToolSchema
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import ToolResultMessage
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE
from ctxmodes_remote.backend import INVALID_ANSWER, REQUEST_FAILED
from ctxmodes_remote.results import PLAINTEXT_REFUSED

# Backends failing in every way: the fault tier, outside `make check`.
pytestmark = pytest.mark.faults

NOTE = "rotate the signing key on host bravo-77"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _write(emulator, account) -> dict:
    return call("write_file", "notes", path="plan.md", text=emulator.encrypt(account, NOTE))


def _assert_failed_cleanly(h, expected: str) -> None:
    (result,) = tool_results(h, "notes")
    assert result.is_error is True
    assert [block.text for block in result.content] == [expected]
    # The model was told, in the next request, and the run went on.
    follow_up = h.requests()[1]
    sent = [m for m in follow_up.messages if isinstance(m, ToolResultMessage)]
    assert [m.content[0].text for m in sent] == [expected]
    assert h.session.messages[-1].content[0].text == "noted"
    # No fallback: nothing was kept locally, and the tools are still the native namespaces.
    assert not h.custom_entries(NOTE_CUSTOM_TYPE)
    assert all(
        isinstance(tool, NamespaceToolSchema)
        for tool in follow_up.tools
        if tool.name in ("history", "notes")
    )
    # The file is intact: every line is read back, nothing skipped, no plaintext.
    h.manager.flush()
    path = h.manager.session_file
    with SessionManager.open(path, read_only=True) as reopened:
        assert [e.id for e in reopened.get_entries()] == [e.id for e in h.entries()]
    assert NOTE.encode() not in path.read_bytes()


@pytest.mark.parametrize(
    ("break_backend", "expected"),
    [
        (lambda emulator: emulator.fail_with_status(400), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_status(401), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_status(404), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_status(429), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_status(500), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_status(503), REQUEST_FAILED),
        (lambda emulator: emulator.fail_with_body(b"<html>gateway</html>"), INVALID_ANSWER),
        (lambda emulator: emulator.fail_with_body(b"[1, 2, 3]"), INVALID_ANSWER),
        (lambda emulator: emulator.drop_connections(), REQUEST_FAILED),
        # Plaintext answers are refused: nothing of them reaches the session file.
        (
            lambda emulator: emulator.fail_with_body(
                b'{"file": {"content": "' + NOTE.encode() + b'"}}'
            ),
            PLAINTEXT_REFUSED,
        ),
        (
            lambda emulator: emulator.fail_with_body(
                b'{"encrypted_output": null, "windows": ["' + NOTE.encode() + b'"]}'
            ),
            PLAINTEXT_REFUSED,
        ),
    ],
    ids=[
        "400",
        "401",
        "404",
        "429",
        "500",
        "503",
        "not-json",
        "json-array",
        "dropped",
        "plaintext",
        "null-ciphertext",
    ],
)
def test_a_broken_backend_is_one_error_for_the_model(
    remote, emulator, account, wire, break_backend, expected
):
    break_backend(emulator)
    h = remote([_write(emulator, account), text("noted")], wire=wire)
    h.prompt("save the plan")
    _assert_failed_cleanly(h, expected)


def test_the_service_down(remote, emulator, account):
    url = f"http://127.0.0.1:{_closed_port()}/backend-api/codex"
    h = remote([_write(emulator, account), text("noted")], wire="loopback", base_url=url)
    h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)


def test_a_backend_that_never_answers_times_out(remote, emulator, account, wire):
    emulator.hang()
    h = remote([_write(emulator, account), text("noted")], wire=wire, timeout=0.3)
    h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)


def test_an_abort_ends_a_hanging_call_at_once(remote, emulator, account):
    emulator.hang(only="/write_file")
    # The deadline is far away: only the abort can end this call.
    h = remote([_write(emulator, account), text("noted")], wire="loopback", timeout=30)
    aborter = threading.Thread(target=lambda: emulator.hanging.wait(10) and h.session.abort())
    aborter.start()
    h.prompt("save the plan")
    aborter.join()
    (result,) = tool_results(h, "notes")
    assert result.is_error
    assert result.content[0].text == "Operation aborted"
    assert not h.custom_entries(NOTE_CUSTOM_TYPE)


def test_ciphertext_made_with_another_key_is_refused(remote, emulator, account, wire):
    stranger = emulator.add_account("acct-stranger")
    h = remote(
        [
            call("write_file", "notes", path="plan.md", text=emulator.encrypt(stranger, NOTE)),
            text("noted"),
        ],
        wire=wire,
    )
    h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)


def test_tampered_ciphertext_is_refused(remote, emulator, account, wire):
    token = emulator.encrypt(account, NOTE)
    middle = len(token) // 2
    tampered = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]
    h = remote(
        [call("write_file", "notes", path="plan.md", text=tampered), text("noted")], wire=wire
    )
    h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)


def test_another_accounts_token_neither_decrypts_nor_reads(remote, emulator, account):
    owner = remote([_write(emulator, account), text("saved")])
    owner.prompt("save the plan")
    assert tool_results(owner, "notes")[0].is_error is False

    intruder = emulator.add_account("acct-intruder")
    # The owner's ciphertext under the intruder's credentials: refused.
    h = remote([_write(emulator, account), text("noted")], as_account=intruder)
    h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)

    # Reading the owner's note path with the intruder's credentials finds nothing.
    reader = remote(
        [call("read_file", "notes", path="plan.md"), text("noted")], as_account=intruder
    )
    reader.prompt("read the plan")
    (answer,) = tool_results(reader, "notes")
    encrypted = answer.details["codexHistoryNotes"]["encrypted_output"]
    assert emulator.decrypt_json(intruder, encrypted)["file"] is None


def test_the_log_line_of_a_refused_call_says_why(remote, emulator, account, caplog):
    """The model sees only Codex's error text; the user's log line adds what the backend
    said, so a call refused for its ciphertext says so."""
    stranger = emulator.add_account("acct-stranger")
    h = remote(
        [
            call("write_file", "notes", path="plan.md", text=emulator.encrypt(stranger, NOTE)),
            text("noted"),
        ]
    )
    with caplog.at_level("WARNING", logger="ctxmodes_remote.backend"):
        h.prompt("save the plan")
    _assert_failed_cleanly(h, REQUEST_FAILED)
    assert [r.getMessage() for r in caplog.records] == [
        "history/notes backend answered 400 to alpha/notes/v2/write_file: invalid_encrypted_content"
    ]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'{"error": {"code": "invalid_encrypted_content", "message": "encrypted content is '
            b'invalid for this account"}}',
            ": invalid_encrypted_content: encrypted content is invalid for this account",
        ),
        (b'{"detail": "invalid_encrypted_content"}', ": invalid_encrypted_content"),
        (b'{"detail": "bad\\u001b[31m\\nline"}', ": bad?[31m?line"),
        (b'{"detail": "' + b"x" * 500 + b'"}', ": " + "x" * 200),
        (b"<html>gateway</html>", ""),
        (b'{"error": "flat"}', ""),
    ],
)
def test_what_an_error_answer_said_is_kept_short_and_printable(body, said):
    from ctxmodes_remote.backend import _said

    assert _said(body) == said
