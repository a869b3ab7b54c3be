"""``/tree`` as Pi's navigator: folding branch segments, jumping between segment starts, and
editing labels, driven by keys."""

from __future__ import annotations

import orjson
from support.agents import make_agent
from support.terminal import ENTER, ESC, run_terminal

from ctxmodes import NavigationRequest
from ctxmodes.tui.navigator import FOLDED

CTRL_LEFT = "\x1b[1;5D"
CTRL_RIGHT = "\x1b[1;5C"
BACKSPACE = "\x7f"
CTRL_K = "\x0b"


def entries(agent) -> list[dict]:
    return [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]


def message_ids(agent) -> dict[str, str]:
    """Entry id by the text of its message."""
    found = {}
    for entry in entries(agent):
        if entry["type"] == "message":
            content = entry["message"]["content"]
            text = content if isinstance(content, str) else content[0]["text"]
            found[text] = entry["id"]
    return found


async def forked_session(t) -> dict[str, str]:
    """first → one, then two branches under it: second → two and third → three."""
    await t.type("first" + ENTER)
    await t.idle()
    await t.type("second" + ENTER)
    await t.idle()
    t.agent.navigate(NavigationRequest(message_ids(t.agent)["one"]))
    await t.type("third" + ENTER)
    await t.printed("three")
    await t.idle()
    return message_ids(t.agent)


async def open_tree_at(t, entry_id: str) -> None:
    await t.type("/tree" + ENTER)
    await t.until(lambda: t.session.picker is not None, "the tree")
    keys = [row.key for row in t.session.picker.rows()]
    t.session.picker.selected = keys.index(entry_id)


def shown(t) -> list[str]:
    return [row.key for row in t.session.picker.rows() if row.key is not None]


def selected(t) -> str:
    picker = t.session.picker
    return picker.rows()[picker.selected].key


def row_text(t, entry_id: str) -> str:
    row = next(row for row in t.session.picker.rows() if row.key == entry_id)
    return "".join(text for _, text in row.fragments)


def test_ctrl_arrows_fold_and_unfold_a_branch_segment(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        ids = await forked_session(t)
        await open_tree_at(t, ids["second"])
        seen["before"] = shown(t)
        await t.type(CTRL_LEFT)
        await t.until(lambda: ids["two"] not in shown(t), "the segment to fold")
        seen["folded"] = shown(t)
        seen["folded row"] = row_text(t, ids["second"])
        seen["still selected"] = selected(t)
        await t.type(CTRL_RIGHT)
        await t.until(lambda: ids["two"] in shown(t), "the segment to unfold")
        seen["ids"] = ids

    run_terminal(agent, scenario)
    ids = seen["ids"]
    assert ids["two"] in seen["before"]
    assert seen["folded"] == [key for key in seen["before"] if key != ids["two"]]
    assert FOLDED in seen["folded row"]
    assert seen["still selected"] == ids["second"]


def test_ctrl_arrows_jump_between_segment_starts_where_nothing_folds(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        ids = await forked_session(t)
        await open_tree_at(t, ids["three"])  # a leaf: nothing to fold
        await t.type(CTRL_LEFT)
        await t.until(lambda: selected(t) == ids["third"], "the segment's start")
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the tree to close")
        await open_tree_at(t, ids["one"])  # the branch point: not a segment start
        await t.type(CTRL_RIGHT)
        await t.until(lambda: selected(t) != ids["one"], "a move down")
        seen["down"] = selected(t)
        seen["all shown"] = len(shown(t))
        seen["ids"] = ids

    run_terminal(agent, scenario)
    ids = seen["ids"]
    # Down from the branch point goes to the start of its first branch listed: the active
    # one ("third"), which the tree lists before "second" as Pi's does.
    assert seen["down"] == ids["third"]
    assert seen["all shown"] == 6


def test_shift_l_sets_and_clears_a_label_and_returns_to_the_tree(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    seen: dict[str, object] = {}

    async def scenario(t):
        ids = await forked_session(t)
        seen["ids"] = ids
        await open_tree_at(t, ids["second"])
        await t.type("L")
        await t.until(lambda: t.session.picker.free_text, "the label editor")
        await t.type("plan b" + ENTER)
        await t.until(
            lambda: t.session.picker is not None and not t.session.picker.free_text,
            "the tree again",
        )
        seen["selected"] = selected(t)
        seen["row"] = row_text(t, ids["second"])
        await t.type("L")
        await t.until(lambda: t.session.picker.free_text, "the label editor")
        seen["prefilled"] = t.session.picker.query
        # The cursor starts before the label, as in Pi's label field: Ctrl+K takes it all.
        await t.type(CTRL_K + ENTER)
        await t.until(
            lambda: (
                t.session.picker is not None
                and not t.session.picker.free_text
                and "[plan b]" not in row_text(t, ids["second"])
            ),
            "the label gone",
        )

    run_terminal(agent, scenario)
    ids = seen["ids"]
    assert seen["selected"] == ids["second"]
    assert "[plan b]" in seen["row"]
    assert seen["prefilled"] == "plan b"
    labels = [entry for entry in entries(agent) if entry["type"] == "label"]
    assert [(e["targetId"], e.get("label")) for e in labels] == [
        (ids["second"], "plan b"),
        (ids["second"], None),
    ]


def _archived_branch(manager) -> None:
    """start → "old work" (a side branch Tree archived, summarized beside it) and, from the
    same reply, the summary, then "new work" on the active path."""
    start = manager.append_message({"role": "user", "content": "start", "timestamp": 1})
    old = manager.append_message({"role": "user", "content": "old work", "timestamp": 2})
    summary = manager.branch_with_summary(start, "what the old work was")
    manager.append_message({"role": "user", "content": "new work", "timestamp": 3})
    data = {"archivedLeafId": old, "branchBaseId": start, "summaryEntryId": summary}
    manager.append_custom_entry("codex-context-tree-archive", data)


def test_an_archived_window_s_heading_shows_while_an_entry_of_its_branch_does(tmp_path):
    agent = make_agent(tmp_path, [])
    _archived_branch(agent.session_manager)
    seen: dict[str, list[str]] = {}

    def headings(t) -> list[str]:
        return [row.text for row in t.session.picker.rows() if row.key is None]

    async def scenario(t):
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        seen["all"] = headings(t)
        await t.type("old")
        seen["old"] = headings(t)
        await t.type(BACKSPACE * 3 + "new")
        seen["new"] = headings(t)
        await t.type(BACKSPACE * 3 + "work")
        seen["work"] = headings(t)

    run_terminal(agent, scenario)
    assert len(seen["all"]) == 1
    assert seen["all"][0].startswith("archived window")
    assert seen["old"] == seen["work"] == seen["all"]
    assert seen["new"] == []


def test_a_paste_reaches_neither_the_search_nor_the_editor_behind_the_tree(tmp_path):
    agent = make_agent(tmp_path, [{"text": "one"}])
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/tree" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the tree")
        await t.type("on\x1b[200~pasted\x1b[201~e")
        seen["query"] = t.session.picker.query
        await t.type(ESC)
        await t.until(lambda: not t.session.picker.query, "the search to empty")
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the tree to close")
        seen["editor"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen == {"query": "one", "editor": ""}
