"""The markers a ctxmodes agent leaves in its environment for the processes it starts.

Pi's command line and RPC entry point set ``AI_AGENT=pi``, a marker any tool may read to
learn which agent launched it, and ``PI_CODING_AGENT=true``, which tells a child process it
runs inside Pi. ctxmodes sets the same two when it runs an agent session from its command
line (the terminal session, print, JSON and RPC modes): ``AI_AGENT`` names ctxmodes, the
agent that launched the process, and ``PI_CODING_AGENT`` says ``true`` because the session
is a Pi session whose commands get the ``PI_*`` variables with Pi's meaning, so a child that
looks for Pi finds what it looks for. Every process started afterwards inherits them: the
``bash`` tool's shell, the user's ``!`` commands, credential commands, plugins' processes.

Commands that run no agent (``models``, ``session``, ``serve`` and the like) leave the
environment alone, and so does a program embedding ctxmodes through :mod:`ctxmodes.sdk`, as
Pi leaves it alone when embedded through its SDK: the markers describe the process, which
only the command line owns.
"""

from __future__ import annotations

import os

#: The markers and their values, in the order Pi sets its own.
PROCESS_MARKERS: dict[str, str] = {"PI_CODING_AGENT": "true", "AI_AGENT": "ctxmodes"}


def mark_agent_process() -> None:
    """Set :data:`PROCESS_MARKERS` in this process's environment, over inherited values."""
    os.environ.update(PROCESS_MARKERS)
