"""History search runs through the database's blind index (candidates checked after
decryption) and answers exactly what the kit answers over the whole session in memory, as
the plaintext search did: a literal, case-sensitive substring, whatever characters the query
holds, even when a decoy holds every 3-gram of the query but not the query."""

import json

import pytest

from ctxmodes.windows import HistoryReader, WindowLog, run_history
from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.storage import RecordedItem
from ctxmodes_remote.service.workers import FairWorker

KEYS = KeyRing([b"s" * 32])
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}

CONTENTS = [
    "Alpha beta gamma",
    "alpha BETA Gamma",
    "100% done, 50%% left",
    "snake_case and snakeXcase",
    "back\\slash and back\\\\double",
    "regex .* and [abc] and (a|b)+ and ^$",
    "café naïve 日本語 🎉 emoji",
    "cafe naive",
    "CAFÉ",
    "line one\nline two\ttab",
    "quote ' and \" and ; DROP TABLE history_items; --",
    "percent%underscore_backslash\\",
    "abc bcd cde",
    "abcde",
    "e\u0301t\u00e9 composed and decomposed",
    "\U0001d4b3\U0001d4b4\U0001d4b5 astral 🎉🎊",
    # Text whose JSON holds the JSON of queries it does not hold: an escaped lone
    # surrogate, a backslash before an n, a control character.
    "lone \ud800 surrogate, literal \\n and \\u0001, control \x01 here",
]
QUERIES = [
    "alpha",
    "Alpha",
    "ALPHA",
    "beta",
    "BETA",
    "%",
    "%%",
    "50%",
    "_",
    "e_c",
    "snake_case",
    "\\",
    "\\\\",
    "k\\s",
    ".*",
    "[abc]",
    "(a|b)+",
    "^$",
    "é",
    "É",
    "café",
    "CAFÉ",
    "日本",
    "🎉",
    "\n",
    "line two",
    "'",
    '"',
    "DROP TABLE",
    "nowhere",
    "a",
    "e",
    "abcd",
    "bcd cde",
    "e\u0301",
    "\u00e9",
    "\u0301",
    "\U0001d4b4\U0001d4b5",
    "🎊",
    "ab",
    "% ",
    "\ud800",
    "ud800",
    "\\ud800",
    "\x01",
    "\\u0001",
    "\\n",
]


def recorded(count_per_window=3):
    """Items over three windows, roles and tools mixed, each content more than once."""
    items = []
    for index, content in enumerate(CONTENTS * 3):
        window = f"w{index // (len(CONTENTS))}"
        role = ("user", "assistant", "tool")[index % 3]
        tool = ("shell", "exec") if role == "tool" else (None, None)
        items.append(RecordedItem(window, f"i{index}", role, content, *tool))
    # Enough matches of one query that limits and newest-first ordering matter.
    items += [RecordedItem("w3", f"many{n}", "user", f"needle {n}") for n in range(40)]
    return items


def whole_session_answer(items, arguments):
    log = WindowLog()
    for item in items:
        if log.current is None or log.current.window_id != item.window_id:
            log.open_window(item.window_id)
        log.append_item(item.item_key, item.role, item.content, item.tool_name, item.tool_namespace)
    answer = dict(run_history(HistoryReader([log]), "search_contents", dict(arguments)))
    answer["source"] = "ctxmodes-serve"
    return answer


def search(engine, account, **arguments):
    answer = engine.alpha(
        account,
        "history",
        "search_contents",
        {**arguments, "context": CONTEXT},
        encrypted_arguments=False,
    )
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


@pytest.fixture
def filled(backend):
    account = create_token(backend, "alice").account
    items = recorded()
    ServiceEngine(backend, KEYS).record(account, "s1", "/root", items)
    # A fresh engine, as after a restart: nothing of the session in memory.
    return ServiceEngine(backend, KEYS), account, items


def test_every_query_matches_the_whole_session_answer(filled):
    engine, account, items = filled
    for query in QUERIES:
        expected = whole_session_answer(items, {"query": query})
        assert search(engine, account, query=query) == expected, query
    # The reference is not vacuous: case, escapes and metacharacters separate items.
    ids = {q: [i["item_id"] for i in search(engine, account, query=q)["items"]] for q in QUERIES}
    assert ids["Alpha"] != ids["alpha"]
    assert ids["Alpha"]
    assert ids["alpha"]
    assert ids["ALPHA"] == []
    assert ids["nowhere"] == []

    def copies(content):
        first = CONTENTS.index(content)
        return [f"i{first + n * len(CONTENTS)}" for n in range(3)]

    assert ids["%%"] == copies("100% done, 50%% left")
    assert ids["e_c"] == copies("snake_case and snakeXcase")
    assert ids["\\\\"] == copies("back\\slash and back\\\\double")
    assert ids["É"] == copies("CAFÉ")
    # A decoy holding every 3-gram of the query, not the query, is left out.
    assert ids["abcd"] == copies("abcde")
    assert ids["\u00e9"] != ids["e\u0301"]


def test_filters_limits_and_order_match_the_whole_session_answer(filled):
    engine, account, items = filled
    cases = [
        {"query": "needle", "limit": 100},
        {"query": "needle", "limit": 100, "recent_first": True},
        {"query": "needle", "limit": 3, "recent_first": True},
        {"query": "e", "limit": 25},
        {"query": "e", "role": "tool", "tool_name": "shell", "recent_first": True},
        {"query": "a", "window_id": "w1", "role": "assistant"},
        {"query": "a", "window_id": "missing"},
        {"query": "a", "tool_namespace": "exec", "limit": 0},
    ]
    for arguments in cases:
        assert search(engine, account, **arguments) == whole_session_answer(items, arguments)
    newest = search(engine, account, query="needle", recent_first=True, limit=2)["items"]
    assert [item["item_id"] for item in newest] == ["many39", "many38"]


def test_a_search_after_a_restart_does_not_read_the_session(filled, monkeypatch):
    engine, account, _items = filled

    def refuse(*_args, **_kwargs):
        raise AssertionError("the whole history was read")

    monkeypatch.setattr(engine._storage, "history_items", refuse)
    found = search(engine, account, query="needle 7")["items"]
    assert [item["item_id"] for item in found] == ["many7"]


def test_candidates_fetched_page_by_page_give_the_same_answers(filled, monkeypatch):
    from ctxmodes_remote.service import sealed_storage

    engine, account, items = filled
    # Pages of two candidates, then of four: every search pages through the blind index's
    # candidates, in pages that grow.
    monkeypatch.setattr(sealed_storage, "SEARCH_PAGE", 2)
    monkeypatch.setattr(type(engine._storage.backend), "search_page_max", 4)
    for query in QUERIES:
        for extra in ({}, {"recent_first": True}, {"limit": 3, "recent_first": True}):
            arguments = {"query": query, **extra}
            assert search(engine, account, **arguments) == whole_session_answer(items, arguments)


def test_candidates_checked_in_a_helper_process_give_the_same_answers(backend, monkeypatch):
    from ctxmodes_remote.service import candidates

    account = create_token(backend, "alice").account
    items = recorded()
    ServiceEngine(backend, KEYS).record(account, "s1", "/root", items)
    # Every page goes to the helper process, and the search runs on a worker thread, as the
    # service runs it (serving other calls while the helper checks).
    monkeypatch.setattr(candidates, "PROCESS_MIN_CANDIDATES", 1)
    engine = ServiceEngine(backend, KEYS, search_processes=1)
    worker = FairWorker("test-worker")
    try:
        for query in QUERIES:
            for extra in ({}, {"recent_first": True}, {"limit": 3, "role": "user"}):
                arguments = {"query": query, **extra}
                answer = worker.submit(
                    account.account_id, lambda a=arguments: search(engine, account, **a)
                )
                assert answer.result(timeout=60) == whole_session_answer(items, arguments)
    finally:
        worker.close()
        engine.close()


def _paged(monkeypatch, storage):
    from ctxmodes_remote.service import sealed_storage

    monkeypatch.setattr(sealed_storage, "SEARCH_PAGE", 2)
    monkeypatch.setattr(type(storage), "search_page_max", 4)


def test_sqlite_reads_later_pages_while_its_worker_serves_other_accounts(tmp_path, monkeypatch):
    """A search's pages after the first are read on a connection of their own, and the
    worker thread runs another account's call meanwhile."""
    import threading

    from ctxmodes_remote.service import sqlite_storage

    storage = sqlite_storage.SqliteStorage.in_directory(tmp_path)
    account = create_token(storage, "alice").account
    items = recorded()
    ServiceEngine(storage, KEYS).record(account, "s1", "/root", items)
    engine = ServiceEngine(storage, KEYS)
    _paged(monkeypatch, storage)
    other_ran = threading.Event()
    fetching = sqlite_storage._Reader._fetch
    pages: list[str] = []

    def fetch(reader, query, params):
        pages.append(query)
        # Answers only once the worker has run Bob's call: it would never, were the
        # worker waiting here itself.
        assert other_ran.wait(10), "the worker served nobody while the page was read"
        return fetching(reader, query, params)

    monkeypatch.setattr(sqlite_storage._Reader, "_fetch", fetch)
    worker = FairWorker("test-worker")
    try:
        arguments = {"query": "needle", "limit": 100}
        answer = worker.submit(account.account_id, lambda: search(engine, account, **arguments))
        worker.submit("bob", other_ran.set).result(timeout=10)
        assert answer.result(timeout=30) == whole_session_answer(items, arguments)
    finally:
        worker.close()
        engine.close()
    assert len(pages) > 5


def test_sqlite_search_sees_the_writes_of_the_open_group(tmp_path, monkeypatch):
    """While commits are grouped, a search run after a write (its answer not yet sent)
    finds what that write recorded, on every page."""
    from ctxmodes_remote.service.sqlite_storage import SqliteStorage

    storage = SqliteStorage.in_directory(tmp_path)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS)
    assert engine.group_commits()
    _paged(monkeypatch, storage)
    items = recorded()
    engine.record(account, "s1", "/root", items)
    assert engine.writes_pending()
    try:
        for arguments in ({"query": "needle", "limit": 100}, {"query": "e", "limit": 25}):
            assert search(engine, account, **arguments) == whole_session_answer(items, arguments)
        engine.commit_writes()
    finally:
        engine.close()
