"""Where ctxmodes' own documentation is: the README and the documentation's pages, which
the built-in system prompt points the model at for questions about ctxmodes itself, as Pi's
points at Pi's.

An installed ctxmodes carries them in its package (``ctxmodes/documentation``, put there by
the wheel's build); a checkout reads them where they are written, beside ``core/``.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple


class Documentation(NamedTuple):
    readme: Path
    pages: Path


@functools.cache
def own_documentation() -> Documentation | None:
    """The README and the folder of pages, installed or checked out (``None``: neither is
    there, as in a build that left them out)."""
    package = Path(__file__).resolve().parent
    for root in (package / "documentation", package.parents[1]):
        found = Documentation(root / "README.md", root / "docs")
        if found.readme.is_file() and (found.pages / "index.md").is_file():
            return found
    return None
