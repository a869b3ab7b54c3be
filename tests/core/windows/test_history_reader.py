import json

import pytest

from ctxmodes.windows.history import HistoryItem, ItemFilter, ItemWindow, StaticSource
from ctxmodes.windows.history_reader import HistoryReader


def item(window, item_id, content, role="user", **extra):
    return HistoryItem(window_id=window, item_id=item_id, role=role, content=content, **extra)


def reader(*windows, summary_first=False):
    return HistoryReader([StaticSource(list(windows))], summary_first=summary_first)


W0 = ItemWindow(
    "w0",
    [
        item("w0", "a1b2c3d4", "first request"),
        item("w0", "b2", "answer", role="assistant"),
        item("w0", "c3", "ls output", role="tool", tool_name="bash"),
        item(
            "w0",
            "d4",
            "notes call",
            role="assistant",
            tool_name="write_file",
            tool_namespace="notes",
        ),
    ],
)
W1 = ItemWindow("w1", [item("w1", "e5", "second request"), item("w1", "f6", "request done")])


def test_list_windows():
    assert reader(W0, W1).list_windows() == {
        "source": "pi-session",
        "windows": [{"window_id": "w0", "item_count": 4}, {"window_id": "w1", "item_count": 2}],
    }
    recent = reader(W0, W1).list_windows(recent_first=True, limit=1)
    assert recent["windows"] == [{"window_id": "w1", "item_count": 2}]
    assert reader(W0, W1).list_windows(limit=0)["windows"] == []


def test_list_windows_caps_at_one_hundred():
    windows = [ItemWindow(f"w{i}") for i in range(130)]
    assert len(reader(*windows).list_windows(limit=1000)["windows"]) == 100
    assert len(reader(*windows).list_windows()["windows"]) == 20


def test_list_items_preview_shape():
    result = reader(W0).list_items(item_filter=ItemFilter(tool_namespace="notes"))
    assert result == {
        "source": "pi-session",
        "items": [
            {
                "window_id": "w0",
                "item_id": "d4",
                "role": "assistant",
                "tool_name": "write_file",
                "tool_namespace": "notes",
                "truncated_content": "notes call",
                "content_chars": 10,
            }
        ],
    }
    # Key order is part of the shared format.
    assert list(result["items"][0]) == [
        "window_id",
        "item_id",
        "role",
        "tool_name",
        "tool_namespace",
        "truncated_content",
        "content_chars",
    ]


def test_list_items_filters_and_order():
    ids = lambda result: [i["item_id"] for i in result["items"]]  # noqa: E731
    both = reader(W0, W1)
    assert ids(both.list_items()) == ["a1b2c3d4", "b2", "c3", "d4", "e5", "f6"]
    assert ids(both.list_items(recent_first=True, limit=3)) == ["f6", "e5", "d4"]
    assert ids(both.list_items(window_id="w1")) == ["e5", "f6"]
    assert ids(both.list_items(window_id="nope")) == []
    assert ids(both.list_items(item_filter=ItemFilter(role="user"))) == ["a1b2c3d4", "e5", "f6"]
    assert ids(both.list_items(item_filter=ItemFilter(tool_name="bash"))) == ["c3"]
    assert ids(both.list_items(limit=0)) == []
    assert len(both.list_items(limit=100)["items"]) == 6


def test_previews_are_bounded():
    big = ItemWindow("w", [item("w", f"i{n}", "x" * 5000) for n in range(30)])
    result = reader(big).list_items(limit=25)
    assert all(len(p["truncated_content"]) == 1000 for p in result["items"])
    assert all(p["content_chars"] == 5000 for p in result["items"])
    sizes = [len(json.dumps(p, separators=(",", ":"))) for p in result["items"]]
    assert sum(sizes) <= 8000
    assert len(result["items"]) == 7
    short = reader(big).list_items(max_chars_per_item=10)
    assert short["items"][0]["truncated_content"] == "x" * 10
    capped = reader(big).list_items(max_chars_per_item=50_000, limit=1)
    assert len(capped["items"][0]["truncated_content"]) == 1000


def test_first_preview_always_fits():
    huge_id = ItemWindow("w", [item("w", "i" * 9000, "text"), item("w", "j", "text")])
    result = reader(huge_id).list_items()
    assert [p["item_id"] for p in result["items"]] == ["i" * 9000]


def test_search_is_literal_and_case_sensitive():
    ids = lambda result: [i["item_id"] for i in result["items"]]  # noqa: E731
    both = reader(W0, W1)
    assert ids(both.search_contents("request")) == ["a1b2c3d4", "e5", "f6"]
    assert ids(both.search_contents("request", recent_first=True, limit=2)) == ["f6", "e5"]
    assert ids(both.search_contents("Request")) == []
    assert ids(both.search_contents("re.uest")) == []
    assert ids(both.search_contents("request", window_id="w0")) == ["a1b2c3d4"]
    assert ids(both.search_contents("request", item_filter=ItemFilter(role="assistant"))) == []


def test_tree_search_ranks_summaries_first():
    archived = ItemWindow(
        "w0",
        [
            item("w0", "s0", "summary mentions parser", role="assistant", summary=True),
            item("w0", "r0", "raw parser work"),
        ],
    )
    current = ItemWindow("w1", [item("w1", "r1", "parser again")])
    ranked = reader(archived, current, summary_first=True)
    ids = lambda result: [i["item_id"] for i in result["items"]]  # noqa: E731
    assert ids(ranked.search_contents("parser")) == ["s0", "r0", "r1"]
    assert ids(ranked.search_contents("parser", recent_first=True)) == ["s0", "r1", "r0"]
    # Listings are not ranked.
    assert ids(ranked.list_items(recent_first=True)) == ["r1", "r0", "s0"]
    # Without ranking, summaries are ordinary items.
    assert ids(reader(archived, current).search_contents("parser", recent_first=True)) == [
        "r1",
        "r0",
        "s0",
    ]


def test_read_item_pages():
    window = ItemWindow("w", [item("w", "abc123", "0123456789" * 1000, tool_name="bash")])
    first = reader(window).read_item("w", "abc123")
    assert first == {
        "source": "pi-session",
        "item": {
            "window_id": "w",
            "item_id": "abc123",
            "role": "user",
            "tool_name": "bash",
            "content": ("0123456789" * 1000)[:8000],
            "total_chars": 10_000,
            "next_offset_chars": 8000,
        },
    }
    rest = reader(window).read_item("w", "abc123", offset_chars=8000)["item"]
    assert rest["content"] == ("0123456789" * 1000)[8000:]
    assert "next_offset_chars" not in rest
    small = reader(window).read_item("w", "abc123", offset_chars=5, limit_chars=3)["item"]
    assert (small["content"], small["next_offset_chars"]) == ("567", 8)
    past = reader(window).read_item("w", "abc123", offset_chars=99_999)["item"]
    assert (past["content"], past["total_chars"]) == ("", 10_000)


def test_read_item_ids():
    both = reader(W0, W1)
    assert both.read_item("w0", "a1b2c3d4")["item"]["content"] == "first request"
    assert both.read_item("w0", "c3d4")["item"]["item_id"] == "a1b2c3d4"
    assert both.read_item("w0", "nothing") == {"source": "pi-session", "item": None}
    assert both.read_item("w9", "a1b2c3d4") == {"source": "pi-session", "item": None}
    assert both.read_item("w1", "a1b2c3d4") == {"source": "pi-session", "item": None}


def test_exact_id_beats_an_earlier_suffix_match():
    window = ItemWindow("w", [item("w", "xab", "suffix"), item("w", "ab", "exact")])
    assert reader(window).read_item("w", "ab")["item"]["content"] == "exact"


@pytest.mark.parametrize("agent", ["/root/worker", "worker", "other"])
def test_other_agents_have_no_history(agent):
    both = reader(W0, W1)
    assert both.list_windows(agent_name=agent) == {"windows": []}
    assert both.list_items(agent_name=agent) == {"items": []}
    assert both.search_contents("request", agent_name=agent) == {"items": []}
    assert both.read_item("w0", "b2", agent_name=agent) == {"items": []}


@pytest.mark.parametrize("agent", [None, "", "/root"])
def test_current_agent_names(agent):
    assert reader(W0).list_windows(agent_name=agent)["source"] == "pi-session"
