"""Images in recorded history: a user's image and a tool result's image, recorded from the
``/responses`` traffic, come back from ``history.read_item`` as the contract's ``images``
(beside the ciphertext, exactly as sent), over SQLite and over Postgres; previews and
searches never carry them; and a Remote-mode client hands them to the model as
``input_image`` items."""

from __future__ import annotations

import base64
import json
import ssl

import httpx
import pytest
from support.codex_backend import Account as EmulatedAccount
from support.codex_backend import CodexBackendEmulator, CodexDouble
from support.images import solid_png
from support.local_rig import call, text, tool_results
from support.service_rig import turn_headers

import ctxmodes_remote
from ctxmodes.providers.base import EncryptedToolOutput
from ctxmodes.providers.script import Script
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.responses_items import history_items
from ctxmodes_remote.service.storage import RecordedImage, open_storage

W0 = "01a23094-f1f0-70e1-b30d-85b4805a2749"


USER_PNG = solid_png(3, 2, (200, 10, 10))
TOOL_PNG = solid_png(2, 2, (10, 200, 10))
USER_B64 = base64.b64encode(USER_PNG).decode()
TOOL_B64 = base64.b64encode(TOOL_PNG).decode()


def image_part(data: str, mime_type: str, detail: str | None = None) -> dict[str, str]:
    part = {"type": "input_image", "image_url": f"data:{mime_type};base64,{data}"}
    if detail is not None:
        part["detail"] = detail
    return part


def record_window(service, session: str) -> None:
    """One exchange as Codex sends it: a user message with a screenshot, a tool call, and
    its output carrying an image."""
    user = {
        "type": "message",
        "id": "msg_u0",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is wrong in this screenshot?"},
            image_part(USER_B64, "image/png", "high"),
        ],
    }
    tool_call = {
        "type": "function_call",
        "call_id": "call_view",
        "name": "view_image",
        "arguments": json.dumps({"path": "shot.png"}),
    }
    output = {
        "type": "function_call_output",
        "call_id": "call_view",
        "output": [{"type": "input_text", "text": "shot.png"}, image_part(TOOL_B64, "image/png")],
    }
    body = {"model": "scripted", "stream": True, "input": [user, tool_call, output], "tools": []}
    reply = service.responses(body, turn_headers(session, W0))
    assert reply.status == 200, reply.body


@pytest.fixture(params=["sqlite", "postgres"])
def storage_kind(request):
    return request.param


@pytest.fixture
def imaged_service(make_service, storage_kind, tmp_path, request):
    storage = None
    if storage_kind == "postgres":
        storage = open_storage(tmp_path, request.getfixturevalue("postgres_url"))
    service = make_service([{"text": "looked"}], storage=storage)
    record_window(service, "s1")
    yield service
    service.storage.close()


def read_answer(service, item_id: str, **arguments):
    reply = service.alpha(
        "history", "read_item", {"window_id": W0, "item_id": item_id, **arguments}
    )
    assert reply.status == 200, reply.body
    answer = reply.json()
    opened = json.loads(
        service.keyring.decrypt(service.alice.account_id, answer["encrypted_output"])
    )
    return answer, opened


def tool_item_id(service) -> str:
    [item] = service.call("history", "list_items", {"window_id": W0, "role": "tool"})["items"]
    return str(item["item_id"])


def test_read_item_answers_the_recorded_images_exactly(imaged_service):
    answer, opened = read_answer(imaged_service, "msg_u0")
    assert set(answer) == {"encrypted_output", "images"}
    assert answer["images"] == [{"data": USER_B64, "mime_type": "image/png", "detail": "high"}]
    assert base64.b64decode(answer["images"][0]["data"]) == USER_PNG
    # The text says where the image was, as Local's history does, and holds no image data.
    assert opened["item"]["content"] == "what is wrong in this screenshot?\n[image image/png]"

    answer, opened = read_answer(imaged_service, tool_item_id(imaged_service))
    # No detail was sent: the Responses default.
    assert answer["images"] == [{"data": TOOL_B64, "mime_type": "image/png", "detail": "auto"}]
    assert base64.b64decode(answer["images"][0]["data"]) == TOOL_PNG
    assert opened["item"]["tool_name"] == "view_image"
    assert opened["item"]["content"] == "shot.png\n[image image/png]"


def test_images_survive_in_storage_for_another_process(imaged_service):
    """A second engine on the same storage (another service process, or a restart) reads
    the images from the database, not from the first one's memory."""
    other = ServiceEngine(imaged_service.storage, imaged_service.keyring)
    arguments = {"window_id": W0, "item_id": "msg_u0", "context": {"session_id": "s1"}}
    answer = other.alpha(
        imaged_service.alice, "history", "read_item", arguments, encrypted_arguments=False
    )
    assert answer["images"] == [{"data": USER_B64, "mime_type": "image/png", "detail": "high"}]


def test_items_without_images_and_other_operations_answer_no_images(imaged_service):
    service = imaged_service
    assistant = service.call("history", "list_items", {"window_id": W0, "role": "assistant"})
    call_id = assistant["items"][0]["item_id"]
    answer, _ = read_answer(service, call_id)
    assert set(answer) == {"encrypted_output"}
    # A page after the first still belongs to the item: its images come with it.
    answer, opened = read_answer(service, "msg_u0", offset_chars=5)
    assert opened["item"]["content"].startswith("is wrong")
    assert [image["data"] for image in answer["images"]] == [USER_B64]
    for operation, arguments in (
        ("list_items", {"window_id": W0}),
        ("search_contents", {"query": "screenshot"}),
        ("search_contents", {"query": "[image image/png]"}),
        ("list_windows", {}),
    ):
        reply = service.alpha("history", operation, arguments)
        assert set(reply.json()) == {"encrypted_output"}, operation
        assert USER_B64 not in reply.body.decode()
    found = service.call("history", "search_contents", {"query": "[image image/png]"})
    assert [i["truncated_content"] for i in found["items"]] == [
        "what is wrong in this screenshot?\n[image image/png]",
        "shot.png\n[image image/png]",
    ]
    for item in service.call("history", "list_items", {"window_id": W0})["items"]:
        assert USER_B64 not in item["truncated_content"]
        assert TOOL_B64 not in item["truncated_content"]
    # The image data is not content: searching for it finds nothing.
    assert service.call("history", "search_contents", {"query": USER_B64[:40]})["items"] == []


def test_another_account_gets_no_images(imaged_service):
    reply = imaged_service.alpha(
        "history",
        "read_item",
        {"window_id": W0, "item_id": "msg_u0"},
        client=imaged_service.bob_client,
    )
    assert set(reply.json()) == {"encrypted_output"}
    assert imaged_service.opened(reply, imaged_service.bob)["item"] is None


def test_a_remote_client_hands_read_images_to_the_model(ctx_host, make_service, tls):
    """Remote mode on a host, its backend this service over HTTPS on loopback: the image a
    ``read_item`` answers is an image block of the result and an ``input_image`` item of
    the next model request."""
    service = make_service()
    emulator = CodexBackendEmulator()
    account = EmulatedAccount(service.alice.account_id, service.client.token, None)
    context = ssl.create_default_context(cafile=str(tls.ca))
    script = Script.model_validate(
        {"responses": [call("read_item", "history", window_id=W0, item_id="msg_u0"), text("ok")]}
    )
    provider = CodexDouble(
        script, emulator, account, base_url=service.server.base, client=httpx.Client(verify=context)
    )
    h = ctx_host([], plugins=[ctxmodes_remote], mode="remote", provider=provider)
    record_window(service, h.manager.session_id)

    h.prompt("look at the screenshot again")

    (result,) = tool_results(h, "history")
    assert [block.type for block in result.content] == ["text", "image"]
    assert (result.content[1].data, result.content[1].mime_type) == (USER_B64, "image/png")
    (output,) = [m for m in h.requests()[1].messages if isinstance(m, EncryptedToolOutput)]
    items = output.output_items()
    assert items[0]["type"] == "encrypted_content"
    assert items[1] == {"type": "input_image", "image_url": f"data:image/png;base64,{USER_B64}"}


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://example.com/shot.png", "a remote URL is not the image"),
        ("data:text/plain;base64,aGk=", "not an image type"),
        ("data:image/png,rawbytes", "not base64"),
        ("data:image/png;base64,not base64!", "not base64 characters"),
        ("data:image/png;base64,", "no data"),
    ],
)
def test_only_base64_images_are_kept_as_images(url, reason):
    [item] = history_items(
        [
            {
                "type": "message",
                "id": "m",
                "role": "user",
                "content": [{"type": "input_image", "image_url": url}],
            }
        ],
        W0,
        {},
        str,
    )
    assert item.images == (), reason
    assert item.content == "[image attachment]"


def test_a_detail_outside_the_responses_values_is_dropped():
    part = image_part(USER_B64, "image/jpeg", "extreme")
    [item] = history_items(
        [{"type": "message", "id": "m", "role": "user", "content": [part]}], W0, {}, str
    )
    assert item.images == (RecordedImage(USER_B64, "image/jpeg", None),)
    assert item.content == "[image image/jpeg]"


def test_messages_without_ids_that_differ_only_in_their_image_are_two_items():
    def message(data):
        return {"type": "message", "role": "user", "content": [image_part(data, "image/png")]}

    first, second = history_items([message(USER_B64), message(TOOL_B64)], W0, {}, str)
    assert first.item_key != second.item_key
    [again] = history_items([message(USER_B64)], W0, {}, str)
    assert again.item_key == first.item_key
