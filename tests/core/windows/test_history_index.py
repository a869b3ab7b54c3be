import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmodes.session.models import ImageContent, TextContent, ThinkingContent, ToolCall
from ctxmodes.windows.history import ItemFilter
from ctxmodes.windows.history_index import BranchHistoryIndex
from ctxmodes.windows.history_items import item_fields
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import reminder_marker, window_marker
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE

W0 = WindowIdentity.first("window-0")
W1 = W0.advance("window-1")


def items_of(index):
    return {
        window.window_id: [
            (i.item_id, i.role, i.content, i.tool_name, i.tool_namespace)
            for i in window.select(ItemFilter())
        ]
        for window in index.windows()
    }


def test_reference_local_listing(branch):
    branch.marker(window_marker(W0), entry_id="window-entry")
    branch.user("recover me", entry_id="user-entry")
    branch.custom(
        NOTE_CUSTOM_TYPE,
        {"protocol": 1, "action": "write", "path": "p", "text": "t", "timestamp": 1},
    )
    index = BranchHistoryIndex.from_branch(branch.entries)
    result = HistoryReader([index]).list_items(window_id="window-0")
    assert result == {
        "source": "pi-session",
        "items": [
            {
                "window_id": "window-0",
                "item_id": "user-entry",
                "role": "user",
                "truncated_content": "recover me",
                "content_chars": 10,
            }
        ],
    }


def test_windows_follow_window_markers_only(branch):
    branch.user("before management")
    branch.marker(window_marker(W0))
    branch.user("a")
    branch.marker(reminder_marker(W0, 100))
    branch.assistant("b")
    branch.marker(window_marker(W1))
    branch.user("c")
    branch.marker(window_marker(W1))  # the same window again: continues it
    branch.assistant("d")
    index = BranchHistoryIndex.from_branch(branch.entries)
    assert [(w.window_id, w.item_count) for w in index.windows()] == [
        ("window-0", 2),
        ("window-1", 2),
    ]
    assert index.current_window.window_id == "window-1"


def test_malformed_marker_does_not_break_history(branch):
    branch.marker(window_marker(W0))
    branch.raw_marker({"protocol": 9})
    branch.user("still here")
    index = BranchHistoryIndex.from_branch(branch.entries)
    assert [w.item_count for w in index.windows()] == [1]


def test_roles_and_rendering(branch):
    branch.marker(window_marker(W0))
    branch.user("plain", entry_id="u")
    branch.assistant(
        ThinkingContent(thinking="hmm"),
        "answer",
        ToolCall(id="c1", name="bash", arguments={"command": "ls"}),
        entry_id="a",
    )
    branch.tool_result("bash", "file.txt", entry_id="t")
    branch.bash("pwd", "/tmp", entry_id="b")
    branch.custom_message("other-extension", "extension note", entry_id="c")
    branch.custom_message("other-extension", [TextContent(text="block")], entry_id="skipped")
    index = BranchHistoryIndex.from_branch(branch.entries)
    items = items_of(index)["window-0"]
    assert items[0] == ("u", "user", "plain", None, None)
    assert items[1] == (
        "a",
        "assistant",
        'hmm\nanswer\n{"tool":"bash","arguments":{"command":"ls"}}',
        "bash",
        None,
    )
    assert items[2] == ("t", "tool", "file.txt", "bash", None)
    bash_id, bash_role, bash_content, *_ = items[3]
    assert (bash_id, bash_role) == ("b", "bashExecution")
    assert json.loads(bash_content)["command"] == "pwd"
    assert bash_content == (
        '{"role":"bashExecution","command":"pwd","output":"/tmp","exitCode":0,'
        '"cancelled":false,"truncated":false,"timestamp":1}'
    )
    assert items[4] == ("c", "developer", "extension note", None, None)
    assert len(items) == 5


def test_images_render_as_placeholders(branch):
    from ctxmodes.session.models import MessageEntry, UserMessage

    entry = MessageEntry(
        id="img",
        parent_id=None,
        timestamp="t",
        message=UserMessage(
            content=[TextContent(text="look"), ImageContent(data="AAAA", mime_type="image/png")],
            timestamp=1,
        ),
    )
    assert item_fields(entry).content == "look\n[image image/png]"


def test_routed_and_namespaced_calls_report_the_operation(branch):
    routed = branch.tool_call(
        "notes", {"action": "write_file", "path": "p", "text": "t"}, namespace="notes"
    )
    flat = branch.tool_call("notes", {"action": "write_file", "path": "p", "text": "t"})
    namespaced = branch.tool_call("write_file", {"path": "p"}, namespace="notes")
    assert (item_fields(routed).tool_name, item_fields(routed).tool_namespace) == (
        "write_file",
        "notes",
    )
    assert (item_fields(flat).tool_name, item_fields(flat).tool_namespace) == ("notes", None)
    assert (item_fields(namespaced).tool_name, item_fields(namespaced).tool_namespace) == (
        "write_file",
        "notes",
    )


def test_unknown_messages_render_from_their_json():
    from ctxmodes.session.models import entry_from_json

    entry = entry_from_json(
        {
            "type": "message",
            "id": "s",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "system", "content": {"odd": True}},
        }
    )
    fields = item_fields(entry)
    assert (fields.role, fields.content) == ("system", '{"role":"system","content":{"odd":true}}')
    odd_blocks = entry_from_json(
        {
            "type": "message",
            "id": "o",
            "parentId": None,
            "timestamp": "t",
            "message": {
                "role": "user",
                "content": [{"type": "video", "url": "u"}, {"type": "note", "text": "txt"}, 5],
                "timestamp": 1,
            },
        }
    )
    assert item_fields(odd_blocks).content == '{"type":"video","url":"u"}\ntxt\n5'


def test_reader_over_the_index(branch):
    branch.marker(window_marker(W0))
    branch.user("find the parser bug", entry_id="u0")
    branch.assistant("looking at parser.py", entry_id="a0")
    branch.marker(window_marker(W1))
    branch.user("next task", entry_id="u1")
    reader = HistoryReader([BranchHistoryIndex.from_branch(branch.entries)])
    found = reader.search_contents("parser", recent_first=True)
    assert [i["item_id"] for i in found["items"]] == ["a0", "u0"]
    assert reader.read_item("window-0", "a0")["item"]["content"] == "looking at parser.py"
    assert reader.read_item("window-1", "a0") == {"source": "pi-session", "item": None}
    assert reader.list_windows()["windows"] == [
        {"window_id": "window-0", "item_count": 2},
        {"window_id": "window-1", "item_count": 1},
    ]


def test_recent_user_items(branch):
    branch.marker(window_marker(W0))
    for n in range(7):
        branch.user(f"request {n}", entry_id=f"u{n}")
        branch.assistant("ok")
    window = BranchHistoryIndex.from_branch(branch.entries).current_window
    assert window.recent_item_ids("user", 5) == ["u6", "u5", "u4", "u3", "u2"]


steps = st.lists(
    st.one_of(
        st.tuples(st.just("marker"), st.sampled_from(["w0", "w1", "w2"])),
        st.tuples(st.just("user"), st.text(alphabet="ab", max_size=4)),
        st.tuples(st.just("assistant"), st.text(alphabet="ab", max_size=4)),
    ),
    max_size=40,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=steps, query=st.text(alphabet="ab", min_size=1, max_size=2))
def test_index_agrees_with_a_plain_model(new_branch, script, query):
    branch = new_branch()
    expected: list[tuple[str, list[tuple[str, str, str]]]] = []
    for kind, value in script:
        if kind == "marker":
            branch.marker(window_marker(WindowIdentity.first(value)))
            if not expected or expected[-1][0] != value:
                expected.append((value, []))
            continue
        entry = branch.user(value) if kind == "user" else branch.assistant(value)
        if expected:
            expected[-1][1].append((entry.id, kind, value))
    index = BranchHistoryIndex()
    for entry in branch.entries:
        index.observe(entry)
    assert [
        (window.window_id, [(i.item_id, i.role, i.content) for i in window.select(ItemFilter())])
        for window in index.windows()
    ] == expected
    flat = [(w, i) for w, items in expected for i, _, text in items if query in text]
    reader = HistoryReader([index])
    for recent_first in (False, True):
        found = reader.search_contents(query, limit=25, recent_first=recent_first)["items"]
        want = flat[::-1] if recent_first else flat
        assert [(i["window_id"], i["item_id"]) for i in found] == want[:25]
