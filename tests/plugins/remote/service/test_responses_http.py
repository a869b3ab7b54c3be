"""``/responses`` over HTTPS on loopback: the start-up endpoints, zstd bodies, the SSE stream,
encryption at the model boundary, and history recorded from the traffic."""

import json
import threading

import pytest
from support.service_rig import RecordingProvider, turn_headers

from ctxmodes.providers.script import Script
from ctxmodes.session.models import TextContent, ToolResultMessage, UserMessage
from ctxmodes.windows.tools import namespace_tool
from ctxmodes_remote.service.storage import StorageUnavailableError

zstd = pytest.importorskip("backports.zstd", reason="zstd needs the serve extra on Python < 3.14")

TOOLS = [namespace_tool("history", encrypted=True), namespace_tool("notes", encrypted=True)]
W0 = "01a23094-f1f0-70e1-b30d-85b4805a2749"
W1 = "01a23094-f3e1-7c13-aa06-13a35a35296e"


def user(text, item_id):
    return {
        "type": "message",
        "id": item_id,
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    }


def body(*items, tools=TOOLS):
    return {"model": "scripted", "stream": True, "input": list(items), "tools": tools}


def completed(reply):
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"].startswith("text/event-stream")
    events = reply.events()
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    return events


def output_items(events):
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


def test_catalog_enables_the_context_feature_for_the_upstream_model(service):
    models = service.client.request("GET", "/models?client_version=0.169.0").json()["models"]
    assert [m["slug"] for m in models] == ["scripted"]
    entry = models[0]
    assert entry["supports_experimental_context"] is True
    assert entry["context_window"] == 128_000
    budget = entry["model_messages"]["token_budget"]
    assert budget["enabled"] is True
    assert budget["use_history_notes_extension"] is True
    assert "{n_remaining}" in budget["reminder_message_template"]


def test_account_check_and_settings_answer_for_the_caller(service):
    check = service.client.request("GET", "/../wham/accounts/check")
    assert check.status in (200, 404)
    base = service.client.base.removesuffix("/codex")
    client = service.client.__class__(base, service.tls, service.client.token)
    accounts = client.request("GET", "/wham/accounts/check").json()
    assert accounts["account_ordering"] == [service.alice.account_id]
    assert accounts["accounts"][0]["workspace_backend_origin"] == "NO_CONSTRAINT"
    assert client.request("GET", "/wham/settings/user").json() == {}


def test_websocket_upgrade_is_refused_with_426(service):
    reply = service.client.request(
        "GET",
        "/responses",
        headers={
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "OpenAI-Beta": "responses_websockets=2026-02-06",
        },
    )
    assert reply.status == 426


def test_zstd_request_body_streams_the_upstream_answer(make_service):
    service = make_service([{"text": "hello from upstream"}])
    raw = json.dumps(body(user("hi", "msg_1"))).encode()
    reply = service.client.request(
        "POST",
        "/responses",
        zstd.compress(raw),
        {
            "Content-Type": "application/json",
            "Content-Encoding": "zstd",
            **turn_headers("s1", W0),
        },
    )
    events = completed(reply)
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == "hello from upstream"
    [message] = output_items(events)
    assert message["content"][0]["text"] == "hello from upstream"
    assert events[-1]["response"]["usage"]["total_tokens"] > 0
    [request] = service.provider.requests
    assert isinstance(request.messages[0], UserMessage)


def test_a_body_that_decompresses_past_the_limit_is_refused(make_service):
    service = make_service([{"text": "never"}], max_body_bytes=1_000_000)
    bomb = zstd.compress(b'{"input": "' + b" " * 20_000_000 + b'"}')
    assert len(bomb) < 10_000
    reply = service.client.request(
        "POST",
        "/responses",
        bomb,
        {"Content-Type": "application/json", "Content-Encoding": "zstd", **turn_headers("s1", W0)},
    )
    assert reply.status == 413
    assert service.provider.requests == []


def test_marked_arguments_leave_encrypted_and_reach_the_upstream_in_plaintext(make_service):
    service = make_service(
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "namespace": "notes",
                        "arguments": {"path": "plan.md", "text": "secret plan"},
                    }
                ]
            },
            {"text": "done"},
        ]
    )
    events = completed(service.responses(body(user("go", "msg_1")), turn_headers("s1", W0)))
    [call] = output_items(events)
    assert call["type"] == "function_call"
    assert call["namespace"] == "notes"
    assert call["encrypted_function_args"] == ["text"]
    arguments = json.loads(call["arguments"])
    assert arguments["path"] == "plan.md"
    assert "secret plan" not in json.dumps(events)
    assert service.keyring.decrypt(service.alice.account_id, arguments["text"]) == b"secret plan"

    # The client forwards the ciphertext to the alpha endpoint, then sends the call and its
    # encrypted output back on the next turn; the upstream sees both in plaintext.
    written = service.client.post_json(
        "/alpha/notes/v2/write_file",
        {**arguments, "context": {"session_id": "s1", "current_agent_name": "/root"}},
        {"x-openai-encrypted-tool-arguments": "true"},
    ).json()
    output = {
        "type": "function_call_output",
        "id": "fco_1",
        "call_id": call["call_id"],
        "output": [{"type": "encrypted_content", "encrypted_content": written["encrypted_output"]}],
    }
    completed(service.responses(body(user("go", "msg_1"), call, output), turn_headers("s1", W0)))
    upstream = service.provider.requests[-1]
    assistant = upstream.messages[1]
    assert assistant.content[0].arguments == {"path": "plan.md", "text": "secret plan"}
    # The scripted model takes no namespaces: it sees the tool by its flat name.
    assert (assistant.content[0].name, assistant.content[0].namespace) == (
        "notes__write_file",
        None,
    )
    result = upstream.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.tool_name == "notes__write_file"
    [text] = [block.text for block in result.content if isinstance(block, TextContent)]
    assert json.loads(text)["file"]["path"] == "/root/notes/plan.md"
    assert "gAAAAA" not in upstream.model_dump_json()


def test_input_ciphertext_that_is_not_the_accounts_is_refused(make_service):
    service = make_service([{"text": "never"}])
    foreign = service.seal(service.bob, '{"x":1}')
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [{"type": "encrypted_content", "encrypted_content": foreign}],
    }
    reply = service.responses(body(user("go", "msg_1"), output), turn_headers("s1", W0))
    assert reply.status == 400
    assert reply.json()["error"]["code"] == "invalid_encrypted_content"
    assert service.provider.requests == []


def _flipped(token):
    """``token`` with one character in its middle changed."""
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


@pytest.mark.parametrize("damage", ["tampered", "truncated", "not a token", "a dropped key"])
@pytest.mark.parametrize("carrier", ["call output", "call argument"])
def test_tampered_damaged_or_dropped_key_ciphertext_in_the_input_is_refused(
    make_service, damage, carrier
):
    from ctxmodes_remote.service.crypto import KeyRing

    current_key, dropped_key = b"c" * 32, b"d" * 32
    service = make_service([{"text": "never"}], master_keys=[current_key])
    sealed = service.seal(service.alice, '{"x":1}')
    value = {
        "tampered": _flipped(sealed),
        "truncated": sealed[:-8],
        "not a token": "plain text the client made up",
        # Made by this service before its key file dropped the key it was made under.
        "a dropped key": KeyRing([dropped_key]).encrypt(service.alice.account_id, b'{"x":1}'),
    }[damage]
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c1",
        "name": "write_file",
        "namespace": "notes",
        "arguments": json.dumps({"path": "a.md", "text": sealed}),
        "encrypted_function_args": ["text"],
    }
    output = {
        "type": "function_call_output",
        "id": "fco_1",
        "call_id": "c1",
        "output": [{"type": "encrypted_content", "encrypted_content": sealed}],
    }
    if carrier == "call output":
        output["output"][0]["encrypted_content"] = value
    else:
        call["arguments"] = json.dumps({"path": "a.md", "text": value})
    reply = service.responses(body(user("go", "msg_1"), call, output), turn_headers("s1", W0))
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == "invalid_encrypted_content"
    if damage == "a dropped key":
        assert "master key since dropped from the service's key file" in error["message"]
    assert service.provider.requests == []
    # Nothing of the refused turn was recorded.
    assert service.call("history", "list_windows", {})["windows"] == []
    # The same turn with the values as the service sealed them goes through.
    call["arguments"] = json.dumps({"path": "a.md", "text": sealed})
    output["output"][0]["encrypted_content"] = sealed
    assert (
        service.responses(body(user("go", "msg_1"), call, output), turn_headers("s1", W0)).status
        == 200
    )


def test_history_is_recorded_from_the_traffic_per_window(make_service):
    service = make_service([{"text": "noted the needle"}, {"text": "again"}, {"text": "w1"}])
    task = user("remember needle-42 in src/app.py", "msg_u0")
    first = completed(service.responses(body(task), turn_headers("s1", W0)))
    # Codex resends the whole window with the answer; nothing is recorded twice.
    completed(service.responses(body(task, *output_items(first)), turn_headers("s1", W0)))
    completed(service.responses(body(user("next", "msg_u1")), turn_headers("s1", W1)))

    windows = service.call("history", "list_windows", {}, session="s1")["windows"]
    assert [(w["window_id"], w["item_count"]) for w in windows] == [(W0, 3), (W1, 2)]
    found = service.call("history", "search_contents", {"query": "needle-42"}, session="s1")
    [item] = found["items"]
    assert (item["window_id"], item["item_id"], item["role"]) == (W0, "msg_u0", "user")
    read = service.call(
        "history", "read_item", {"window_id": item["window_id"], "item_id": item["item_id"]}
    )
    assert read["item"]["content"] == "remember needle-42 in src/app.py"
    assistant = service.call("history", "list_items", {"window_id": W0, "role": "assistant"})
    assert [i["truncated_content"] for i in assistant["items"]] == ["noted the needle", "again"]
    # Another account's search over the same session id finds nothing.
    theirs = service.alpha(
        "history", "search_contents", {"query": "needle"}, client=service.bob_client
    )
    assert service.opened(theirs, service.bob)["items"] == []


def test_developer_and_system_messages_are_history_once_per_window(make_service):
    service = make_service([{"text": "one"}, {"text": "two"}])
    developer = {**user("<context_window>window 0</context_window>", "msg_d0"), "role": "developer"}
    system = {**user("be brief", "msg_s0"), "role": "system"}
    task = user("task", "msg_u0")
    first = completed(service.responses(body(developer, system, task), turn_headers("s1", W0)))
    resent = body(developer, system, task, *output_items(first))
    completed(service.responses(resent, turn_headers("s1", W0)))

    def ids(role):
        found = service.call("history", "list_items", {"window_id": W0, "role": role})
        return [(i["item_id"], i["role"]) for i in found["items"]]

    assert ids("developer") == [("msg_d0", "developer")]
    assert ids("system") == [("msg_s0", "system")]
    found = service.call("history", "search_contents", {"query": "<context_window>"})
    assert [i["item_id"] for i in found["items"]] == ["msg_d0"]


def test_thread_hint_names_the_window_that_just_closed(make_service):
    service = make_service([{"text": "ok"}])
    completed(service.responses(body(user("task", "msg_u0")), turn_headers("s1", W0)))
    hint = service.client.post_json(
        "/alpha/notes/v2/thread_hint",
        {"context": {"session_id": "s1", "current_agent_name": "/root"}},
    ).json()["text"]
    assert (
        hint == 'Previous window history IDs: {"window_id":"' + W0 + '","user_item_ids":["msg_u0"]}'
    )


def call_turn(service, window, *earlier):
    """One exchange whose answer is a shell call: the call, and its output sent back."""
    events = completed(service.responses(body(*earlier), turn_headers("s1", window)))
    [call] = output_items(events)
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "ran"}
    return [call, output]


def test_calls_keep_their_own_ids_when_upstream_call_ids_repeat(make_service, backend):
    # The same upstream call id twice in one window, as two processes numbering from 1 give.
    repeated = {"tool_calls": [{"id": "call_1", "name": "shell", "arguments": {"cmd": "ls"}}]}
    service = make_service([repeated, repeated, {"text": "done"}], storage=backend)
    first = call_turn(service, W0, user("go", "msg_1"))
    second = call_turn(service, W0, user("go", "msg_1"), *first)
    assert first[0]["call_id"] == second[0]["call_id"] == "call_1"
    # The service's item ids are its own: not derived from the upstream id, never repeated.
    assert first[0]["id"] != second[0]["id"]
    assert "call_1" not in first[0]["id"]
    completed(service.responses(body(user("go", "msg_1"), *first, *second), turn_headers("s1", W0)))
    items = service.call("history", "list_items", {"window_id": W0, "limit": 100})["items"]
    roles = [item["role"] for item in items]
    # Both calls and both outputs are history, none taken for a resend of the other.
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_deeply_nested_call_arguments_leave_the_window_usable(make_service, backend):
    service = make_service([{"text": "first"}, {"text": "second"}], storage=backend)
    deep = "[" * 300 + "]" * 300
    call = {
        "type": "function_call",
        "id": "fc_deep",
        "call_id": "call_deep",
        "name": "shell",
        "arguments": '{"cmd": ' + deep + "}",
    }
    output = {"type": "function_call_output", "call_id": "call_deep", "output": "ran"}
    for text in ("first", "second"):
        events = completed(
            service.responses(body(user("go", "msg_1"), call, output), turn_headers("s1", W0))
        )
        assert output_items(events)[0]["content"][0]["text"] == text
    items = service.call("history", "list_items", {"window_id": W0, "limit": 100})["items"]
    assert [item["role"] for item in items] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "assistant",
    ]


class GatedProvider(RecordingProvider):
    """The scripted model, saying when it was called and holding its first event until the
    test lets it go (or its call is aborted)."""

    def __init__(self, script):
        super().__init__(script)
        self.called = threading.Event()
        self.go = threading.Event()
        self.aborted = threading.Event()

    def stream(self, request, signal):
        self.called.set()
        signal.add_callback(self.aborted.set)
        while not self.go.wait(0.01):
            if signal.aborted:
                return
        yield from super().stream(request, signal)


def test_the_model_is_called_while_the_turn_is_recorded(make_service, backend, monkeypatch):
    provider = GatedProvider(Script.model_validate({"responses": [{"text": "first words"}]}))
    service = make_service(storage=backend, provider=provider)
    recording = backend.append_history_items
    model_was_called: list[bool] = []

    def append_history_items(*args):
        # The model already works on its first token while the input is written.
        model_was_called.append(provider.called.wait(10))
        recording(*args)
        provider.go.set()

    monkeypatch.setattr(backend, "append_history_items", append_history_items)
    events = completed(service.responses(body(user("hello", "msg_u0")), turn_headers("s1", W0)))
    # The input's write (then the output's, once the model has answered).
    assert model_was_called == [True, True]
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "first words"
    listed = service.call("history", "list_items", {}, session="s1")["items"]
    assert [item["truncated_content"] for item in listed] == ["hello", "first words"]


def test_a_turn_whose_input_is_not_recorded_streams_nothing_and_aborts_the_model(
    make_service, backend, monkeypatch
):
    provider = GatedProvider(Script.model_validate({"responses": [{"text": "never sent"}]}))
    service = make_service(storage=backend, provider=provider)

    def append_history_items(*args):
        provider.called.wait(10)
        raise StorageUnavailableError("the database failed: disk I/O error")

    monkeypatch.setattr(backend, "append_history_items", append_history_items)
    reply = service.responses(body(user("hello", "msg_u0")), turn_headers("s1", W0))
    assert reply.status == 503
    assert reply.json()["error"]["code"] == "storage_unavailable"
    assert provider.called.is_set()
    assert provider.aborted.wait(10)
    assert service.call("history", "list_items", {}, session="s1")["items"] == []


class WatchedProvider(RecordingProvider):
    """The scripted model, noting on each of its later events whether the first had been
    sent to the client by then."""

    def __init__(self, script, first_sent):
        super().__init__(script)
        self._first_sent = first_sent
        self.first_sent_before_next: list[bool] = []

    def stream(self, request, signal):
        for number, event in enumerate(super().stream(request, signal)):
            if number > 0:
                self.first_sent_before_next.append(self._first_sent.is_set())
            yield event


def test_the_model_makes_its_next_event_once_its_first_has_been_sent(make_service, monkeypatch):
    from ctxmodes_remote.service import app

    first_sent = threading.Event()
    write = app._write

    async def watched_write(response, frames):
        await write(response, frames)
        if any(b"response.output_text.delta" in frame for frame in frames):
            first_sent.set()

    monkeypatch.setattr(app, "_write", watched_write)
    script = Script.model_validate({"responses": [{"text": "a reply in several pieces"}]})
    provider = WatchedProvider(script, first_sent)
    service = make_service(provider=provider)
    events = completed(service.responses(body(user("hello", "msg_u0")), turn_headers("s1", W0)))
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "a reply in several pieces"
    # Its thread held the interpreter no longer than the first event's hand-over.
    assert provider.first_sent_before_next
    assert all(provider.first_sent_before_next)
