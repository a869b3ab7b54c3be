from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from ctxmodes.session import paths
from ctxmodes.session.listing import find_most_recent_session, read_header, read_session_info
from ctxmodes.session.manager import SessionManager


def test_agent_directory_and_session_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(paths.ENV_AGENT_DIR, raising=False)
    assert paths.agent_dir() == tmp_path / "home" / ".pi" / "agent"
    monkeypatch.setenv(paths.ENV_AGENT_DIR, "~/agent")
    assert paths.agent_dir() == tmp_path / "home" / "agent"
    assert paths.sessions_dir() == tmp_path / "home" / "agent" / "sessions"
    assert paths.encode_cwd("/home/u/my.proj") == "--home-u-my.proj--"
    assert paths.encode_cwd("/a b/c:d\\e") == "--a b-c-d-e--"
    assert paths.default_session_dir("/home/u/proj/../proj") == (
        tmp_path / "home" / "agent" / "sessions" / "--home-u-proj--"
    )
    assert paths.session_file_name("2026-01-05T12:34:56.789Z", "abc") == (
        "2026-01-05T12-34-56-789Z_abc.jsonl"
    )
    assert paths.resolve_path("rel", "/base") == "/base/rel"
    assert paths.resolve_path("file:///x/y%20z") == "/x/y z"
    # Pi's normalizePath: expanded, not made absolute.
    assert paths.normalize_path("out/page.html") == "out/page.html"
    assert paths.normalize_path("~/page.html") == str(tmp_path / "home" / "page.html")
    assert paths.normalize_path("~user/page.html") == "~user/page.html"
    assert paths.normalize_path("file:///x/y%20z") == "/x/y z"


def test_create_uses_pis_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.ENV_AGENT_DIR, str(tmp_path / "agent"))
    project = tmp_path / "proj"
    with SessionManager.create(project) as manager:
        manager.append_message({"role": "user", "content": "hi", "timestamp": 1})
        path = manager.session_file
    assert path is not None
    assert path.parent == tmp_path / "agent" / "sessions" / paths.encode_cwd(project)


def _session(directory: Path, text: str, cwd: Path, timestamp: int) -> Path:
    with SessionManager.create(cwd, directory) as manager:
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}
        )
        manager.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "api": "a",
                "provider": "p",
                "model": "m",
                "usage": {
                    "input": 0,
                    "output": 0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                },
                "stopReason": "stop",
                "timestamp": timestamp + 1,
            }
        )
        manager.append_session_info(f"about {text}")
        path = manager.session_file
    assert path is not None
    return path


def test_listing_and_continue_recent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.ENV_AGENT_DIR, str(tmp_path / "agent"))
    project = tmp_path / "proj"
    directory = paths.default_session_dir(project)
    old = _session(directory, "first", project, 1_000)
    new = _session(directory, "second", project, 2_000)
    (directory / "notes.txt").write_text("not a session")
    (directory / "broken.jsonl").write_text("{nope\n")
    os.utime(old, (time.time() + 100, time.time() + 100))

    infos = SessionManager.list_sessions(project)
    assert [info.path for info in infos] == [new, old]
    assert infos[0].first_message == "second"
    assert infos[0].name == "about second"
    assert infos[0].message_count == 2
    assert infos[0].all_messages_text == "second ok"
    assert infos[0].modified.timestamp() == 2.001
    assert [info.path for info in SessionManager.list_all()] == [new, old]

    assert find_most_recent_session(directory) == old
    with SessionManager.continue_recent(project) as manager:
        assert manager.session_file == old
        assert manager.cwd == str(project)
    assert read_header(directory / "broken.jsonl") is None
    assert read_session_info(directory / "broken.jsonl") is None


def test_custom_session_directories_are_filtered_by_cwd(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    mine = _session(flat, "mine", tmp_path / "a", 1)
    _session(flat, "theirs", tmp_path / "b", 2)
    assert [info.path for info in SessionManager.list_sessions(tmp_path / "a", flat)] == [mine]
    assert len(SessionManager.list_all(flat)) == 2
    with SessionManager.continue_recent(tmp_path / "a", flat) as manager:
        assert manager.session_file == mine
    with SessionManager.continue_recent(tmp_path / "c", flat) as manager:
        assert manager.entry_count() == 0
        assert manager.session_file is not None
        assert not manager.session_file.exists()


def test_oracle_files_summarise(tmp_path: Path, oracle_cases: Path) -> None:
    for name in ("session_info_names", "foreign_no_header", "foreign_empty_file"):
        shutil.copy(oracle_cases / f"{name}.jsonl", tmp_path)
    infos = SessionManager.list_all(tmp_path)
    assert [info.id for info in infos] == ["oracle-session-info-names"]
    with SessionManager.open(oracle_cases / "session_info_names.jsonl", read_only=True) as m:
        assert infos[0].name == m.get_session_name()
