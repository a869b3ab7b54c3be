"""Renaming and deleting from the resume picker, as in Pi's: a rename asks with the name
so far typed in (the cursor where Pi's one rename field leaves it), refuses an empty name
and shows the new one at once; a delete asks first, never deletes the current session, and
a failure is a line in the picker."""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest
from support.agents import make_agent
from support.terminal import DOWN, ENTER, ESC, run_terminal

from ctxmodes.session import UserMessage
from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.picker import Picker
from ctxmodes.tui.picker_keys import PickerKeys
from ctxmodes.tui.resume import (
    CURRENT_NOT_DELETED,
    EMPTY_NAME,
    RENAME_TITLE,
    ResumePicker,
)

RENAME = "app.session.rename"
DELETE = "app.session.delete"
DELETE_WHEN_EMPTY = "app.session.deleteNoninvasive"
CTRL_R = "\x12"
CTRL_D = "\x04"


def make_session(sessions: Path, cwd: Path, text: str, name: str | None = None) -> Path:
    manager = SessionManager.create(cwd, sessions)
    manager.append_message(UserMessage(content=text, timestamp=1))
    if name is not None:
        manager.append_session_info(name)
    path = manager.session_file
    manager.close()
    assert path is not None
    return path


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """Two sessions: "older" (named "old name"), then "newer", listed first. No ``trash``
    command is found."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    directory = tmp_path / "sessions"
    older = make_session(directory, tmp_path, "older work", name="old name")
    newer = make_session(directory, tmp_path, "newer work")
    os.utime(older, (1_000_000, 1_000_000))  # the picker lists by modification time
    return directory, older, newer


def names(path: Path) -> list[str]:
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    return [entry["name"] for entry in lines if entry["type"] == "session_info"]


def titles(resume: ResumePicker) -> list[str]:
    return [head.title for head in resume.heads]


def select(resume: ResumePicker, path: Path) -> None:
    resume.picker.selected = [row.key for row in resume.picker.rows()].index(path)


def drawn(resume: ResumePicker) -> str:
    return shown(resume.picker)


def shown(picker: Picker) -> str:
    """What ``picker`` draws, in a terminal wide enough for the hint lines whole."""
    return "".join(text for _, text in picker.fragments(200))


def test_a_rename_asks_with_the_name_typed_in_and_appends_the_new_one(sessions):
    directory, older, _ = sessions
    resume = ResumePicker(directory, lambda path: None)
    picker = resume.picker
    select(resume, older)
    picker.act(RENAME)
    assert picker.question is not None
    assert picker.question.answer == "old name"
    # Pi's words and keys (Pi's own selector judges them in test_resume_rows).
    assert f"{RENAME_TITLE}\n> old name\nenter to save · escape/ctrl+c to cancel" in drawn(resume)
    # Pi's new rename field is given the name with its cursor at the start, drawn reversed.
    assert ("class:picker.query reverse", "o") in picker.fragments(200)
    picker.edit("tui.editor.cursorLineEnd")
    for _ in "name":
        picker.backspace()
    picker.type("new title")
    picker.answer()
    assert picker.question is None
    assert names(older) == ["old name", "old new title"]
    assert titles(resume) == ["newer work", "old new title"]
    assert "old new title" in drawn(resume)


def test_one_line_serves_every_rename_as_pi_s_one_rename_field(sessions):
    directory, older, newer = sessions
    resume = ResumePicker(directory, lambda path: None)
    picker = resume.picker
    select(resume, older)
    picker.act(RENAME)
    picker.type("my ")  # at the start, where the cursor was
    picker.dismiss()
    select(resume, newer)
    picker.act(RENAME)
    picker.type("x")
    picker.edit("tui.editor.undo")
    picker.edit("tui.editor.undo")  # the first rename's typing, undone here
    assert picker.question is not None
    assert picker.question.answer == "old name"
    picker.edit("tui.editor.cursorWordRight")
    picker.dismiss()
    select(resume, older)
    picker.act(RENAME)  # the cursor stays where the last rename left it, within the name
    picker.type("!")
    picker.answer()
    assert names(older) == ["old name", "old! name"]
    assert names(newer) == []


def test_an_empty_name_is_refused_with_a_word_and_the_question_stays(sessions):
    directory, _, newer = sessions
    resume = ResumePicker(directory, lambda path: None)
    picker = resume.picker
    picker.act(RENAME)
    assert picker.question is not None
    assert picker.question.answer == ""  # no name yet
    picker.type("   ")
    picker.answer()
    assert picker.question is not None  # still asking
    assert picker.notice is not None
    assert picker.notice[1] == EMPTY_NAME
    assert EMPTY_NAME in drawn(resume)
    assert names(newer) == []


def test_esc_leaves_the_rename_without_touching_the_file(sessions):
    directory, older, _ = sessions
    before = older.read_bytes()
    resume = ResumePicker(directory, lambda path: None)
    select(resume, older)
    resume.picker.act(RENAME)
    resume.picker.type(" and more")
    resume.picker.dismiss()
    assert resume.picker.question is None
    assert older.read_bytes() == before
    assert titles(resume) == ["newer work", "old name"]


def test_the_current_session_is_renamed_through_the_live_session(sessions):
    directory, _, newer = sessions
    before = newer.read_bytes()
    live: list[str] = []
    resume = ResumePicker(directory, lambda path: None, current=newer, rename_current=live.append)
    resume.picker.act(RENAME)
    resume.picker.type("the live one")
    resume.picker.answer()
    assert live == ["the live one"]
    assert newer.read_bytes() == before  # the picker never opened the file
    assert titles(resume) == ["the live one", "old name"]


def test_a_rename_the_file_refuses_is_a_line_in_the_picker(sessions):
    directory, older, _ = sessions
    resume = ResumePicker(directory, lambda path: None)
    select(resume, older)
    resume.picker.act(RENAME)
    resume.picker.type("!")
    with SessionManager.open(older):  # another ctxmodes writes it
        resume.picker.answer()
    assert resume.picker.notice is not None
    assert resume.picker.notice[1].startswith("Failed to rename: ")
    assert names(older) == ["old name"]
    assert titles(resume) == ["newer work", "old name"]


def test_a_delete_asks_first_then_the_row_and_the_file_go(sessions):
    directory, older, newer = sessions
    resume = ResumePicker(directory, lambda path: None)
    picker = resume.picker
    picker.act(DELETE)
    assert picker.question is not None
    assert "Delete session? enter confirm · escape/ctrl+c cancel" in drawn(resume)
    picker.type("x")  # ignored while asking
    picker.move(1)
    assert (picker.query, picker.selected) == ("", 0)
    picker.dismiss()
    assert newer.exists()
    picker.act(DELETE)
    picker.answer()
    assert not newer.exists()
    assert [row.key for row in picker.rows()] == [older]
    assert picker.notice is not None
    assert picker.notice[1] == "Session deleted"
    assert "Session deleted" in drawn(resume)


def test_the_current_session_is_never_deleted(sessions):
    directory, _, newer = sessions
    resume = ResumePicker(directory, lambda path: None, current=newer)
    resume.picker.act(DELETE)
    assert resume.picker.question is None
    assert resume.picker.notice is not None
    assert resume.picker.notice[1] == CURRENT_NOT_DELETED
    resume.picker.act(DELETE_WHEN_EMPTY)
    assert resume.picker.question is None
    assert newer.exists()


def test_a_delete_goes_to_the_trash_when_a_trash_command_exists(sessions, tmp_path, monkeypatch):
    directory, older, newer = sessions
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = bin_dir / "calls"
    trash = bin_dir / "trash"
    trash.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {calls}\nexec /bin/rm -- "$1"\n')
    trash.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    resume = ResumePicker(directory, lambda path: None)
    resume.picker.act(DELETE)
    resume.picker.answer()
    assert calls.read_text().splitlines() == [str(newer)]
    assert not newer.exists()
    assert resume.picker.notice is not None
    assert resume.picker.notice[1] == "Session moved to trash"
    assert [row.key for row in resume.picker.rows()] == [older]


def test_a_delete_that_fails_keeps_the_row_and_says_why(sessions, monkeypatch):
    directory, _, newer = sessions
    resume = ResumePicker(directory, lambda path: None)

    def refuse(path: Path) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refuse)
    resume.picker.act(DELETE)
    resume.picker.answer()
    assert resume.picker.notice == ("class:picker.error", "Failed to delete: Permission denied")
    assert resume.picker.rows()[0].key == newer


def test_the_noninvasive_delete_gives_its_key_to_the_search_while_one_is_typed(sessions):
    directory, _, newer = sessions
    resume = ResumePicker(directory, lambda path: None)
    keys = PickerKeys(lambda picker: None, lambda picker: None)
    # Its key bound to a word delete too, as Pi passes the key to its search field.
    pressed = frozenset({DELETE_WHEN_EMPTY, "tui.editor.deleteWordBackward"})
    resume.picker.type("newer work")
    keys.run(resume.picker, pressed, "")
    assert resume.picker.query == "newer "
    assert resume.picker.question is None
    keys.run(resume.picker, frozenset({DELETE_WHEN_EMPTY}), "")  # the field has no such key
    assert resume.picker.query == "newer "
    resume.picker.query = ""
    keys.run(resume.picker, pressed, "")
    assert resume.picker.question is not None
    resume.picker.answer()
    assert not newer.exists()


def test_the_hint_names_the_keys_the_keymap_binds(sessions, tmp_path):
    directory, _, _ = sessions
    hint = drawn(ResumePicker(directory, lambda p: None))
    assert "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename" in hint
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.session.rename": "alt+r", "app.session.delete": []}')
    hint = drawn(ResumePicker(directory, lambda p: None, keymap=KeyMap.load(bindings)))
    assert "alt+r rename" in hint
    # As Pi's hint names an action bound to no key: its word alone.
    assert "ctrl+n named ·  delete · ctrl+p" in hint


# ------------------------------------------------------------------- in the session


def test_in_the_session_s_resume_picker_ctrl_r_renames_and_ctrl_d_deletes(tmp_path):
    agent = make_agent(tmp_path, [{"text": "hi"}])
    other = make_session(tmp_path / "sessions", tmp_path, "other work")
    os.utime(other, (1_000_000, 1_000_000))  # listed below the current session

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        picker = t.session.picker
        assert [row.key for row in picker.rows()] == [agent.session_file, other]
        await t.type(CTRL_D)
        await t.until(lambda: picker.notice == ("class:picker.error", CURRENT_NOT_DELETED))
        await t.type(CTRL_R)
        await t.until(lambda: picker.question is not None, "the rename question")
        await t.type("live name" + ENTER)
        await t.until(lambda: agent.session_manager.get_session_name() == "live name")
        footer = t.session.status.fragments
        await t.until(lambda: "live name" in str(footer()), "the new name in the footer")
        assert t.session.picker is picker  # the picker stays open
        await t.type(DOWN + CTRL_R + "other name" + ENTER)
        await t.until(lambda: names(other) == ["other name"], "the other file renamed")
        await t.type(CTRL_D)
        await t.until(lambda: picker.question is not None, "the delete question")
        await t.type(ENTER)
        await t.until(lambda: not other.exists(), "the other file deleted")
        assert [row.key for row in picker.rows()] == [agent.session_file]
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the picker to close")

    run_terminal(agent, scenario)
    assert names(agent.session_file) == ["live name"]


def test_keybindings_json_rebinds_the_picker_s_rename(tmp_path):
    agent = make_agent(tmp_path, [{"text": "hi"}])
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.session.rename": "ctrl+e"}')

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        picker = t.session.picker
        await t.type(CTRL_R)  # no longer renames
        assert picker.question is None
        await t.type("\x05")  # Ctrl+E
        await t.until(lambda: picker.question is not None, "the rename question")
        assert picker.question.prompt == RENAME_TITLE

    run_terminal(agent, scenario, keymap=KeyMap.load(bindings))


def test_keybindings_json_rebinds_the_session_picker_s_selection_keys(tmp_path):
    """Pi's ``tui.select.*`` keys and Backspace moved: the old ones do nothing, the rename
    question takes the new cancel key, and the new confirm key resumes."""
    agent = make_agent(tmp_path, [{"text": "hi"}])
    other = make_session(tmp_path / "sessions", tmp_path, "other work")
    os.utime(other, (1_000_000, 1_000_000))  # listed below the current session
    bindings = tmp_path / "keybindings.json"
    bindings.write_text(
        '{"tui.select.down": "ctrl+y", "tui.select.cancel": "ctrl+g",'
        ' "tui.select.confirm": "ctrl+o", "tui.editor.deleteCharBackward": "ctrl+k"}'
    )

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        picker = t.session.picker
        await t.type("xy\x7f" + "\x0b")  # Backspace no longer bound; Ctrl+K takes back
        assert picker.query == "x"
        await t.type("\x0b\x1b[B\x19")  # Ctrl+Y moves down, ↓ does not
        assert picker.selected == 1
        await t.type(CTRL_R)
        await t.until(lambda: picker.question is not None, "the rename question")
        await t.escape()  # Esc and Ctrl+C no longer cancel
        await t.type("\x03")
        assert picker.question is not None
        await t.type("\x07")  # Ctrl+G
        await t.until(lambda: picker.question is None, "the question dismissed")
        await t.type("\x0f")  # Ctrl+O resumes the selected session
        await t.until(lambda: t.agent.session_file == other, "the other session")

    run_terminal(agent, scenario, keymap=KeyMap.load(bindings))


# ------------------------------------------------------------------- Pi's toggles

NAMED = "app.session.toggleNamedFilter"
PATH = "app.session.togglePath"
SORT = "app.session.toggleSort"


def fork_of(sessions: Path, cwd: Path, parent: Path, text: str) -> Path:
    """A session whose header names ``parent`` as the one it was forked from."""
    path = make_session(sessions, cwd, text)
    lines = path.read_bytes().splitlines()
    header = orjson.loads(lines[0])
    header["parentSession"] = str(parent)
    path.write_bytes(b"\n".join([orjson.dumps(header), *lines[1:]]) + b"\n")
    return path


def test_the_named_filter_lists_named_sessions_only_and_says_so_when_there_are_none(sessions):
    directory, older, newer = sessions
    resume = ResumePicker(directory, lambda p: None)
    assert resume.picker.act(NAMED)
    assert [row.key for row in resume.picker.rows()] == [older]
    assert "Name: Named" in resume.picker.title
    resume.picker.type('"newer"')  # as exact text: a fuzzy "newer" finds it in the folder
    assert resume.picker.rows() == []
    assert (
        "No named sessions in current folder. Press ctrl+n to show all, or Tab to view all."
        in drawn(resume)
    )
    assert resume.picker.act(NAMED)
    assert [row.key for row in resume.picker.rows()] == [newer]
    assert "Name: All" in resume.picker.title


def test_the_path_toggle_names_each_session_s_file(sessions, monkeypatch):
    directory, older, _ = sessions
    monkeypatch.setenv("HOME", str(directory.parent))
    resume = ResumePicker(directory, lambda p: None)
    assert "ctrl+p path (off)" in drawn(resume)
    assert older.name not in drawn(resume)
    resume.picker.act(PATH)
    assert f"~/sessions/{older.name}" in drawn(resume)
    assert "ctrl+p path (on)" in drawn(resume)


def test_the_sort_cycles_threaded_recent_and_fuzzy_as_pi_s(sessions, tmp_path):
    directory, older, newer = sessions
    fork = fork_of(directory, tmp_path, older, "forked work")
    os.utime(fork, (2_000_000, 2_000_000))  # older than "newer", newer than "older"
    resume = ResumePicker(directory, lambda p: None)
    picker = resume.picker
    assert picker.title.endswith("Sort: Threaded")
    # The fork under the session it came from; threads by their latest activity.
    assert [row.key for row in picker.rows()] == [newer, older, fork]
    assert "└─ " in "".join(text for _, text in picker.rows()[2].fragments)
    picker.act(SORT)
    assert picker.title.endswith("Sort: Recent")
    assert [row.key for row in picker.rows()] == [newer, fork, older]
    picker.type("work")
    assert [row.key for row in picker.rows()] == [newer, fork, older]  # filtered, in order
    picker.act(SORT)
    assert picker.title.endswith("Sort: Fuzzy")
    picker.backspace()
    picker.backspace()
    picker.backspace()
    picker.backspace()
    picker.type("older work")
    assert [row.key for row in picker.rows()] == [older]
    picker.act(SORT)
    assert picker.title.endswith("Sort: Threaded")


FUZZY_CASES = [
    ("wk", "work"),
    ("xyz", "work"),
    ("work", "older work"),
    ("work", "w-o-r-k"),
    ("abc", "abc"),
    ("abc", "ab"),
    ("v2", "2v"),
    ("2v", "v2 notes"),
    ("", "anything"),
    ("OLD", "an older/Work_dir"),
]


@pytest.mark.pi
def test_the_fuzzy_score_is_pi_s_fuzzy_match():
    import subprocess

    from support.pi_oracle import require_node, require_pi_modules

    from ctxmodes.tui.session_order import fuzzy_score

    module = require_pi_modules() / "@earendil-works" / "pi-tui" / "dist" / "fuzzy.js"
    script = (
        "const [url, cases] = process.argv.slice(1);"
        "const { fuzzyMatch } = await import(url);"
        "const out = JSON.parse(cases).map(([q, t]) => fuzzyMatch(q, t));"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        [
            require_node(),
            "--input-type=module",
            "-e",
            script,
            module.as_uri(),
            json.dumps(FUZZY_CASES),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pis = [m["score"] if m["matches"] else None for m in json.loads(result.stdout)]
    ours = [fuzzy_score(query, text) for query, text in FUZZY_CASES]
    assert ours == [None if score is None else pytest.approx(score) for score in pis]


def test_the_words_of_the_toggles_are_pi_s():
    from support.pi_oracle import PI_PACKAGE, require_pi_modules

    from ctxmodes.tui.session_order import SORT_LABELS

    dist = require_pi_modules() / PI_PACKAGE.parent / "dist" / "modes/interactive/components"
    source = (dist / "session-selector.js").read_text()
    threaded, recent, fuzzy = SORT_LABELS.values()
    assert (
        f'this.sortMode === "threaded" ? "{threaded}" : this.sortMode === "recent" ? "{recent}" '
        f': "{fuzzy}"'
    ) in source
    assert '"threaded" ? "recent" : this.sortMode === "recent" ? "relevance" : "threaded"' in source
    for text in (
        'keyHint("app.session.toggleSort", "sort")',
        'keyHint("app.session.toggleNamedFilter", "named")',
        'keyHint("app.session.togglePath", `path ${pathState}`)',
        'this.showPath ? "(on)" : "(off)"',
        "No named sessions in current folder. Press ${toggleKey} to show all",
        'this.nameFilter === "all" ? "All" : "Named"',
    ):
        assert text in source, text


def test_in_the_session_ctrl_n_ctrl_p_and_ctrl_s_toggle_and_keybindings_json_moves_them(
    tmp_path,
):
    agent = make_agent(tmp_path, [{"text": "hi"}])
    other = make_session(tmp_path / "sessions", tmp_path, "other work", name="kept")
    os.utime(other, (1_000_000, 1_000_000))
    bindings = tmp_path / "keybindings.json"
    bindings.write_text('{"app.session.toggleSort": "alt+s"}')

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        picker = t.session.picker
        await t.type("\x0e")  # Ctrl+N
        await t.until(lambda: [row.key for row in picker.rows()] == [other], "named only")
        await t.type("\x10")  # Ctrl+P
        await t.until(lambda: "path (on)" in shown(picker), "the paths shown")
        await t.type("\x13")  # Ctrl+S: rebound, so nothing
        assert picker.title.endswith("Sort: Threaded")
        await t.type("\x1bs")  # Alt+S
        await t.until(lambda: picker.title.endswith("Sort: Recent"), "the next order")
        assert "alt+s sort" in shown(picker)

    run_terminal(agent, scenario, keymap=KeyMap.load(bindings))
