"""Reading the Responses items the client sends: their text, their encrypted parts, and the
history items they make.

Codex sends the whole window on every ``/responses`` call. The values the service encrypted
come back in two places: the encrypted fields of a ``history``/``notes`` call's arguments
(listed in the call's ``encrypted_function_args``, else marked ``"encrypted": true`` in the
request's tool schemas) and ``encrypted_content`` parts of a call's output. Both are opened
here with the account's key before anything reads them, so neither the upstream model nor
the recorded history ever holds ciphertext, and a value the service did not make is refused.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ctxmodes.session import codec
from ctxmodes.windows import image_placeholder
from ctxmodes_remote.service.storage import RecordedImage, RecordedItem

#: Opens one of this account's tokens (raises CiphertextError otherwise).
Decrypt = Callable[[object], str]

#: Message roles recorded as history: the contract's ``role`` filter names all four.
HISTORY_ROLES = frozenset({"user", "assistant", "developer", "system"})
#: The ``detail`` values of a Responses ``input_image``.
IMAGE_DETAILS = frozenset({"auto", "low", "high", "original"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_IMAGE_TYPE = re.compile(r"image/[A-Za-z0-9.+-]+")


def encrypted_fields_by_tool(tools: object) -> dict[tuple[str | None, str], frozenset[str]]:
    """``(namespace, name) → fields marked "encrypted": true`` for the request's tools."""
    found: dict[tuple[str | None, str], frozenset[str]] = {}
    if not isinstance(tools, list):
        return found

    def visit(tool: object, namespace: str | None) -> None:
        if not isinstance(tool, dict):
            return
        if tool.get("type") == "namespace" and isinstance(tool.get("name"), str):
            for child in tool.get("tools") or []:
                visit(child, tool["name"])
            return
        name = tool.get("name")
        parameters = tool.get("parameters")
        if tool.get("type") != "function" or not isinstance(name, str):
            return
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        if isinstance(properties, dict):
            marked = frozenset(
                field
                for field, schema in properties.items()
                if isinstance(schema, dict) and schema.get("encrypted") is True
            )
            if marked:
                found[(namespace, name)] = marked

    for tool in tools:
        visit(tool, None)
    return found


@dataclass(frozen=True, slots=True)
class OpenedCall:
    call_id: str
    name: str
    namespace: str | None
    arguments: dict[str, Any]


def parse_arguments(text: object) -> dict[str, Any]:
    """The arguments of a call as an object; none for text that is not a JSON object, or
    that nests deeper than :data:`~ctxmodes.session.codec.MAX_NESTING` levels (no store or
    transport could carry it; the history keeps the text as sent instead)."""
    if not isinstance(text, str) or not text:
        return {}
    if codec.nested_too_deeply(text.encode("utf-8", "surrogatepass")):
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def open_call(
    item: Mapping[str, Any],
    marked: Mapping[tuple[str | None, str], frozenset[str]],
    decrypt: Decrypt,
) -> OpenedCall:
    """A ``function_call`` item with its encrypted argument values opened."""
    name = item.get("name") if isinstance(item.get("name"), str) else ""
    namespace = item.get("namespace") if isinstance(item.get("namespace"), str) else None
    arguments = parse_arguments(item.get("arguments"))
    listed = item.get("encrypted_function_args")
    fields: Iterable[str] = (
        [field for field in listed if isinstance(field, str)]
        if isinstance(listed, list)
        else marked.get((namespace, str(name)), frozenset())
    )
    for field in fields:
        if field in arguments:
            arguments[field] = decrypt(arguments[field])
    call_id = item.get("call_id")
    return OpenedCall(call_id if isinstance(call_id, str) else "", str(name), namespace, arguments)


def content_parts(value: object, decrypt: Decrypt) -> list[dict[str, Any]]:
    """A message's or output's content as parts, encrypted parts opened into text."""
    if isinstance(value, str):
        return [{"type": "input_text", "text": value}]
    parts: list[dict[str, Any]] = []
    if not isinstance(value, list):
        return parts
    for part in value:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "encrypted_content":
            parts.append({"type": "input_text", "text": decrypt(part.get("encrypted_content"))})
        elif kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            parts.append({"type": "input_text", "text": part["text"]})
        elif kind == "input_image":
            parts.append(part)
    return parts


def image_of_part(part: Mapping[str, Any]) -> RecordedImage | None:
    """The image of an ``input_image`` part whose ``image_url`` is a base64 ``data:`` URL of
    an image type, ``None`` for any other (a remote URL is not the image itself; anything
    else the clients would refuse as image content in a ``read_item`` answer). A ``detail``
    outside the Responses values is dropped."""
    url = part.get("image_url")
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, _, data = url[5:].partition(",")
    mime_type, _, encoding = header.partition(";")
    mime_type = mime_type or "image/png"
    if encoding != "base64" or not _BASE64.fullmatch(data) or not _IMAGE_TYPE.fullmatch(mime_type):
        return None
    detail = part.get("detail")
    return RecordedImage(data, mime_type, detail if detail in IMAGE_DETAILS else None)


def parts_text(parts: Sequence[Mapping[str, Any]]) -> str:
    """The parts as history content: text as it is, an image as Local's placeholder."""
    lines = []
    for part in parts:
        if part.get("type") == "input_text":
            lines.append(part["text"])
        else:
            image = image_of_part(part)
            lines.append(image_placeholder(image.mime_type if image else None))
    return "\n".join(lines)


def parts_images(parts: Sequence[Mapping[str, Any]]) -> tuple[RecordedImage, ...]:
    found = (image_of_part(part) for part in parts if part.get("type") == "input_image")
    return tuple(image for image in found if image is not None)


def _key(item: Mapping[str, Any], fallback: str) -> str:
    item_id = item.get("id")
    if isinstance(item_id, str) and item_id:
        return item_id
    return "h_" + hashlib.sha256(fallback.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def history_items(
    items: Iterable[Mapping[str, Any]],
    window_id: str,
    marked: Mapping[tuple[str | None, str], frozenset[str]],
    decrypt: Decrypt,
) -> list[RecordedItem]:
    """The conversation in ``items`` as history: user, assistant, developer and system
    messages, tool calls and their outputs. The harness resends its developer messages with
    every request of a window; they are recorded once per window, like any resent item.
    Reasoning is the model's own ciphertext and is not history."""
    recorded: list[RecordedItem] = []
    calls: dict[str, OpenedCall] = {}
    # An output is known by the item of the call it answers (the latest of that call id
    # before it): call ids may repeat within a window, item ids do not.
    call_keys: dict[str, str] = {}
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in HISTORY_ROLES:
                continue
            parts = content_parts(item.get("content"), decrypt)
            text = parts_text(parts)
            images = parts_images(parts)
            # Without an id, a message is known by what it says, its images included.
            said = "".join([f"{role}\0{text}", *(f"\0{image.data}" for image in images)])
            recorded.append(RecordedItem(window_id, _key(item, said), role, text, images=images))
        elif kind == "function_call":
            call = open_call(item, marked, decrypt)
            calls[call.call_id] = call
            arguments: object = call.arguments
            sent = item.get("arguments")
            if not arguments and isinstance(sent, str) and sent.strip() not in ("", "{}"):
                arguments = sent  # unreadable as an object: kept as the text the client sent
            text = codec.dumps({"tool": call.name, "arguments": arguments}).decode()
            key = _key(item, f"call\0{call.call_id}")
            call_keys[call.call_id] = key
            recorded.append(
                RecordedItem(window_id, key, "assistant", text, call.name, call.namespace)
            )
        elif kind == "custom_tool_call":
            name = str(item.get("name", ""))
            call_id = str(item.get("call_id", ""))
            calls[call_id] = OpenedCall(call_id, name, None, {"input": item.get("input")})
            text = str(item.get("input", ""))
            key = _key(item, f"call\0{call_id}")
            call_keys[call_id] = key
            recorded.append(RecordedItem(window_id, key, "assistant", text, name, None))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = str(item.get("call_id", ""))
            origin = calls.get(call_id)
            parts = content_parts(item.get("output"), decrypt)
            key = _key(item, f"output\0{call_keys.get(call_id, call_id)}")
            recorded.append(
                RecordedItem(
                    window_id,
                    key,
                    "tool",
                    parts_text(parts),
                    origin.name if origin else None,
                    origin.namespace if origin else None,
                    parts_images(parts),
                )
            )
    return recorded
