"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
from typing import Any


def add_mode_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mode",
        metavar="NAME",
        help="context-management mode (overrides configuration and CTXMODES_MODE)",
    )


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a command's flags override, as dotted keys."""
    return {"mode": getattr(args, "mode", None), "model": getattr(args, "model", None)}
