"""ctxmodes' loggers, silent until the program configures logging.

ctxmodes runs inside other programs: one embedding it, the terminal's full screen. What it
logs — the traceback of a plugin or a listener that raised — it also reports in its own way
(an error notice, the failed tool's result), so the log is for whoever asked for it. Without
any configuration, Python's last-resort handler would print those records on standard error,
into the program's output; a ``NullHandler`` on the ``ctxmodes`` logger keeps them there until
the program adds a handler (``logging.basicConfig()`` is enough), as Python's logging guide
asks of a library.

Internal module.
"""

from __future__ import annotations

import logging

logging.getLogger("ctxmodes").addHandler(logging.NullHandler())


def logger(name: str) -> logging.Logger:
    """The logger of module ``name`` (a ``ctxmodes.…`` module)."""
    return logging.getLogger(name)
