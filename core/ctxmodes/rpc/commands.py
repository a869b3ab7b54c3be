"""The command table of RPC mode: every command group's commands, by their ``type``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ctxmodes.rpc import (
    bash_command,
    model_commands,
    prompting,
    session_commands,
    state,
    work_commands,
)
from ctxmodes.rpc.protocol import RpcCommand

COMMANDS: Final[Mapping[str, RpcCommand]] = {
    **prompting.COMMANDS,
    **state.COMMANDS,
    **model_commands.COMMANDS,
    **session_commands.COMMANDS,
    **bash_command.COMMANDS,
    **work_commands.COMMANDS,
}
