"""``/trust``: Pi's three choices for the working directory, each written to ``trust.json`` as
Pi's ``/trust`` writes it; Esc leaves the file as it was; a store that cannot be read is said
in one line; the running session is not reloaded; and the real Pi honours the decision, as
ctxmodes honours Pi's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import pi_resources
from support.terminal import DOWN, ENTER, ESC, UP, run_terminal

from ctxmodes.config import Settings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.project_trust import saved_notice


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home whose agent directory is Pi's default, so the real Pi finds the same store."""
    (tmp_path / "home" / ".pi" / "agent").mkdir(parents=True)
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with a prompt template of its own, which waits for trust."""
    folder = tmp_path / "work" / "repo"
    (folder / ".pi" / "prompts").mkdir(parents=True)
    (folder / ".pi" / "prompts" / "fix.md").write_text("Fix issue $1")
    return folder


def _agent(home: Path, project: Path, *, approve: bool | None = None) -> Agent:
    script = Script.model_validate({"responses": [{"text": "answered"}]})
    return open_agent(
        cwd=project,
        settings=Settings(mode="off", durability="flush"),
        provider=ScriptedProvider(script),
        session_dir=home / "sessions",
        resources=default_loader(approve=approve, agent_dir=home / ".pi" / "agent"),
    )


def _store(home: Path) -> Path:
    return home / ".pi" / "agent" / "trust.json"


def _pi_file(entries: dict[str, bool | None]) -> str:
    """``trust.json`` as Pi writes it: keys sorted, two spaces, a final newline."""
    return json.dumps(dict(sorted(entries.items())), indent=2, ensure_ascii=False) + "\n"


def _choose(home: Path, project: Path, keys: str) -> Any:
    """Open ``/trust``, press ``keys``, and return what the list showed and the terminal."""
    agent = _agent(home, project)
    shown: dict[str, str] = {}

    async def scenario(t: Any) -> None:
        await t.type("/trust" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the trust list")
        # Wide enough for the test's long paths to stay on one line each.
        shown["list"] = "".join(text for _, text in t.session.picker.fragments(1000))
        await t.type(keys)
        await t.until(lambda: t.session.picker is None, "the list to close")

    terminal = run_terminal(agent, scenario)
    return shown["list"], terminal


@pytest.mark.parametrize(
    ("keys", "written", "trusted"),
    [
        (ENTER, lambda p: {str(p.parent.parent): False, str(p): True}, True),
        (DOWN + ENTER, lambda p: {str(p.parent.parent): False, str(p.parent): True}, True),
        ("jj" + ENTER, lambda p: {str(p.parent.parent): False, str(p): False}, False),
    ],
    ids=["trust", "trust-parent", "do-not-trust"],
)
def test_each_choice_is_written_as_pi_writes_it(home, project, keys, written, trusted):
    # Another folder's decision stays; trusting the parent removes the folder's own.
    _store(home).write_text(_pi_file({str(project.parent.parent): False, str(project): True}))
    _, terminal = _choose(home, project, UP + keys)
    assert _store(home).read_text() == _pi_file(written(project))
    assert saved_notice(trusted) in terminal.flat()


def test_the_list_shows_pi_s_choices_and_the_saved_decision(home, project):
    _store(home).write_text(_pi_file({str(project.parent): False}))
    shown, _ = _choose(home, project, ESC)
    lines = [line.rstrip() for line in shown.splitlines()]
    assert lines[:5] == [
        "Project trust",
        str(project),
        "",
        f"Saved decision: untrusted (inherited from {project.parent})",
        "Current session: untrusted",
    ]
    # The parent's own "untrusted" is none of the choices: none is marked, the first selected.
    assert lines[5:8] == [
        "▸   Trust",
        f"    Trust parent folder ({project.parent})",
        "    Do not trust",
    ]


def test_the_list_opens_on_the_saved_choice(home, project):
    _store(home).write_text(_pi_file({str(project.parent): True}))
    shown, _ = _choose(home, project, ESC)
    assert f"Saved decision: trusted (inherited from {project.parent})" in shown
    assert f"▸ ✓ Trust parent folder ({project.parent})" in shown


def test_without_a_saved_decision_the_list_says_none(home, project):
    shown, _ = _choose(home, project, ESC)
    assert "Saved decision: none" in shown
    assert "▸   Trust" in shown


@pytest.mark.parametrize("before", [None, '{\n  "/elsewhere": true\n}\n'])
def test_escape_leaves_the_store_as_it_was(home, project, before):
    if before is not None:
        _store(home).write_text(before)
    _, terminal = _choose(home, project, DOWN + ESC)
    if before is None:
        assert not _store(home).exists()
    else:
        assert _store(home).read_text() == before
    assert "Saved trust decision" not in terminal.flat()


def test_other_letters_do_not_filter_or_choose(home, project):
    _choose(home, project, "xq" + ENTER)
    assert json.loads(_store(home).read_text()) == {str(project): True}


@pytest.mark.parametrize("content", ["{oops", "[]", '{"/x": "yes"}'])
def test_an_unreadable_store_is_said_in_one_line_and_left_alone(home, project, content):
    _store(home).write_text(content)
    agent = _agent(home, project)

    async def scenario(t: Any) -> None:
        await t.type("/trust" + ENTER)
        await t.printed("nothing was saved")
        assert t.session.picker is None

    terminal = run_terminal(agent, scenario)
    # One notice (wrapped to the terminal's width), naming the file.
    (notice,) = [block for block in terminal.transcript if "nothing was saved" in block]
    assert str(_store(home)) in " ".join(notice.split()).replace(" ", "")
    assert "Traceback" not in terminal.text()
    assert _store(home).read_text() == content


def test_a_store_broken_while_the_list_is_open_is_not_replaced(home, project):
    agent = _agent(home, project)

    async def scenario(t: Any) -> None:
        await t.type("/trust" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the trust list")
        _store(home).write_text("{oops")
        await t.type(ENTER)
        await t.printed("nothing was saved")

    terminal = run_terminal(agent, scenario)
    assert "Saved trust decision" not in terminal.flat()
    assert _store(home).read_text() == "{oops"


def test_the_running_session_is_not_reloaded(home, project):
    agent = _agent(home, project)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("/trust" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the trust list")
        await t.type(ENTER)
        await t.printed(saved_notice(True))
        seen["trusted"] = agent.session.resources.trusted
        seen["templates"] = [template.name for template in agent.session.resources.templates]

    run_terminal(agent, scenario)
    assert seen == {"trusted": False, "templates": []}
    again = _agent(home, project)
    try:
        assert [template.name for template in again.session.resources.templates] == ["fix"]
    finally:
        again.close()


def test_the_slash_menu_offers_it(home, project):
    agent = _agent(home, project)
    offered: list[str] = []

    async def scenario(t: Any) -> None:
        await t.type("/tru")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        offered.extend(c.text for c in t.session.buffer.complete_state.completions)

    run_terminal(agent, scenario)
    assert "/trust " in offered or "/trust" in offered


@pytest.mark.pi
@pytest.mark.parametrize(
    ("keys", "trusted"), [(ENTER, True), (DOWN + ENTER, True), (DOWN + DOWN + ENTER, False)]
)
def test_the_real_pi_honours_the_decision_saved_here(home, project, keys, trusted):
    _choose(home, project, keys)
    (answer,) = pi_resources([{"cwd": str(project), "agentDir": str(home / ".pi" / "agent")}], home)
    assert answer["trusted"] is trusted
    assert [t["name"] for t in answer["templates"]] == (["fix"] if trusted else [])


@pytest.mark.pi
@pytest.mark.parametrize("index", [0, 1, 2], ids=["trust", "trust-parent", "do-not-trust"])
def test_pi_s_trust_writes_the_same_file_and_ctxmodes_follows_it(home, project, index):
    """The same choice of Pi's ``/trust`` list, saved by Pi's own store from the same file
    as ours: the same bytes, and the next session here loads as Pi says. Other folders'
    entries stay as Pi keeps them: a null, and a name beyond ASCII unescaped."""
    others: dict[str, bool | None] = {"/elsewhere/café": True, "/elsewhere/old": None}
    before = _pi_file({**others, str(project.parent.parent): False, str(project): True})
    _store(home).write_text(before)
    _choose(home, project, UP + DOWN * index + ENTER)
    ours = _store(home).read_text()
    _store(home).write_text(before)
    request = {"cwd": str(project), "agentDir": str(home / ".pi" / "agent"), "trustChoice": index}
    (answer,) = pi_resources([request], home)
    assert _store(home).read_text() == ours
    again = _agent(home, project)
    try:
        assert again.session.resources.trusted is answer["trusted"]
    finally:
        again.close()
