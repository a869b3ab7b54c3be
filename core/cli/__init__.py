"""The ``ctxmodes`` command line.

Each sub-command lives in its own module of this package and exposes
``register(subparsers)``; registration must stay import-light (heavy modules are imported
inside the handler) so that ``ctxmodes --help`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ctxmodes._version import __version__
from ctxmodes.errors import CtxmodesError

# Order here is the order in ``--help``.
COMMAND_MODULES: tuple[str, ...] = (
    "ctxmodes.cli.run_cmd",
    "ctxmodes.cli.modes_cmd",
    "ctxmodes.cli.models_cmd",
    "ctxmodes.cli.config_cmd",
    "ctxmodes.cli.retrieval_cmd",
    "ctxmodes.cli.session_cmd",
    "ctxmodes.cli.demo_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxmodes",
        description="Context-management modes for coding agents over Pi session files.",
    )
    parser.add_argument("--version", action="version", version=f"ctxmodes {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        code: int = handler(args)
    except CtxmodesError as exc:
        print(f"ctxmodes: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Output piped into `head` and friends: not an error worth a traceback.
        return 0
    return code
