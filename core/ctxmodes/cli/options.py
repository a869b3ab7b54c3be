"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.config import Settings


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode (overrides configuration and CTXMODES_MODE)",
    )


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command's flags override, as dotted keys."""
    return {"mode": getattr(args, "mode", None), "model": getattr(args, "model", None)}


def agent_settings(args: argparse.Namespace) -> tuple[Path, Settings]:
    """The working directory (``--cwd`` or the current one) and the effective settings of a
    command that runs the agent, which needs a model.

    :raises CtxmodesError: the directory does not exist, or no model is configured.
    """
    from ctxmodes.config import load_settings
    from ctxmodes.errors import CtxmodesError

    cwd = (args.cwd if args.cwd is not None else Path.cwd()).resolve()
    if not cwd.is_dir():
        raise CtxmodesError(f"no such directory: {cwd}")
    settings = load_settings(cwd=cwd, cli=cli_overrides(args)).settings
    if not settings.model:
        raise CtxmodesError("no model configured: pass --model scripted:FILE or set CTXMODES_MODEL")
    return cwd, settings
