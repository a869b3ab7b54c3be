"""What RPC commands and responses are made of.

A response is ``{"id", "type": "response", "command", "success", "data" | "error"}`` in
that key order, as Pi writes it; ``id`` is the command's own value and is left out when the
command had none (as ``JSON.stringify`` leaves out ``undefined``), ``data`` when the command
answers nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from ctxmodes.errors import CtxmodesError
from ctxmodes.session.models import ImageContent

if TYPE_CHECKING:
    from ctxmodes.config_reload import ReloadableSettings
    from ctxmodes.rpc.framing import OutputLines
    from ctxmodes.sdk.agent import Agent
    from ctxmodes.sdk.model_cycling import ModelCycler

JsonObject = dict[str, Any]


class _Absent:
    """A field the command did not have (``undefined`` in Pi's JavaScript)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


class RpcCommandError(CtxmodesError):
    """The command failed; its message is the response's ``error``."""


@dataclass(frozen=True)
class RpcContext:
    """What a command handler works with."""

    agent: Agent
    lines: OutputLines
    #: Cycles the model scope (``--models``), else every model with credentials.
    cycler: ModelCycler
    #: The run's settings and how to read them again for each session that replaces the
    #: running one; ``None``: the run's stay.
    settings: ReloadableSettings | None = None


#: A handler: the command's fields in, the response's ``data`` out (``ABSENT``: none).
#: It raises :class:`~ctxmodes.errors.CtxmodesError` to fail the command with its message.
Handler = Callable[[RpcContext, Mapping[str, Any]], object]


@dataclass(frozen=True)
class RpcCommand:
    handler: Handler
    #: Runs on a thread of its own, because it waits for the session (``abort``,
    #: ``compact``, ``bash``): the commands read after it are handled meanwhile, as in Pi.
    waits: bool = False


def response(request_id: object, command: object, data: object = ABSENT) -> JsonObject:
    """A command's successful response."""
    reply: JsonObject = {}
    if request_id is not ABSENT:
        reply["id"] = request_id
    reply["type"] = "response"
    if command is not ABSENT:
        reply["command"] = command
    reply["success"] = True
    if data is not ABSENT:
        reply["data"] = data
    return reply


def failure(request_id: object, command: object, message: str) -> JsonObject:
    """A command's failed response."""
    reply = response(request_id, command)
    reply["success"] = False
    reply["error"] = message
    return reply


def text_field(command: Mapping[str, Any], name: str) -> str:
    """The command's string field ``name``.

    :raises RpcCommandError: it is missing or not a string.
    """
    value = command.get(name)
    if not isinstance(value, str):
        raise RpcCommandError(f'{command.get("type")} needs a string "{name}"')
    return value


def images_field(command: Mapping[str, Any]) -> tuple[ImageContent, ...]:
    """The command's ``images`` (Pi's ``ImageContent`` objects), none when absent.

    :raises RpcCommandError: not a list of images.
    """
    value = command.get("images")
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RpcCommandError('"images" must be a list of image objects')
    try:
        return tuple(ImageContent.model_validate(image) for image in value)
    except ValidationError:
        raise RpcCommandError(
            'each image must be {"type": "image", "data": <base64>, "mimeType": <type>}'
        ) from None
