import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.windows.note_paths import (
    NOTES_ROOT,
    NotePathError,
    normalize_note_path,
    normalize_note_prefix,
)


@pytest.mark.parametrize(
    ("given_path", "key"),
    [
        ("checkpoint.md", "/root/notes/checkpoint.md"),
        ("plans/next.md", "/root/notes/plans/next.md"),
        ("~/x", "/root/notes/~/x"),
        ("notes", "/root/notes/notes"),
        ("/root/notes/checkpoint.md", "/root/notes/checkpoint.md"),
        ("/root/worker/notes/a/b", "/root/worker/notes/a/b"),
        ("/other/notes/x", "/other/notes/x"),
        # An agent may be called notes: the grammar is <agent>/notes/<path>.
        ("/notes/notes/x", "/notes/notes/x"),
        ("/root/notes/notes/notes/x", "/root/notes/notes/notes/x"),
        ("/notes/root/notes/x", "/notes/root/notes/x"),
    ],
)
def test_valid_paths(given_path, key):
    assert normalize_note_path(given_path) == key


@pytest.mark.parametrize(
    ("given_path", "message"),
    [
        (None, "Note file path is required"),
        ("", "Note file path is required"),
        (5, "Note file path is required"),
        ("a//b", "Note paths cannot contain empty, . or .. components"),
        ("a/", "Note paths cannot contain empty, . or .. components"),
        ("./a", "Note paths cannot contain empty, . or .. components"),
        ("../a", "Note paths cannot contain empty, . or .. components"),
        ("/root/notes/../x", "Note paths cannot contain empty, . or .. components"),
        ("/", "Note paths cannot contain empty, . or .. components"),
        ("/root/notes", "Absolute note paths must use <agent>/notes/<path>"),
        ("/notes/x", "Absolute note paths must use <agent>/notes/<path>"),
        ("/root/x", "Absolute note paths must use <agent>/notes/<path>"),
    ],
)
def test_invalid_paths(given_path, message):
    with pytest.raises(NotePathError) as caught:
        normalize_note_path(given_path)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("prefix", "key"),
    [
        (None, "/root/notes/"),
        ("", "/root/notes/"),
        ("dra", "/root/notes/dra"),
        ("plans/", "/root/notes/plans/"),
        ("/root/notes", "/root/notes/"),
        ("/root/notes/", "/root/notes/"),
        ("/root/worker/notes", "/root/worker/notes/"),
        ("/root/worker/notes/a", "/root/worker/notes/a"),
    ],
)
def test_valid_prefixes(prefix, key):
    assert normalize_note_prefix(prefix) == key


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        (3, "Note prefix must be a string"),
        ("a//b", "Note prefixes cannot contain empty, . or .. components"),
        ("..", "Note prefixes cannot contain empty, . or .. components"),
        ("/", "Note prefixes cannot contain empty, . or .. components"),
        ("/root", "Absolute note prefixes must use <agent>/notes[/path]"),
        ("/notes/x", "Absolute note prefixes must use <agent>/notes[/path]"),
    ],
)
def test_invalid_prefixes(prefix, message):
    with pytest.raises(NotePathError) as caught:
        normalize_note_prefix(prefix)
    assert str(caught.value) == message


component = st.one_of(
    st.sampled_from(["", ".", "..", "notes", "root", "~", "a", "a b", "\\", ".hidden"]),
    st.text(max_size=6),
)
path_text = st.one_of(
    st.lists(component, max_size=6).map("/".join),
    st.lists(component, max_size=6).map(lambda parts: "/" + "/".join(parts)),
    st.text(max_size=20),
)


def _inside_some_notes_dir(key):
    assert key.startswith("/")
    parts = key[1:].split("/")
    assert all(part not in ("", ".", "..") for part in parts)
    assert "notes" in parts[1:-1]


@given(path_text)
def test_no_path_escapes_the_notes_root(raw):
    try:
        key = normalize_note_path(raw)
    except NotePathError:
        return
    _inside_some_notes_dir(key)
    if not raw.startswith("/"):
        assert key == unicodedata.normalize("NFC", f"{NOTES_ROOT}/{raw}")
        assert key.startswith(NOTES_ROOT + "/")
    assert normalize_note_path(key) == key


@given(path_text)
def test_no_prefix_escapes_a_notes_directory(raw):
    try:
        prefix = normalize_note_prefix(raw)
    except NotePathError:
        return
    parts = prefix[1:].split("/")
    assert all(part not in (".", "..") for part in parts)
    assert "" not in parts[:-1]
    assert "notes" in parts[1:]
    if not raw.startswith("/"):
        assert prefix.startswith(NOTES_ROOT + "/")


def test_a_prefix_under_an_agent_called_notes() -> None:
    assert normalize_note_prefix("/notes/notes") == "/notes/notes/"
    assert normalize_note_prefix("/notes/notes/drafts/") == "/notes/notes/drafts/"
    with pytest.raises(NotePathError, match="must use <agent>/notes"):
        normalize_note_prefix("/notes")
