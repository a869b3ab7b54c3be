from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.windows.note_entries import utf8_length
from ctxmodes.windows.notes import NoteFile
from ctxmodes.windows.thread_hint import (
    THREAD_HINT_MAX_BYTES,
    PreviousWindowIds,
    render_thread_hint,
)


def note(path, text, updated_at=0):
    return NoteFile(path, text, 0, updated_at, utf8_length(text))


def test_reference_local_hint():
    hint = render_thread_hint(
        [note("/root/notes/checkpoint.md", "progress")],
        PreviousWindowIds("window-0", ["user-entry"]),
    )
    assert hint == (
        "Recent notes (up to 5, most-recent first):\n"
        "- /root/notes/checkpoint.md (1 line, 8 UTF-8 bytes)\n"
        'Previous window history IDs: {"window_id":"window-0","user_item_ids":["user-entry"]}'
    )


def test_tree_hint_adds_the_summary_item_between():
    hint = render_thread_hint(
        [], PreviousWindowIds("window-0", ["user-entry"], summary_item_id="tree-summary")
    )
    assert hint == (
        'Previous window history IDs: {"window_id":"window-0",'
        '"summary_item_id":"tree-summary","user_item_ids":["user-entry"]}'
    )


def test_summary_alone_is_enough_for_a_recovery_line():
    hint = render_thread_hint([], PreviousWindowIds("w", summary_item_id="s"))
    assert hint == 'Previous window history IDs: {"window_id":"w","summary_item_id":"s"}'


def test_nothing_to_say():
    assert render_thread_hint([], None) is None
    assert render_thread_hint([], PreviousWindowIds("w")) is None


def test_only_five_user_ids_newest_first_as_given():
    ids = [f"u{i}" for i in range(8)]
    hint = render_thread_hint([], PreviousWindowIds("w", ids))
    assert hint.endswith('"user_item_ids":["u0","u1","u2","u3","u4"]}')


def test_notes_order_limit_and_line_counts():
    notes = [
        note("/root/notes/old", "a\nb", updated_at=1),
        note("/root/notes/b", "", updated_at=5),
        note("/root/notes/a", "x\n", updated_at=5),
        *(note(f"/root/notes/n{i}", "é", updated_at=2) for i in range(5)),
    ]
    lines = render_thread_hint(notes).split("\n")
    assert lines == [
        "Recent notes (up to 5, most-recent first):",
        "- /root/notes/a (2 lines, 2 UTF-8 bytes)",
        "- /root/notes/b (0 lines, 0 UTF-8 bytes)",
        "- /root/notes/n0 (1 line, 2 UTF-8 bytes)",
        "- /root/notes/n1 (1 line, 2 UTF-8 bytes)",
        "- /root/notes/n2 (1 line, 2 UTF-8 bytes)",
    ]


def test_long_paths_are_skipped_and_shorter_ones_still_fit():
    huge = note("/root/notes/" + "x" * 3990, "", updated_at=9)
    small = note("/root/notes/s", "", updated_at=1)
    hint = render_thread_hint([huge, small])
    assert (
        hint
        == "Recent notes (up to 5, most-recent first):\n- /root/notes/s (0 lines, 0 UTF-8 bytes)"
    )


def test_recovery_line_is_reserved_before_notes():
    previous = PreviousWindowIds("w" * 3800, ["u"])
    hint = render_thread_hint([note("/root/notes/" + "p" * 300, "")], previous)
    assert hint.startswith("Previous window history IDs: ")
    assert utf8_length(hint) <= THREAD_HINT_MAX_BYTES


def test_oversized_recovery_line_drops_the_hint():
    assert render_thread_hint([], PreviousWindowIds("w" * 5000, ["u"])) is None


names = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), max_size=900)


@given(
    st.lists(st.tuples(names, st.integers(0, 50)), max_size=12),
    st.one_of(st.none(), st.tuples(names, st.lists(names, max_size=7))),
)
def test_hint_never_exceeds_the_byte_bound(notes, previous):
    files = [note("/root/notes/" + path, path, updated_at) for path, updated_at in notes]
    ids = PreviousWindowIds(previous[0], previous[1]) if previous else None
    hint = render_thread_hint(files, ids)
    if hint is not None:
        assert utf8_length(hint) <= THREAD_HINT_MAX_BYTES
        assert hint.count("\n- ") <= 5
