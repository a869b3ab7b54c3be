"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.config import Settings
    from ctxmodes.session_mode import ModeRequest

#: How the command line confirms a change of a session's recorded mode.
CONFIRM_SWITCH = "pass --switch-mode to switch"


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode (overrides configuration and CTXMODES_MODE)",
    )


def add_session_mode_options(parser: argparse.ArgumentParser) -> None:
    """``--mode`` and ``--switch-mode`` of a command that runs a session: a session keeps the
    mode it records, so asking for another one must be confirmed."""
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode of a new session; an existing session keeps the mode "
        "it records unless --switch-mode confirms the change",
    )
    parser.add_argument(
        "--switch-mode",
        action="store_true",
        help="confirm switching an existing session to --mode",
    )


def mode_request(args: argparse.Namespace) -> ModeRequest | None:
    """The mode the command line asks for explicitly (``None``: the session's own, or the
    configured default for a new one)."""
    from ctxmodes.session_mode import ModeRequest

    if args.mode is None:
        return None
    return ModeRequest(args.mode, confirmed=args.switch_mode)


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command's flags override, as dotted keys."""
    return {"mode": getattr(args, "mode", None), "model": getattr(args, "model", None)}


def agent_settings(args: argparse.Namespace) -> tuple[Path, Settings]:
    """The working directory (``--cwd`` or the current one) and the effective settings of a
    command that runs the agent, which needs a model. Their mode is the configured default.

    :raises CtxmodesError: the directory does not exist, or no model is configured.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.errors import CtxmodesError

    cwd = (args.cwd if args.cwd is not None else Path.cwd()).resolve()
    if not cwd.is_dir():
        raise CtxmodesError(f"no such directory: {cwd}")
    # ``--mode`` is a request for this session (see ``mode_request``), not the default.
    settings = load_settings(cwd=cwd, cli={"model": getattr(args, "model", None)}).settings
    if not settings.model:
        raise CtxmodesError("no model configured: pass --model scripted:FILE or set CTXMODES_MODEL")
    return cwd, settings
