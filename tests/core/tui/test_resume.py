"""The resume picker lists from each file's head, name and first message: on a directory of
1,000 sessions and a 100 MB one it is ready in well under half a second; partial ids and
names match at once, and text inside a file once the files are read in the background."""

from __future__ import annotations

import pytest
from support.session_dirs import LARGE_NAME, write_sessions

from ctxmodes.tui.heads import read_head
from ctxmodes.tui.resume import ResumePicker

pytestmark = pytest.mark.slow  # a thousand sessions and a 100 MB one


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    root = tmp_path_factory.mktemp("sessions")
    large = write_sessions(root, 1000, large_bytes=100 * 1024 * 1024)
    return root, large


def test_the_picker_lists_every_session_most_recent_first(directory):
    # How soon it is ready beside reading the files whole: bench/terminal.py.
    root, large = directory
    rows = ResumePicker(root, lambda path: None).picker.rows()
    assert len(rows) == 1001
    assert rows[0].key == large


def test_the_head_of_a_large_file_has_its_late_name_and_first_message(directory):
    _, large = directory
    head = read_head(large)
    assert head is not None
    assert head.name == LARGE_NAME
    assert head.first_message == "refactor the parser"
    assert head.title == LARGE_NAME


def test_partial_ids_and_names_filter_at_once(directory):
    root, large = directory
    picker = ResumePicker(root, lambda path: None).picker
    picker.type("000003e7")  # session 999's id starts so; others match it less well
    assert picker.rows()[0].text.startswith("000003e7")
    picker.query = ""
    picker.type('"the large one"')
    assert [row.key for row in picker.rows()] == [large]


def test_text_inside_a_file_is_found_once_the_files_are_read(directory):
    root, large = directory
    woken: list[bool] = []
    resume = ResumePicker(root, lambda path: None, wake=lambda: woken.append(True))
    picker = resume.picker
    picker.type('"NEEDLE-only-in"')
    resume.join_load(60)
    assert woken  # the rows were drawn again as the files were read
    assert "Loading" not in picker.title
    assert [row.key for row in picker.rows()] == [large]


def test_a_damaged_or_foreign_file_is_left_out(tmp_path):
    write_sessions(tmp_path, 2)
    (tmp_path / "broken.jsonl").write_bytes(b"not json\n")
    (tmp_path / "other.jsonl").write_bytes(b'{"type":"other"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert len(ResumePicker(tmp_path, lambda path: None).picker.rows()) == 2


def test_in_a_directory_every_project_shares_the_picker_offers_this_projects_sessions(tmp_path):
    from ctxmodes.session import UserMessage
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.paths import cwd_filter, default_session_dir

    shared = tmp_path / "sessions"
    paths = {}
    for project in ("mine", "theirs"):
        (tmp_path / project).mkdir()
        manager = SessionManager.create(tmp_path / project, shared)
        manager.append_message(UserMessage(content=f"work on {project}", timestamp=1))
        paths[project] = manager.session_file
        manager.close()
    mine = tmp_path / "mine"
    rows = ResumePicker(shared, lambda path: None, cwd=cwd_filter(mine, shared)).picker.rows()
    assert [row.key for row in rows] == [paths["mine"]]
    # Pi's own folder for a project holds only its sessions: no filter.
    assert cwd_filter(mine, default_session_dir(mine)) is None
