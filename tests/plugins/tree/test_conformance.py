"""Tree passes the conformance suite of every mode and the context-window contract."""

from __future__ import annotations

import ctxmodes_tree
from ctxmodes.testing.conformance import ContextWindowConformance


class TestTreeConformance(ContextWindowConformance):
    plugin = ctxmodes_tree
    mode_name = "tree"
