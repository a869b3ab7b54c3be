"""``ctxmodes history FILE ACTION`` and ``ctxmodes notes FILE ACTION`` with ``--mode local``:
the read operations run offline on any session file — one our host wrote, or one holding the
TypeScript extension's entries as the real Pi wrote them — and never modify it. Bad input is
one line on standard error and exit status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.local_rig import call, text
from support.pi_oracle import require_node, require_pi_modules

SCRIPT = Path(__file__).with_name("pi_extension_session.mjs")
PI_PACKAGE = Path("@earendil-works") / "pi-coding-agent"
DETAIL = "deploy-key-4410"


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)


def answer(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = ctxmodes(capsys, *argv, "--mode", "local")
    assert (code, err) == (0, ""), err
    result: dict[str, Any] = json.loads(out)
    return result


# --------------------------------------------------------------------------- the extension's file


@pytest.fixture(scope="module")
def extension_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session the TypeScript extension could have left: written by the real Pi."""
    node = require_node()
    modules = require_pi_modules()
    path = tmp_path_factory.mktemp("extension") / "session.jsonl"
    subprocess.run(
        [node, str(SCRIPT), str(modules / PI_PACKAGE), str(path)],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return path


def stored(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.pi
def test_history_reads_the_extensions_windows(extension_file, capsys) -> None:
    before = extension_file.read_bytes()
    entries = stored(extension_file)
    windows = [
        e["details"]["contextManagement"]["currentWindowId"]
        for e in entries
        if e.get("customType") == "codex-context-window"
        and e["details"]["contextManagement"]["kind"] == "window"
    ]
    listed = answer(capsys, "history", str(extension_file), "list_windows")
    assert [w["window_id"] for w in listed["windows"]] == windows
    question = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user")
    found = answer(capsys, "history", str(extension_file), "search_contents", f"query={DETAIL}")
    hits = [(item["window_id"], item["item_id"], item["role"]) for item in found["items"]]
    assert (windows[0], question["id"], "user") in hits
    read = answer(
        capsys,
        "history",
        str(extension_file),
        "read_item",
        f"window_id={windows[0]}",
        f"item_id={question['id']}",
    )
    assert read["item"]["content"] == question["message"]["content"][0]["text"]
    newest = answer(capsys, "history", str(extension_file), "list_items", f"window_id={windows[1]}")
    assert [item["truncated_content"] for item in newest["items"]] == [
        "Resuming from the checkpoint.",
        "Rotate it now.",
        "Rotated.",
    ]
    assert extension_file.read_bytes() == before


@pytest.mark.pi
def test_notes_replay_the_extensions_note_entries(extension_file, capsys) -> None:
    before = extension_file.read_bytes()
    notes = [
        e["data"] for e in stored(extension_file) if e.get("customType") == "codex-context-note"
    ]
    content = notes[0]["text"] + notes[1]["text"]  # a write, then an append
    read = answer(capsys, "notes", str(extension_file), "read_file", "path=checkpoint.md")
    assert read["file"]["path"] == "/root/notes/checkpoint.md"
    assert read["file"]["content"] == content
    assert read["file"]["total_lines"] == content.count("\n") + 1
    listed = answer(capsys, "notes", str(extension_file), "list_files_by_prefix")
    assert [f["path"] for f in listed["files"]] == ["/root/notes/checkpoint.md"]
    assert listed["files"][0]["bytes"] == len(content.encode())
    found = answer(capsys, "notes", str(extension_file), "search_contents", "query=Rotated")
    assert found["files"] == [
        {"path": "/root/notes/checkpoint.md", "matches": [{"line_number": 3, "line": "Rotated."}]}
    ]
    assert extension_file.read_bytes() == before


@pytest.mark.pi
def test_the_installed_command_answers_the_same(extension_file, capsys, tmp_path) -> None:
    in_process = answer(capsys, "history", str(extension_file), "list_windows")
    completed = subprocess.run(
        [sys.executable, "-m", "ctxmodes", "history", str(extension_file), "list_windows"],
        capture_output=True,
        text=True,
        env={**os.environ, "CTXMODES_MODE": "local"},
        timeout=60,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    assert json.loads(completed.stdout) == in_process


# --------------------------------------------------------------------------- our own file


@pytest.fixture
def local_file(local) -> Path:
    """A Local session holding a note whose name looks like a number."""
    h = local(
        [call("notes", action="write_file", path="2024", text="figures for 2024"), text("ok")]
    )
    h.prompt("note the figures")
    path = h.manager.session_file
    assert path is not None
    h.close()
    return path


def test_text_parameters_keep_their_value(local_file, capsys) -> None:
    read = answer(capsys, "notes", str(local_file), "read_file", "path=2024")
    assert read["file"]["content"] == "figures for 2024"
    found = answer(capsys, "history", str(local_file), "search_contents", "query=2024")
    assert found["items"], "a numeric-looking query is still text"


BAD_INPUT = {
    "missing file": (["history", "{missing}", "list_windows", "--mode", "local"], "no such"),
    "unknown action": (["history", "{file}", "list_everything", "--mode", "local"], "action"),
    "write action": (
        ["notes", "{file}", "write_file", "path=a.md", "text=x", "--mode", "local"],
        "read-only",
    ),
    "not NAME=VALUE": (
        ["history", "{file}", "search_contents", "deploy", "--mode", "local"],
        "NAME=VALUE",
    ),
    "empty name": (["history", "{file}", "list_windows", "=5", "--mode", "local"], "NAME=VALUE"),
    "repeated name": (
        ["history", "{file}", "list_windows", "limit=1", "limit=2", "--mode", "local"],
        "more than once",
    ),
    "unknown field": (["history", "{file}", "list_windows", "page=2", "--mode", "local"], "page"),
    "a limit that is no number": (
        ["history", "{file}", "list_windows", "limit=abc", "--mode", "local"],
        "limit takes an integer of at least 1",
    ),
    "a limit below one": (
        ["history", "{file}", "search_contents", "query=x", "limit=-5", "--mode", "local"],
        "limit takes an integer of at least 1",
    ),
    "a flag that is no boolean": (
        ["history", "{file}", "list_items", "recent_first=yes", "--mode", "local"],
        "recent_first takes true or false",
    ),
    "a role nobody has": (
        ["history", "{file}", "list_items", "role=robot", "--mode", "local"],
        "role takes one of user, assistant, tool, system, developer\n",
    ),
    "a line that is no number": (
        ["notes", "{file}", "read_file", "path=2024", "start_line=first", "--mode", "local"],
        "start_line takes an integer or null\n",
    ),
    "missing field": (["history", "{file}", "read_item", "--mode", "local"], "item_id"),
    "escaping path": (["notes", "{file}", "read_file", "path=../x", "--mode", "local"], ".."),
    "mode off": (["history", "{file}", "list_windows", "--mode", "off"], "off"),
    "unknown mode": (["history", "{file}", "list_windows", "--mode", "nosuch"], "nosuch"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_and_status_1(case, local_file, capsys, tmp_path) -> None:
    template, mentions = BAD_INPUT[case]
    argv = [a.format(file=local_file, missing=tmp_path / "missing.jsonl") for a in template]
    before = local_file.read_bytes()
    code, out, err = ctxmodes(capsys, *argv)
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("ctxmodes: error: ")
    assert mentions in err
    assert local_file.read_bytes() == before
    assert not (tmp_path / "missing.jsonl").exists()


def test_a_bad_action_fails_without_a_traceback(local_file) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "ctxmodes", "notes", str(local_file), "write_file", "path=a"],
        capture_output=True,
        text=True,
        env={**os.environ, "CTXMODES_MODE": "local"},
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert completed.stderr.startswith("ctxmodes: error: ")
    assert completed.stderr.count("\n") == 1


def test_a_note_is_shown_and_never_obeyed(local, capsys) -> None:
    """What a note holds reaches the terminal as JSON escapes, the JSON itself unchanged."""
    hostile = "title\x1b]0;owned\x07 clipboard\x1b]52;c;ZXZpbA==\x07 \x9b2J \u202eright"
    h = local([call("notes", action="write_file", path="x.md", text=hostile), text("ok")])
    h.prompt("note it")
    path = h.manager.session_file
    assert path is not None
    h.close()
    code, out, err = ctxmodes(
        capsys, "notes", str(path), "read_file", "path=x.md", "--mode", "local"
    )
    assert (code, err) == (0, "")
    assert not any(character in out for character in "\x1b\x07\x9b\u202e")
    assert json.loads(out)["file"]["content"] == hostile


def test_a_history_item_is_shown_and_never_obeyed(local, capsys) -> None:
    """What the session's history holds reaches the terminal as JSON escapes too, in a
    search's answer as in a read item."""
    hostile = "title\x1b]0;owned\x07 screen\x1b[2J back\x08\x08 over\r \u202eright"
    h = local([text("ok")])
    h.prompt(f"remember {hostile}")
    path = h.manager.session_file
    assert path is not None
    h.close()
    code, out, err = ctxmodes(
        capsys, "history", str(path), "search_contents", "query=remember", "--mode", "local"
    )
    assert (code, err) == (0, "")
    assert not any(character in out for character in "\x1b\x07\x08\r\u202e")
    [item] = json.loads(out)["items"]
    code, out, err = ctxmodes(
        capsys,
        "history",
        str(path),
        "read_item",
        f"window_id={item['window_id']}",
        f"item_id={item['item_id']}",
        "--mode",
        "local",
    )
    assert (code, err) == (0, "")
    assert not any(character in out for character in "\x1b\x07\x08\r\u202e")
    assert hostile in json.loads(out)["item"]["content"]
