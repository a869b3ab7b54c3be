"""``ctxmodes chat`` (and ``ctxmodes`` alone on a terminal): the interactive session.

``-c/--continue`` continues the most recent session of the working directory, ``-r/--resume``
picks one first, ``--session FILE`` opens (or creates) that file; ``--mode`` and ``--model``
work as for ``run``. Prompts typed in the editor are kept in a history file in the
platform's state directory.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ctxmodes.cli.options import add_mode_option, agent_settings
from ctxmodes.errors import CtxmodesError


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "chat", help="the interactive session (also what `ctxmodes` alone starts on a terminal)"
    )
    add_mode_option(parser)
    parser.add_argument("--model", metavar="SPEC", help="the model, e.g. scripted:FILE")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--session", metavar="FILE", type=Path, help="the session file to open")
    where.add_argument(
        "-c",
        "--continue",
        dest="continue_recent",
        action="store_true",
        help="continue the most recent session of the working directory",
    )
    where.add_argument(
        "-r", "--resume", action="store_true", help="pick a session of the working directory"
    )
    parser.add_argument("--cwd", metavar="DIR", type=Path, help="working directory")
    parser.set_defaults(handler=run)


def default_args() -> argparse.Namespace:
    """The arguments of a bare ``ctxmodes``."""
    return argparse.Namespace(
        mode=None, model=None, session=None, continue_recent=False, resume=False, cwd=None
    )


def history_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("ctxmodes")) / "prompt-history"


def require_terminal() -> None:
    """The interactive session draws on a terminal and reads keys from one: refuse at once,
    before anything is opened or created, when either end is not a terminal."""
    import sys

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise CtxmodesError(
            "the interactive session needs a terminal; for one prompt without a terminal, "
            "use `ctxmodes run PROMPT`"
        )


def run(args: argparse.Namespace) -> int:
    from ctxmodes.session.paths import default_session_dir

    require_terminal()
    cwd, settings = agent_settings(args)
    session_file: Path | None = args.session
    if args.resume:
        from ctxmodes.tui.resume import pick_session

        session_file = pick_session(Path(default_session_dir(cwd)))
        if session_file is None:
            return 0
    return _chat(cwd, settings, session_file, args.continue_recent)


def _chat(cwd: Path, settings: Any, session_file: Path | None, continue_recent: bool) -> int:
    from prompt_toolkit.history import FileHistory

    from ctxmodes.sdk import open_agent
    from ctxmodes.tui.app import TerminalSession, tune_for_typing

    agent = open_agent(
        cwd=cwd, settings=settings, session_file=session_file, continue_recent=continue_recent
    )
    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tune_for_typing()
        TerminalSession(agent, history=FileHistory(str(path))).run()
    finally:
        agent.close()
    return 0
