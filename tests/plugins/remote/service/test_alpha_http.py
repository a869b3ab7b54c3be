"""The alpha endpoints over HTTPS on loopback: authentication, encryption, isolation."""

import itertools
import json
import threading
import time

import pytest
from support.service_rig import ENCRYPTED

from ctxmodes_remote.service import limits


def test_every_request_needs_a_known_bearer_token(service):
    anonymous = service.client.as_token(None)
    for method, path in [
        ("GET", "/models"),
        ("POST", "/alpha/notes/v2/read_file"),
        ("POST", "/responses"),
    ]:
        assert anonymous.request(method, path, b"{}").status == 401
    forged = service.client.as_token(service.client.token + "x")
    assert forged.request("GET", "/models").status == 401


def _served_paths(service):
    """Every (method, path) the running app routes, its operation paths spelled out for
    each operation of the contract, plus a path it routes nowhere."""
    from ctxmodes.windows.tools import OPERATIONS

    operations = [(family, name) for family, named in OPERATIONS.items() for name in named]
    operations.append(("notes", "thread_hint"))
    served = []
    for route in service.server._runner.app.router.routes():
        info = route.resource.get_info()
        if "path" in info:
            served.append((route.method, info["path"]))
        else:
            served.extend(
                (route.method, route.url_for(family=family, operation=name).path)
                for family, name in operations
            )
    return [*served, ("GET", "/backend-api/codex/no-such-route")]


def test_every_route_but_the_operators_refuses_a_missing_or_unknown_token(service):
    import hashlib

    origin = service.client.base.removesuffix("/backend-api/codex")
    token = service.client.token
    refused_headers = {
        "no header": {},
        "a forged token": {"Authorization": f"Bearer {token}x"},
        # What a copy of the database holds: the hash does not stand in for the token.
        "the stored hash": {
            "Authorization": f"Bearer {hashlib.sha256(token.encode()).hexdigest()}"
        },
        "another scheme": {"Authorization": f"Basic {token}"},
        "an empty bearer": {"Authorization": "Bearer "},
    }
    anonymous = service.client.__class__(origin, service.tls, None)
    paths = _served_paths(service)
    assert len(paths) > 12  # the routes were found, operations spelled out
    operator_paths = {"/healthz", "/readyz", "/metrics"}
    for method, path in paths:
        body = None if method in ("GET", "HEAD") else b"{}"
        if path in operator_paths:
            assert anonymous.request(method, path, body).status == 200, (method, path)
            continue
        for what, headers in refused_headers.items():
            reply = anonymous.request(method, path, body, headers)
            assert reply.status == 401, (method, path, what)
            if method != "HEAD":
                assert reply.json()["error"]["code"] == "invalid_token"
    # The same requests with the real token get past the check.
    known = anonymous.request(
        "GET", "/backend-api/codex/models", None, {"Authorization": f"Bearer {token}"}
    )
    assert known.status == 200


def test_write_then_read_round_trip_stays_encrypted_on_the_wire(service):
    written = service.alpha("notes", "write_file", {"path": "checkpoint.md", "text": "goal: ship"})
    assert b"goal: ship" not in written.body
    assert service.opened(written)["file"]["path"] == "/root/notes/checkpoint.md"
    read = service.alpha("notes", "read_file", {"path": "checkpoint.md"})
    assert b"goal: ship" not in read.body
    assert service.opened(read)["file"]["content"] == "goal: ship"


def test_results_keep_the_kit_shape_with_the_service_source(service):
    service.call("notes", "write_file", {"path": "a.md", "text": "one\ntwo"})
    listing = service.call("notes", "list_files_by_prefix", {})
    assert listing["source"] == "ctxmodes-serve"
    assert [f["path"] for f in listing["files"]] == ["/root/notes/a.md"]
    assert set(listing["files"][0]) == {"path", "bytes", "created_at", "updated_at"}


def test_relative_paths_belong_to_the_current_agent(service):
    service.call("notes", "write_file", {"path": "plan.md", "text": "w"}, agent="/root/worker")
    root = service.call("notes", "list_files_by_prefix", {})
    worker = service.call("notes", "list_files_by_prefix", {}, agent="/root/worker")
    assert root["files"] == []
    assert [f["path"] for f in worker["files"]] == ["/root/worker/notes/plan.md"]
    # Cross-agent access takes an absolute path.
    read = service.call("notes", "read_file", {"path": "/root/worker/notes/plan.md"})
    assert read["file"]["content"] == "w"


def test_invalid_calls_are_explained_inside_the_ciphertext(service):
    assert service.call("notes", "read_file", {"path": ""}) == {
        "error": "notes read_file requires path"
    }
    assert service.call("notes", "write_file", {"path": "../x", "text": "t"}) == {
        "error": "Note paths cannot contain empty, . or .. components"
    }
    assert service.call("history", "read_item", {"window_id": "w"}) == {
        "error": "history read_item requires item_id"
    }


def test_unknown_operation_and_missing_context_are_refused(service):
    body = {"context": {"session_id": "s1", "current_agent_name": "/root"}}
    assert service.client.post_json("/alpha/notes/v2/erase", body).status == 404
    assert service.client.post_json("/alpha/notes/v2/read_file", {"path": "a"}).status == 400
    assert service.client.request("POST", "/alpha/notes/v2/read_file", b"not json").status == 400


def test_tampered_and_foreign_ciphertext_is_refused(service):
    sealed = service.seal(service.alice, "secret")
    tampered = sealed[:-6] + ("AAAAAA" if not sealed.endswith("AAAAAA") else "BBBBBB")
    context = {"session_id": "s1", "current_agent_name": "/root"}
    for value in (tampered, service.seal(service.bob, "secret"), "plain text"):
        reply = service.client.post_json(
            "/alpha/notes/v2/write_file",
            {"path": "a.md", "text": value, "context": context},
            ENCRYPTED,
        )
        assert reply.status == 400
        assert reply.json()["error"]["code"] == "invalid_encrypted_content"
    # Nothing was written by the refused calls.
    assert service.call("notes", "list_files_by_prefix", {})["files"] == []


def test_one_account_never_sees_another_accounts_notes(service):
    service.call("notes", "write_file", {"path": "mine.md", "text": "alice's plan"})
    as_bob = service.alpha("notes", "list_files_by_prefix", {}, client=service.bob_client)
    assert service.opened(as_bob, service.bob)["files"] == []
    found = service.alpha("notes", "search_contents", {"query": "plan"}, client=service.bob_client)
    assert service.opened(found, service.bob)["files"] == []
    read = service.alpha("notes", "read_file", {"path": "mine.md"}, client=service.bob_client)
    assert service.opened(read, service.bob)["file"] is None
    # Bob's outputs open only with Bob's key, and Alice's ciphertext is refused for Bob.
    alice_output = service.alpha("notes", "read_file", {"path": "mine.md"}).json()
    context = {"session_id": "s1", "current_agent_name": "/root"}
    stolen = service.bob_client.post_json(
        "/alpha/notes/v2/write_file",
        {"path": "x.md", "text": alice_output["encrypted_output"], "context": context},
        ENCRYPTED,
    )
    assert stolen.status == 400


def test_one_account_never_sees_another_accounts_history(make_service):
    from support.service_rig import turn_headers

    service = make_service([{"text": "alice's answer about the quokka"}])
    window = "01a23094-f1f0-70e1-b30d-85b4805a2749"
    turn = {
        "model": "scripted",
        "stream": True,
        "input": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "user",
                "content": [{"type": "input_text", "text": "alice asks about the quokka"}],
            }
        ],
    }
    assert service.responses(turn, turn_headers("s1", window)).status == 200
    # Alice's own calls see what was recorded, so the empty answers below are not for want
    # of history; Bob asks under the same session id, agent and window.
    assert service.call("history", "list_windows", {})["windows"]
    [mine] = service.call("history", "search_contents", {"query": "quokka"})["items"][:1]
    read = {"window_id": window, "item_id": mine["item_id"]}
    assert "quokka" in service.call("history", "read_item", read)["item"]["content"]

    def as_bob(operation, arguments):
        reply = service.alpha("history", operation, arguments, client=service.bob_client)
        return service.opened(reply, service.bob)

    assert as_bob("list_windows", {})["windows"] == []
    assert as_bob("list_items", {})["items"] == []
    assert as_bob("list_items", {"window_id": window})["items"] == []
    assert as_bob("search_contents", {"query": "quokka"})["items"] == []
    assert "quokka" not in json.dumps(as_bob("read_item", read))
    hint = service.bob_client.post_json(
        "/alpha/notes/v2/thread_hint",
        {"context": {"session_id": "s1", "current_agent_name": "/root"}},
    )
    assert "quokka" not in hint.body.decode()


def test_thread_hint_lists_the_agents_recent_notes_in_plain_text(service):
    assert service.client.post_json(
        "/alpha/notes/v2/thread_hint",
        {"context": {"session_id": "s1", "current_agent_name": "/root"}},
    ).json() == {"text": ""}
    service.call("notes", "write_file", {"path": "checkpoint.md", "text": "step 1 done"})
    hint = service.client.post_json(
        "/alpha/notes/v2/thread_hint",
        {"context": {"session_id": "s1", "current_agent_name": "/root"}},
    ).json()
    assert hint == {
        "text": "Recent notes (up to 5, most-recent first):\n"
        "- /root/notes/checkpoint.md (1 line, 11 UTF-8 bytes)"
    }


def test_notes_survive_a_restart_of_the_service(make_service, tls, tmp_path):
    first = make_service()
    first.call("notes", "append_to_file", {"path": "log.md", "text": "a"})
    first.call("notes", "append_to_file", {"path": "log.md", "text": "b"})
    first.close()
    from support.service_rig import InProcessService

    from ctxmodes_remote.service.engine import ServiceEngine
    from ctxmodes_remote.service.sqlite_storage import SqliteStorage

    storage = SqliteStorage.in_directory(first.tmp_path / "data")
    first.engine = ServiceEngine(storage, first.keyring)
    first.server = InProcessService(first.engine, first.provider, tls)
    first.client = first.client.__class__(first.server.base, tls, first.client.token)
    assert first.call("notes", "read_file", {"path": "log.md"})["file"]["content"] == "ab"
    assert json.loads(json.dumps(first.call("notes", "list_files_by_prefix", {})))["files"]


def test_an_accounts_searches_take_turns_while_another_is_served_and_it_does_not_wait(
    make_service, backend, monkeypatch
):
    """On Postgres several workers could search at once; while another account is active, one
    account's searches still take turns, and the other account's search runs beside them.
    (Here every account searching takes turns: which ones do is tested in test_limits.)"""
    monkeypatch.setattr(limits, "TURNS_ABOVE", -1.0)
    # Bob, seen once, stays active however slowly a loaded machine starts the searches.
    monkeypatch.setattr(limits, "ACTIVE_S", 60.0)
    service = make_service(storage=backend)
    fetching = backend.search_candidates
    inside: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()

    def search_candidates(account_id, *args):
        with lock:
            inside[account_id] = inside.get(account_id, 0) + 1
            most[account_id] = max(most.get(account_id, 0), inside[account_id])
        time.sleep(0.05)
        with lock:
            inside[account_id] -= 1
        return fetching(account_id, *args)

    monkeypatch.setattr(backend, "search_candidates", search_candidates)

    finished: dict[str, list[float]] = {"alice": [], "bob": []}

    def search(session, client=None):
        reply = service.alpha(
            "history", "search_contents", {"query": "anything"}, session=session, client=client
        )
        assert reply.status == 200, reply.body
        finished["bob" if client else "alice"].append(time.monotonic())

    # Bob is active.
    assert (
        service.alpha("notes", "read_file", {"path": "a.md"}, client=service.bob_client).status
        == 200
    )
    searches = [threading.Thread(target=search, args=(f"s{n}",)) for n in range(6)]
    searches.append(threading.Thread(target=search, args=("s0", service.bob_client)))
    started = time.monotonic()
    for thread in searches:
        thread.start()
    for thread in searches:
        thread.join(60)
    assert most[service.alice.account_id] == 1
    assert len(finished["alice"]) == 6
    # Alice's six took turns (0.3 s at least); Bob's did not wait for all of them.
    assert max(finished["alice"]) - started >= 0.3
    assert finished["bob"][0] < max(finished["alice"])


@pytest.mark.slow  # 16 searches of 50 ms, with rests between them
def test_searches_of_one_session_take_turns_with_a_rest_while_another_account_is_served(
    make_service, backend, monkeypatch
):
    """Agents searching one session without pause wait for each other's session turn; they
    still count as several searches asked for, so while another account is active the
    account takes turns and rests between its searches (the share of the time in
    test_limits)."""
    # Bob, seen once, stays active however slowly the machine runs the searches.
    monkeypatch.setattr(limits, "ACTIVE_S", 60.0)
    service = make_service(storage=backend)
    fetching = backend.search_candidates
    began: list[float] = []

    def search_candidates(account_id, *args):
        if account_id == service.alice.account_id:
            began.append(time.monotonic())
        time.sleep(0.05)
        return fetching(account_id, *args)

    monkeypatch.setattr(backend, "search_candidates", search_candidates)
    assert (
        service.alpha("notes", "read_file", {"path": "a.md"}, client=service.bob_client).status
        == 200
    )

    def agent():
        for _ in range(4):
            reply = service.alpha("history", "search_contents", {"query": "anything"}, session="s0")
            assert reply.status == 200, reply.body

    agents = [threading.Thread(target=agent) for _ in range(4)]
    for thread in agents:
        thread.start()
    for thread in agents:
        thread.join(60)
    assert len(began) == 16
    # Back to back, a search begins as the one before ends (0.05 s after it began); after a
    # rest as long as the search, 0.1 s after.
    gaps = [later - earlier for earlier, later in itertools.pairwise(began)]
    assert sum(gap >= 0.09 for gap in gaps) >= 5, gaps


def test_a_sessions_calls_on_the_event_loop_and_on_its_worker_take_turns(
    make_service, postgres_url
):
    from ctxmodes_remote.service.postgres_storage import PostgresStorage

    service = make_service(storage=PostgresStorage(postgres_url))
    # Appends run on the event loop, thread hints (which read the notes too) on the worker.
    assert service.engine.runs_on_loop("notes", "append_to_file")
    assert not service.engine.runs_on_loop("notes", "thread_hint")
    service.call("notes", "write_file", {"path": "log.md", "text": ""})
    statuses = []

    def append(n):
        reply = service.alpha("notes", "append_to_file", {"path": "log.md", "text": f"<{n}>"})
        statuses.append(("append", reply.status, "error" in service.opened(reply)))

    def hint():
        context = {"session_id": "s1", "current_agent_name": "/root"}
        reply = service.client.post_json("/alpha/notes/v2/thread_hint", {"context": context})
        statuses.append(("hint", reply.status, "log.md" not in reply.json()["text"]))

    threads = []
    for n in range(16):
        threads += [threading.Thread(target=append, args=(n,)), threading.Thread(target=hint)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [("append", 200, False)] * 16 + [("hint", 200, False)] * 16
    # Every append applied once, in the order storage took them, as another process sees.
    content = service.call("notes", "read_file", {"path": "log.md"})["file"]["content"]
    assert sorted(int(n) for n in content[1:-1].split("><")) == list(range(16))
    reopened = make_service(storage=PostgresStorage(postgres_url))
    assert reopened.call("notes", "read_file", {"path": "log.md"})["file"]["content"] == content
