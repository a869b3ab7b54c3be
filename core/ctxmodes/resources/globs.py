"""Glob patterns as Pi matches them (the ``minimatch`` package with its defaults).

``wcmatch`` does the matching, with minimatch's features switched on: ``**`` across
segments, ``{a,b}`` and ``{1..3}`` alternatives, and extended globs (``?(…)``, ``*(…)``,
``+(…)``, ``@(…)``, ``!(…)``); wildcards match no segment that starts with a dot, as in
minimatch. Two rules are minimatch's own and applied here first: a pattern starting with
``#`` matches nothing, and each leading ``!`` negates what follows (so ``!(x)`` is ``(x)``
negated, as minimatch reads it). ``tests/core/resources/test_globs.py`` holds both to the
real minimatch.
"""

from __future__ import annotations


def glob_matches(path: str, pattern: str, *, ignore_case: bool = False) -> bool:
    """Whether ``path`` (``/``-separated) matches ``pattern`` (minimatch's ``nocase`` with
    ``ignore_case``)."""
    if not pattern or pattern.startswith("#"):
        return not pattern and not path
    bangs = len(pattern) - len(pattern.lstrip("!"))
    negated, body = bangs % 2 == 1, pattern[bangs:]
    if not body:  # minimatch's empty pattern: the empty path, and the root's empty segments
        return (path in ("", "/")) != negated
    # Imported here: only settings with patterns need it (25 ms at every session's start).
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.BRACE | glob.EXTGLOB | glob.FORCEUNIX
    if ignore_case:
        flags |= glob.IGNORECASE
    return glob.globmatch(path, body, flags=flags) != negated
