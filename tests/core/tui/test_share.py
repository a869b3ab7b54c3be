"""``/share``: the session's page as a secret gist through ``gh``, with Pi's steps (``gh auth
status``, the page as ``session.html`` in a temporary folder, ``gh gist create
--public=false``), Pi's words for each way it ends, Esc to cancel, and no temporary file
left behind. A fake ``gh`` keeps the real one's contract (GitHub is out of reach here)."""

from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.fake_gh import GIST_FAILURE, TOKEN, USER, FakeGh, gist_id_of, install_fake_gh
from support.terminal import ENTER, ESC, run_terminal

from ctxmodes.config import Settings
from ctxmodes.export import export_session
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui import session_share
from ctxmodes.tui.session_share import (
    CANCELLED,
    CREATING,
    IN_MEMORY,
    NO_GIST_ID,
    NOT_INSTALLED,
    NOT_LOGGED_IN,
    NOTHING_YET,
    GistShare,
    share_report,
    viewer_url,
)


@pytest.fixture
def temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder temporary folders are made in, empty, so a test sees what is left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeGh:
    fake = install_fake_gh(tmp_path / "gh")
    monkeypatch.setenv("PATH", fake.path_with_gh())
    monkeypatch.delenv(session_share.VIEWER_VARIABLE, raising=False)
    return fake


def _agent(tmp_path: Path) -> Agent:
    return make_agent(tmp_path, [{"text": "REPLY-TO-SHARE"}])


def _share_after_a_reply(agent: Agent, until: str, *, keys: str = "") -> Any:
    """Ask once, ``/share``, press ``keys``, and wait until ``until`` is printed."""

    async def scenario(t: Any) -> None:
        await t.type("question" + ENTER)
        await t.printed("REPLY-TO-SHARE")
        await t.idle()
        await t.type("/share" + ENTER)
        if keys:
            await t.type(keys)
        await t.printed(until)
        await t.until(lambda: t.session.picker is None, "the editor back")

    return run_terminal(agent, scenario)


def test_the_page_goes_to_a_secret_gist_and_its_url_is_printed(
    tmp_path: Path, gh: FakeGh, temporary: Path
) -> None:
    agent = _agent(tmp_path)
    terminal = _share_after_a_reply(agent, "Gist: ")
    auth, gist = gh.calls()
    assert auth["argv"] == ["auth", "status"]
    *command, page = gist["argv"]
    assert command == ["gist", "create", "--public=false"]
    # The page, named as Pi names it, in a folder of its own that is gone now.
    assert Path(page).name == "session.html"
    assert Path(page).parent.parent == temporary
    assert list(temporary.iterdir()) == []
    # The page is ctxmodes' export of the session.
    assert session_share.PAGE_NAME == "session.html"
    expected = tmp_path / "expected.html"
    assert agent.session_file is not None
    export_session(agent.session_file, expected, "off")
    assert gist["text"] == expected.read_text()
    assert "REPLY-TO-SHARE" in gist["text"]
    url = f"https://gist.github.com/{USER}/{gist_id_of(gist['text'])}"
    assert terminal.transcript[-1] == f"Gist: {url}"
    # No viewer was named: no viewer URL (Pi's would not render ctxmodes' page).
    assert "Share URL" not in terminal.text()
    # What gh auth status says (the account, the masked token) is not shown.
    assert TOKEN[:4] not in terminal.text()
    assert "Logged in to" not in terminal.text()


def test_a_named_viewer_gets_the_gist_id_after_a_hash(
    tmp_path: Path, gh: FakeGh, temporary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_SHARE_VIEWER_URL", "https://viewer.example/s/")
    terminal = _share_after_a_reply(_agent(tmp_path), "Gist: ")
    gist_id = gist_id_of(gh.calls()[1]["text"])
    assert terminal.transcript[-1] == (
        f"Share URL: https://viewer.example/s/#{gist_id}\n"
        f"Gist: https://gist.github.com/{USER}/{gist_id}"
    )


@pytest.mark.parametrize(
    ("auth", "gist", "message", "commands"),
    [
        ("logged-out", "created", NOT_LOGGED_IN, [["auth", "status"]]),
        ("logged-in", "fails", f"Failed to create gist: {GIST_FAILURE}", None),
        ("logged-in", "says-nothing", NO_GIST_ID, None),
    ],
    ids=["not-logged-in", "gist-refused", "no-url"],
)
def test_each_failure_is_said_in_pis_words(
    tmp_path: Path,
    gh: FakeGh,
    temporary: Path,
    auth: Any,
    gist: Any,
    message: str,
    commands: list[list[str]] | None,
) -> None:
    gh.configure(auth=auth, gist=gist)
    terminal = _share_after_a_reply(_agent(tmp_path), "Error: ")
    assert terminal.transcript[-1] == f"Error: {message}"
    if commands is not None:
        assert [call["argv"] for call in gh.calls()] == commands
    assert list(temporary.iterdir()) == []


def test_without_gh_it_says_how_to_install_it(
    tmp_path: Path, temporary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-programs"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    terminal = _share_after_a_reply(_agent(tmp_path), "Error: ")
    assert terminal.transcript[-1] == f"Error: {NOT_INSTALLED}"
    assert list(temporary.iterdir()) == []


def test_before_anything_is_stored_there_is_nothing_to_export(
    tmp_path: Path, gh: FakeGh, temporary: Path
) -> None:
    agent = _agent(tmp_path)

    async def scenario(t: Any) -> None:
        await t.type("/share" + ENTER)
        await t.printed("Error: ")

    terminal = run_terminal(agent, scenario)
    assert terminal.transcript[-1] == f"Error: Failed to export session: {NOTHING_YET}"
    # As in Pi, gh is asked first, and no gist is made.
    assert [call["argv"] for call in gh.calls()] == [["auth", "status"]]
    assert list(temporary.iterdir()) == []


def test_a_session_kept_in_memory_cannot_be_shared(
    tmp_path: Path, gh: FakeGh, temporary: Path
) -> None:
    agent = open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off"),
        provider=ScriptedProvider(Script.model_validate({"responses": [{"text": "x"}]})),
        persist=False,
    )

    async def scenario(t: Any) -> None:
        await t.type("/share" + ENTER)
        await t.printed("Error: ")

    terminal = run_terminal(agent, scenario)
    assert terminal.transcript[-1] == f"Error: Failed to export session: {IN_MEMORY}"
    assert list(temporary.iterdir()) == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child that ended but was not reaped yet is a zombie: not running either.
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(") ")[-1][:1] != "Z"


def test_esc_cancels_the_gist_stops_gh_and_removes_the_page(
    tmp_path: Path, gh: FakeGh, temporary: Path
) -> None:
    gh.configure(gist="hangs")
    agent = _agent(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("question" + ENTER)
        await t.printed("REPLY-TO-SHARE")
        await t.idle()
        await t.type("/share" + ENTER)
        await t.until(lambda: gh.hanging_pid() is not None, "gh to be creating the gist")
        seen["line"] = "".join(text for _, text in t.session.picker.fragments(100))
        await t.type(ENTER)  # the line stays: only Esc cancels
        seen["after enter"] = t.session.picker is not None
        seen["page"] = next(temporary.iterdir()) / "session.html"
        assert seen["page"].exists()
        # The page waits in a folder only its owner can enter.
        assert stat.S_IMODE(seen["page"].parent.stat().st_mode) == 0o700
        await t.type(ESC)
        await t.printed(CANCELLED)
        await t.until(lambda: not any(temporary.iterdir()), "the folder to be removed")
        seen["editor"] = t.session.picker is None
        await t.type("after" + ENTER)
        await t.printed("after")

    terminal = run_terminal(agent, scenario)
    assert CREATING in seen["line"]
    assert "escape/ctrl+c cancel" in seen["line"]  # Pi's keys for it
    assert seen["after enter"]
    assert seen["editor"]
    pid = gh.hanging_pid()
    assert pid is not None
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid)
    # Cancelled is all that is said: no error follows it (the model, which has no answer
    # left for the prompt typed after, fails that one).
    assert "Error" not in terminal.text().split("\u203a after")[0]
    assert terminal.text().count(CANCELLED) == 1


def test_leaving_ctxmodes_during_a_share_stops_gh_and_removes_the_folder(
    tmp_path: Path, gh: FakeGh, temporary: Path
) -> None:
    """What runs at exit (``atexit``) while a share waits on ``gh``."""
    gh.configure(gist="hangs")
    agent = _agent(tmp_path)
    try:
        agent.prompt("question")
        job = GistShare(agent.session_file, agent.mode, os.environ)
        outcome: list[Any] = []
        import threading

        worker = threading.Thread(target=lambda: outcome.append(job.run()))
        worker.start()
        deadline = time.monotonic() + 10
        while gh.hanging_pid() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert job.page.exists()
        job.abandon()
        worker.join(10)
        assert not worker.is_alive()
        assert outcome == [None]
        assert list(temporary.iterdir()) == []
    finally:
        agent.close()


@pytest.mark.parametrize(
    ("output", "environ", "report"),
    [
        (
            "https://gist.github.com/u/0123456789abcdef0123456789abcdef\n",
            {},
            "Gist: https://gist.github.com/u/0123456789abcdef0123456789abcdef",
        ),
        # An empty variable is no viewer, as in Pi.
        (
            "https://gist.github.com/u/ab\n",
            {"PI_SHARE_VIEWER_URL": ""},
            "Gist: https://gist.github.com/u/ab",
        ),
        (
            "https://gist.github.com/u/ab\n",
            {"PI_SHARE_VIEWER_URL": "http://localhost:8000/v"},
            "Share URL: http://localhost:8000/v#ab\nGist: https://gist.github.com/u/ab",
        ),
        ("", {}, None),
        ("https://gist.github.com/u/\n", {}, None),
    ],
)
def test_the_report_takes_the_id_as_pi_does(
    output: str, environ: dict[str, str], report: str | None
) -> None:
    assert share_report(output, environ) == report


def test_no_viewer_url_without_the_variable() -> None:
    assert viewer_url("ab", {}) is None
    assert viewer_url("ab", {"PI_SHARE_VIEWER_URL": "https://v/"}) == "https://v/#ab"
