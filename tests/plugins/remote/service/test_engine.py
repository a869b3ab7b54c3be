"""The engine over shared storage: several service processes on one database stay coherent
(reads see every process's writes at once, in storage order)."""

import asyncio
import json
import threading

import pytest

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import (
    LOOP_NOTES_MAX_BYTES,
    ServiceEngine,
    UnknownOperationError,
)
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.storage import RecordedItem, open_storage

KEYS = KeyRing([b"e" * 32])
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}


def engines(tmp_path, count=2):
    path = tmp_path / "shared.sqlite3"
    first = SqliteStorage(path)
    account = create_token(first, "alice").account
    return account, [ServiceEngine(first, KEYS)] + [
        ServiceEngine(SqliteStorage(path), KEYS) for _ in range(count - 1)
    ]


def call(engine, account, family, operation, **arguments):
    answer = engine.alpha(
        account, family, operation, {**arguments, "context": CONTEXT}, encrypted_arguments=False
    )
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


def test_a_write_through_one_process_is_read_through_another_at_once(tmp_path):
    account, (a, b) = engines(tmp_path)
    assert call(b, account, "notes", "read_file", path="n.md") == {
        "source": "ctxmodes-serve",
        "file": None,
    }
    call(a, account, "notes", "write_file", path="n.md", text="one")
    assert call(b, account, "notes", "read_file", path="n.md")["file"]["content"] == "one"


def test_interleaved_appends_keep_storage_order_everywhere(tmp_path):
    account, (a, b) = engines(tmp_path)
    call(a, account, "notes", "append_to_file", path="log.md", text="a1 ")
    call(b, account, "notes", "append_to_file", path="log.md", text="b1 ")
    call(a, account, "notes", "append_to_file", path="log.md", text="a2 ")
    for engine in (a, b):
        assert call(engine, account, "notes", "read_file", path="log.md")["file"]["content"] == (
            "a1 b1 a2 "
        )
    # Other sessions' writes in between do not disturb a session's own sequence.
    other = {"session_id": "s2", "current_agent_name": "/root"}
    a.alpha(
        account,
        "notes",
        "write_file",
        {"path": "x", "text": "t", "context": other},
        encrypted_arguments=False,
    )
    call(a, account, "notes", "append_to_file", path="log.md", text="a3")
    assert call(b, account, "notes", "read_file", path="log.md")["file"]["content"] == (
        "a1 b1 a2 a3"
    )


def test_history_recorded_by_one_process_is_searchable_in_another(tmp_path):
    account, (a, b) = engines(tmp_path)
    assert call(b, account, "history", "list_windows")["windows"] == []
    a.record(account, "s1", "/root", [RecordedItem("w0", "m1", "user", "find the marker")])
    found = call(b, account, "history", "search_contents", query="marker")
    assert [(i["window_id"], i["item_id"]) for i in found["items"]] == [("w0", "m1")]


def test_agents_have_their_own_history_and_share_notes(tmp_path):
    account, (engine,) = engines(tmp_path, count=1)
    engine.record(account, "s1", "/root", [RecordedItem("w0", "r1", "user", "root task")])
    engine.record(account, "s1", "/root/worker", [RecordedItem("w9", "k1", "user", "child task")])
    worker = {"session_id": "s1", "current_agent_name": "/root/worker"}

    def as_worker(family, operation, **arguments):
        answer = engine.alpha(
            account, family, operation, {**arguments, "context": worker}, encrypted_arguments=False
        )
        return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))

    assert [w["window_id"] for w in as_worker("history", "list_windows")["windows"]] == ["w9"]
    # Absolute and relative agent names, as Codex specifies them.
    assert [
        w["window_id"] for w in as_worker("history", "list_windows", agent_name="/root")["windows"]
    ] == ["w0"]
    relative = call(engine, account, "history", "list_windows", agent_name="worker")
    assert [w["window_id"] for w in relative["windows"]] == ["w9"]
    assert call(engine, account, "history", "list_windows", agent_name="../x")["windows"] == []
    as_worker("notes", "write_file", path="plan.md", text="child plan")
    shared = call(engine, account, "notes", "read_file", path="/root/worker/notes/plan.md")
    assert shared["file"]["content"] == "child plan"


@pytest.fixture(params=["sqlite", "postgres"])
def shared_database(request, tmp_path):
    """A factory of storage handles on one database, as separate processes would hold."""
    opened = []
    if request.param == "sqlite":

        def make():
            opened.append(SqliteStorage(tmp_path / "shared.sqlite3"))
            return opened[-1]
    else:
        url = request.getfixturevalue("postgres_url")

        def make():
            opened.append(open_storage(tmp_path, url))
            return opened[-1]

    yield make
    for storage in opened:
        storage.close()


def test_the_note_size_limit_is_exact_under_concurrent_appends_from_two_processes(
    shared_database,
):
    first = shared_database()
    account = create_token(first, "alice").account
    a, b = ServiceEngine(first, KEYS), ServiceEngine(shared_database(), KEYS)
    call(a, account, "notes", "write_file", path="big.md", text="x" * 999_000)
    chunk = "y" * 100
    answers = []

    def append_from(engine):
        for _ in range(10):
            answers.append(
                call(engine, account, "notes", "append_to_file", path="big.md", text=chunk)
            )

    threads = [threading.Thread(target=append_from, args=(engine,)) for engine in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    accepted = [answer for answer in answers if "file" in answer]
    refused = [answer for answer in answers if "error" in answer]
    assert len(accepted) == 10
    assert len(refused) == 10
    assert all("1,000,000-byte limit" in answer["error"] for answer in refused)
    for engine in (a, b, ServiceEngine(shared_database(), KEYS)):
        read = call(engine, account, "notes", "read_file", path="big.md")["file"]
        assert read["bytes"] == 1_000_000
        assert read["content"] == "x" * 999_000 + chunk * 10


def test_a_write_is_judged_against_what_other_processes_wrote_since(shared_database):
    first = shared_database()
    account = create_token(first, "alice").account
    a, b = ServiceEngine(first, KEYS), ServiceEngine(shared_database(), KEYS)
    call(a, account, "notes", "write_file", path="n.md", text="x" * 999_950)
    assert call(b, account, "notes", "read_file", path="n.md")["file"]["bytes"] == 999_950
    # Another process shrinks the note: an append that the stale size would refuse fits.
    call(a, account, "notes", "write_file", path="n.md", text="small")
    appended = call(b, account, "notes", "append_to_file", path="n.md", text="y" * 100)
    assert appended["file"]["bytes"] == 105
    # And the other way round: an append that fits the stale size is refused.
    call(b, account, "notes", "write_file", path="n.md", text="")
    call(a, account, "notes", "write_file", path="n.md", text="z" * 999_990)
    refused = call(b, account, "notes", "append_to_file", path="n.md", text="y" * 100)
    assert "1,000,000-byte limit" in refused["error"]
    assert call(a, account, "notes", "read_file", path="n.md")["file"]["bytes"] == 999_990


def test_sessions_are_dealt_to_the_workers_evenly_and_keep_theirs(postgres_url, tmp_path):
    storage = open_storage(tmp_path, postgres_url, connections=3)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS)
    try:
        assert engine.workers == 3
        placed = [engine.worker_of(account, f"s{n}") for n in range(4 * engine.workers)]
        assert sorted(placed) == sorted(list(range(engine.workers)) * 4)
        assert [engine.worker_of(account, f"s{n}") for n in range(4 * engine.workers)] == placed
    finally:
        engine.close()


# -- note calls on the event loop (Postgres) ---------------------------------------------------

LOOP_CONTEXT = {"session_id": "s2", "current_agent_name": "/root"}


class Worker:
    """An ``on_worker`` for :meth:`ServiceEngine.alpha_on_loop`: runs each function on a thread
    and counts them."""

    def __init__(self):
        self.calls = 0

    async def __call__(self, function):
        self.calls += 1
        return await asyncio.to_thread(function)


async def on_loop(engine, account, operation, context=CONTEXT, worker=None, **arguments):
    answer = await engine.alpha_on_loop(
        account,
        "notes",
        operation,
        {**arguments, "context": context},
        encrypted_arguments=False,
        on_worker=worker or Worker(),
    )
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


def test_note_calls_on_the_event_loop_answer_as_on_a_worker(postgres_url, tmp_path):
    storage = open_storage(tmp_path, postgres_url)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS, now_ms=lambda: 1_700_000_000_000)
    calls = [
        ("write_file", {"path": "a.md", "text": "one\ntwo"}),
        ("append_to_file", {"path": "a.md", "text": "\nthree"}),
        ("read_file", {"path": "a.md", "start_line": 2}),
        ("write_file", {"path": "../x.md", "text": "outside"}),
        ("append_to_file", {"path": "big.md", "text": "x" * 1_000_001}),
        ("read_file", {"path": "missing.md"}),
        ("read_file", {}),
        ("write_file", {"path": "/root/worker/notes/abs.md", "text": "abs"}),
        ("read_file", {"path": "/root/worker/notes/abs.md"}),
        ("search_contents", {"query": "t"}),
        ("search_contents", {"query": "abs", "path_prefix": "/root/worker/notes/"}),
        ("search_contents", {}),
        ("list_files_by_prefix", {"file_order_by": "updated_at"}),
    ]
    assert all(engine.runs_on_loop("notes", operation) for operation, _ in calls)
    assert not engine.runs_on_loop("notes", "thread_hint")
    assert not engine.runs_on_loop("history", "read_item")
    worker = Worker()

    async def looped():
        try:
            return [
                await on_loop(engine, account, operation, LOOP_CONTEXT, worker, **arguments)
                for operation, arguments in calls
            ]
        finally:
            await engine.close_loop_storage()

    try:
        on_worker = [call(engine, account, "notes", operation, **args) for operation, args in calls]
        assert asyncio.run(looped()) == on_worker
        assert [answer.get("error", "") != "" for answer in on_worker] == [
            False, False, False, True, True, False, True, False, False, False, False, True, False,
        ]  # fmt: skip
        assert on_worker[-4]["files"][0]["matches"] == [
            {"line_number": 2, "line": "two"},
            {"line_number": 3, "line": "three"},
        ]
        assert worker.calls == 0  # small notes: every call answered on the loop
    finally:
        engine.close()


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_reads_searches_and_listings_of_big_notes_go_to_the_sessions_worker(
    database, request, tmp_path
):
    """Where a call's cost grows with the session's notes (a search, a listing) or with the
    note it reads, the loop answers it only up to a bound; past it the same answer comes from
    the worker."""
    url = request.getfixturevalue("postgres_url") if database == "postgres" else None
    storage = open_storage(tmp_path, url)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS, now_ms=lambda: 1_700_000_000_000)
    line = "a line of notes to search\n"
    size = LOOP_NOTES_MAX_BYTES // 2
    reads = [
        ("search_contents", {"query": "notes to"}),
        ("list_files_by_prefix", {}),
        ("read_file", {"path": "n0.md", "start_line": -1}),
    ]

    async def offloads(calls):
        """How many of ``calls`` went to the worker, and their answers (the same as the
        worker path's)."""
        worker = Worker()
        answers = [
            await on_loop(engine, account, operation, CONTEXT, worker, **arguments)
            for operation, arguments in calls
        ]
        assert answers == [call(engine, account, "notes", op, **args) for op, args in calls]
        return worker.calls, answers

    async def main():
        as_notes_grow, as_a_note_grows = [], []
        try:
            for number in range(3):
                text = line * (size // len(line))
                call(engine, account, "notes", "write_file", path=f"n{number}.md", text=text)
                engine.commit_writes()
                handed, answers = await offloads(reads)
                assert answers[0]["files"][number]["matches"][0]["line"] == line[:-1]
                as_notes_grow.append(handed)
            for text in ("x" * (LOOP_NOTES_MAX_BYTES - 1), "y", "z"):
                call(engine, account, "notes", "append_to_file", path="big.md", text=text)
                engine.commit_writes()
                handed, _ = await offloads([("read_file", {"path": "big.md"})])
                as_a_note_grows.append(handed)
        finally:
            await engine.close_loop_storage()
        return as_notes_grow, as_a_note_grows

    try:
        as_notes_grow, as_a_note_grows = asyncio.run(main())
        # Half the bound, then the whole of it (still on the loop), then past it: the
        # search and the listing go to the worker, the read of one small note does not.
        assert as_notes_grow == [0, 0, 2]
        # A read goes to the worker once the note it reads passes the bound.
        assert as_a_note_grows == [0, 0, 1]
    finally:
        engine.close()


@pytest.mark.slow  # starts a helper process
@pytest.mark.parametrize("database", ["sqlite", "postgres"])
def test_big_notes_searches_are_done_in_a_helper_process_with_the_same_answers(
    database, request, tmp_path, monkeypatch
):
    """On a worker, a notes search through enough characters goes to a helper process (its
    going through the notes would hold the interpreter every other call shares); the answer
    is the one the search gives in the process."""
    from concurrent.futures import ProcessPoolExecutor

    from ctxmodes_remote.service import candidates
    from ctxmodes_remote.service.workers import FairWorker

    url = request.getfixturevalue("postgres_url") if database == "postgres" else None
    storage = open_storage(tmp_path, url)
    account = create_token(storage, "alice").account
    here = ServiceEngine(storage, KEYS, now_ms=lambda: 1_700_000_000_000)
    helped = ServiceEngine(storage, KEYS, search_processes=1)
    notes = {
        "a.md": "alpha\nbeta alpha\n" * 20,
        "b/c.md": "café 🎉 alpha\n",
        "d.md": "nothing here",
        "e.md": "x" * 10 + "\nalpha, \ud800 and all",
    }
    for path, text in notes.items():
        call(here, account, "notes", "write_file", path=path, text=text)
    here.commit_writes()
    monkeypatch.setattr(candidates, "PROCESS_MIN_CHARACTERS", 100)
    submitted = []
    submit = ProcessPoolExecutor.submit

    def spied(pool, function, *arguments, **keywords):
        submitted.append(function.__name__)
        return submit(pool, function, *arguments, **keywords)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", spied)
    searches = [
        {"query": "alpha"},
        {"query": "alpha", "max_files": 2},
        {"query": "alpha", "max_matches_per_file": 3, "recent_file_first": True},
        {"query": "nowhere"},
        # Only the small note is searched: not worth a helper.
        {"query": "alpha", "path_prefix": "b"},
    ]
    worker = FairWorker("test-worker")
    try:
        for arguments in searches:
            expected = call(here, account, "notes", "search_contents", **arguments)
            answer = worker.submit(
                account.account_id,
                lambda a=arguments: call(helped, account, "notes", "search_contents", **a),
            ).result(timeout=60)
            assert answer == expected
        assert len(call(here, account, "notes", "search_contents", query="alpha")["files"]) == 3
        assert submitted == ["matching_texts"] * 4
        # Off a worker thread nothing can run while a helper searches: the search is here.
        call(helped, account, "notes", "search_contents", query="alpha")
        assert len(submitted) == 4
    finally:
        worker.close()
        helped.close()
        here.close()


@pytest.mark.slow  # starts helper processes twice
def test_searches_go_on_after_a_helper_process_is_killed(tmp_path, monkeypatch):
    """A process pool that lost a process takes no more work; the checker replaces it, and
    the search it was given is done there, with the answer it gives in the process."""
    import multiprocessing
    import os
    import signal

    from ctxmodes_remote.service import candidates
    from ctxmodes_remote.service.workers import FairWorker

    monkeypatch.setattr(candidates, "PROCESS_MIN_CHARACTERS", 1)
    monkeypatch.setattr(candidates, "PROCESS_MIN_CANDIDATES", 1)
    storage = open_storage(tmp_path)
    account = create_token(storage, "alice").account
    here = ServiceEngine(storage, KEYS)
    call(here, account, "notes", "write_file", path="a.md", text="a needle\nnone\n")
    here.commit_writes()
    items = [RecordedItem("w0", f"i{n}", "user", f"needle {n}") for n in range(3)]
    here.record(account, "s1", "/root", items)
    searches = [("notes", {"query": "needle"}), ("history", {"query": "needle"})]
    expected = [call(here, account, family, "search_contents", **a) for family, a in searches]
    before = set(multiprocessing.active_children())
    helped = ServiceEngine(storage, KEYS, search_processes=1)
    worker = FairWorker("test-worker")

    def answers():
        return [
            worker.submit(
                account.account_id,
                lambda f=family, a=arguments: call(helped, account, f, "search_contents", **a),
            ).result(timeout=60)
            for family, arguments in searches
        ]

    try:
        assert answers() == expected
        helpers = set(multiprocessing.active_children()) - before
        assert helpers
        for helper in helpers:
            os.kill(helper.pid, signal.SIGKILL)
            helper.join(10)
        assert answers() == expected
        assert answers() == expected
    finally:
        worker.close()
        helped.close()
        here.close()


def test_sqlite_reads_notes_on_the_event_loop_and_writes_them_on_its_worker(tmp_path):
    account, (engine,) = engines(tmp_path, count=1)
    assert engine.runs_on_loop("notes", "read_file")
    assert engine.runs_on_loop("notes", "search_contents")
    assert not engine.runs_on_loop("notes", "write_file")
    assert not engine.runs_on_loop("notes", "append_to_file")
    with pytest.raises(UnknownOperationError):
        asyncio.run(on_loop(engine, account, "write_file", path="n.md", text="t"))
    engine.close()


def test_sqlite_reads_on_the_event_loop_see_every_processs_committed_writes(tmp_path):
    """Read-your-writes across processes when reads run on the loop's own read-only
    connection: what another process committed is read at once (its commit changes the
    connection's data version), what this process's worker committed too, and a write still
    held for its group's commit is not seen by another process."""
    account, (a, b) = engines(tmp_path)
    a.group_commits()

    async def read(engine, **arguments):
        return await on_loop(engine, account, "read_file", path="n.md", **arguments)

    async def main():
        assert (await read(b))["file"] is None
        call(a, account, "notes", "write_file", path="n.md", text="one")
        # Held in a's open group: not on disk, so not seen elsewhere.
        assert (await read(b))["file"] is None
        a.commit_writes()
        assert (await read(b))["file"]["content"] == "one"
        assert (await read(a))["file"]["content"] == "one"
        # b's session is in memory now; a later write of a's is read all the same.
        call(a, account, "notes", "append_to_file", path="n.md", text=" two")
        a.commit_writes()
        assert (await read(b))["file"]["content"] == "one two"
        # And b's own writes, on its worker, are read on its loop.
        call(b, account, "notes", "append_to_file", path="n.md", text=" three")
        assert (await read(b))["file"]["content"] == "one two three"
        assert (await read(a))["file"]["content"] == "one two three"
        # Searches on the loop see the same: b's append at once on a.
        for engine in (a, b):
            found = await on_loop(engine, account, "search_contents", query="three")
            assert found["files"][0]["matches"] == [{"line_number": 1, "line": "one two three"}]
        for engine in (a, b):
            await engine.close_loop_storage()

    try:
        asyncio.run(main())
    finally:
        for engine in (a, b):
            engine.close()


def test_the_note_size_limit_is_exact_with_appends_on_event_loops_and_workers_at_once(
    postgres_url, tmp_path
):
    # Three processes' worth of storage: two append on the event loop, one on a worker.
    storages = [open_storage(tmp_path, postgres_url) for _ in range(3)]
    account = create_token(storages[0], "alice").account
    a, b, c = (ServiceEngine(storage, KEYS) for storage in storages)
    call(a, account, "notes", "write_file", path="big.md", text="x" * 999_000)
    chunk = "y" * 100
    answers = []

    def on_worker():
        for _ in range(10):
            answers.append(call(c, account, "notes", "append_to_file", path="big.md", text=chunk))

    async def appends(engine):
        for _ in range(10):
            answers.append(
                await on_loop(engine, account, "append_to_file", path="big.md", text=chunk)
            )

    async def run():
        try:
            await asyncio.gather(appends(a), appends(b), asyncio.to_thread(on_worker))
            # Each reads at once what the others wrote.
            return [await on_loop(e, account, "read_file", path="big.md") for e in (a, b)]
        finally:
            for engine in (a, b):
                await engine.close_loop_storage()

    try:
        reads = asyncio.run(run())
        accepted = [answer for answer in answers if "file" in answer]
        refused = [answer for answer in answers if "error" in answer]
        assert len(accepted) == 10
        assert len(refused) == 20
        assert all("1,000,000-byte limit" in answer["error"] for answer in refused)
        reads.append(call(c, account, "notes", "read_file", path="big.md"))
        for read in reads:
            assert read["file"]["bytes"] == 1_000_000
            assert read["file"]["content"] == "x" * 999_000 + chunk * 10
    finally:
        for engine in (a, b, c):
            engine.close()
