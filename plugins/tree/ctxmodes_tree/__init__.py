"""The Tree context-management mode: completed windows become side branches of the session.

The model gets the same contract as in Local mode: no conversation summary is injected; each
window opens with a marker naming the previous window, recent note paths and a few history
ids; ``history`` and ``notes`` recover anything else on demand; shell, notebook and workspace
state survive a rollover. What differs is the persisted topology. When the model calls
``new_context``, the run is aborted, and once it has settled Tree navigates the session tree
back to the window's boundary with a Pi branch summary. The finished window becomes a side
branch; the active branch gains, in order::

    branch_summary → codex-context-tree-archive → codex-context-note-snapshot → window marker

The summary stays in the session file, in Pi's transcript and in ``ctxmodes session show``,
but Tree removes it from what the model is sent; the model reaches it (and every archived raw
entry) through ``history``, where it is listed first in its window and ranked first in
searches. The JSONL file is only ever appended to.

Resuming
    Tree rebuilds its archive, window and note indexes from the file when a session starts;
    nothing in memory is authoritative. Side branches are never modified.

Navigating by hand
    A ``/tree`` navigation the user asks for is ordinary navigation: the notebook is reset,
    Tree follows the selected branch, and a branch without a window marker gets a fresh
    window 0 before the next input.

Switching modes
    Switching away from Tree removes its projection and its tools. Off sends every summary
    on the active path, so the archive summaries re-enter the model's context as ordinary Pi
    branch summaries; Local and Remote keep the window markers and send only the latest
    window, so the summaries stay out, but only Tree's history reads the archived side
    branches. To leave Tree for Off cleanly, run ``/compact`` first: in Tree a manual
    compaction is Pi's own readable summary of the active path (the archived summaries plus
    the current window) followed by a fresh window, after which the session continues
    correctly without Tree. Switching to Tree mid-session continues the current window, or
    starts window 0 on the next input when the branch has none; the first rollover then
    archives everything since the first message, including history from before Tree.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import hookimpl

if TYPE_CHECKING:
    from ctxmodes import CliCommand, Evidence, HostSession, ModeSpec, SessionView
    from ctxmodes_tree.settings import TreeSettings

NAME = "tree"


def _build(session: HostSession, settings: TreeSettings) -> object:
    # Imported here so that listing modes never loads the mode's machinery.
    from ctxmodes_tree.mode import tree_mode

    return tree_mode(session, settings)


def _recognize(manager: SessionView) -> Evidence | None:
    from ctxmodes_tree.recognition import recognize

    return recognize(manager)


def _describe_switch(manager: SessionView, target: str) -> str | None:
    from ctxmodes_tree.recognition import describe_switch

    return describe_switch(manager, target)


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    # Imported here: `ctxmodes --help` imports this module and needs no mode.
    from ctxmodes import ModeSpec

    register(
        ModeSpec(
            name=NAME,
            description=(
                "Completed context windows become Pi side branches with hidden summaries; "
                "history and notes recover them"
            ),
            factory=_build,
            recognize=_recognize,
            describe_switch=_describe_switch,
            # Named, not imported: the model is pydantic, loaded when a session validates
            # its settings rather than whenever the modes are listed.
            settings="ctxmodes_tree.settings:TreeSettings",
        )
    )


def _run_demo(args: argparse.Namespace) -> int:
    from ctxmodes_tree.demo import run

    return run(args)


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    from pathlib import Path  # only when `ctxmodes demo` runs: `--help` does without pathlib

    parser.add_argument(
        "--session",
        metavar="FILE",
        type=Path,
        help="write the demo session to FILE (default: a temporary directory)",
    )


@hookimpl
def ctx_register_cli_commands(register: Callable[[CliCommand], None]) -> None:
    from ctxmodes import CliCommand

    register(
        CliCommand(
            name="demo",
            help="run a scripted Tree-mode session offline and show what the model saw",
            run=_run_demo,
            configure=_configure_demo,
            description=(
                "Run a built-in three-window session in Tree mode with a scripted model (no "
                "network), then show what the model was sent in each window, the session tree "
                "with its archived side branches, and a history search into an archived window."
            ),
        )
    )
