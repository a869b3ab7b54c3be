"""History and notes text as the TypeScript extension counts and orders it: offsets and
lengths in UTF-16 code units, note names by ``localeCompare``. The JavaScript side of each
comparison is computed by node itself."""

from __future__ import annotations

import itertools

import pytest
from support.pi_oracle import node_eval

from ctxmodes.session.jsvalues import js_length, js_locale_sort_key, js_slice
from ctxmodes.windows.history import HistoryItem, ItemWindow, StaticSource
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.notes import NotesStore

ASTRAL = "a😀b𝄞c😀😀d"  # 😀 and 𝄞 are two UTF-16 code units each


def reader(content: str) -> HistoryReader:
    item = HistoryItem(window_id="w", item_id="i1", role="user", content=content)
    return HistoryReader([StaticSource([ItemWindow("w", [item])])])


def pages(content: str, limit: int, offset: int = 0) -> list[tuple[str, int | None]]:
    out = []
    while True:
        found = reader(content).read_item("w", "i1", offset_chars=offset, limit_chars=limit)
        item = found["item"]
        out.append((item["content"], item.get("next_offset_chars")))
        if "next_offset_chars" not in item:
            return out
        offset = item["next_offset_chars"]


def test_lengths_are_utf16_code_units_as_javascript_counts_them():
    lengths = node_eval("(xs) => xs.map((x) => x.length)", [ASTRAL, "", "é", "😀"])
    assert [js_length(text) for text in (ASTRAL, "", "é", "😀")] == lengths
    result = reader(ASTRAL).read_item("w", "i1")
    assert result["item"]["total_chars"] == lengths[0] == 12
    (preview,) = reader(ASTRAL).list_items()["items"]
    assert preview["content_chars"] == 12


def test_offsets_issued_by_the_extension_page_here():
    # Where JavaScript's slice does not split a pair, the pages are the extension's.
    expected = node_eval(
        "(c) => { const out = []; for (const [o, l] of [[0, 3], [3, 4], [7, 5]]) "
        "out.push(c.slice(o, o + l)); return out; }",
        ASTRAL,
    )
    got = [
        reader(ASTRAL).read_item("w", "i1", offset_chars=o, limit_chars=n)["item"]["content"]
        for o, n in ((0, 3), (3, 4), (7, 5))
    ]
    assert got == expected
    assert (
        reader(ASTRAL).read_item("w", "i1", offset_chars=7, limit_chars=2)["item"][
            "next_offset_chars"
        ]
        == 9
    )


@pytest.mark.parametrize("limit", [1, 2, 3, 5])
def test_paging_never_cuts_a_character_and_always_moves_on(limit):
    for start in range(js_length(ASTRAL)):
        got = pages(ASTRAL, limit, start)
        text = "".join(content for content, _ in got)
        # An offset inside a pair (as an extension page may end) starts at the pair.
        prefix_units = js_slice(ASTRAL, 0, start)[2]
        assert text == js_slice(ASTRAL, prefix_units)[0]
        offsets = [offset for _, offset in got if offset is not None]
        assert offsets == sorted(set(offsets))


def test_previews_cut_in_code_units():
    (preview,) = reader(ASTRAL).list_items(max_chars_per_item=4)["items"]
    assert preview["truncated_content"] == "a😀b"
    (cut,) = reader(ASTRAL).list_items(max_chars_per_item=2)["items"]
    assert cut["truncated_content"] == "a"  # not half of the emoji


def test_note_names_sort_as_locale_compare_does():
    names = ["b.md", "B.md", "a.md", "_x.md", "-y.md", "10.md", "9.md", "é.md", "e.md", "😀.md"]
    names += ["Zeta/notes.md", "zeta/a.md", "\uffef.md", "𝄞.md", "a b.md", "a-b.md", "a_b.md"]
    expected = node_eval("(xs) => [...xs].sort((a, b) => a.localeCompare(b))", names)
    assert sorted(names, key=js_locale_sort_key) == expected
    store = NotesStore()
    for number, name in zip(itertools.count(), reversed(names), strict=False):
        prepared = store.prepare_write("write", name, "x", 1_000 + number)
        store.commit(f"e{number}", prepared.data)
    listed = [f["path"] for f in store.list_files_by_prefix(max_results=100)["files"]]
    assert listed == [f"/root/notes/{name}" for name in expected]
    descending = store.list_files_by_prefix(max_results=100, file_order="descending")
    assert [f["path"] for f in descending["files"]] == list(reversed(listed))


def test_string_custom_messages_are_developer_items_counted_in_code_units():
    from ctxmodes.windows.history_items import stored_item

    entry = {
        "type": "custom_message",
        "id": "c1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "customType": "other-plugin",
        "content": ASTRAL,
        "display": True,
    }
    fields = stored_item(entry)
    assert fields is not None
    assert (fields.role, fields.content) == ("developer", ASTRAL)
    assert stored_item({**entry, "content": [{"type": "text", "text": "x"}]}) is None
