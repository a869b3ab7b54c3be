"""Tree passes the mode conformance suite every mode must pass."""

from __future__ import annotations

import ctxmodes_tree
from ctxmodes.testing.conformance import ModeConformance


class TestTreeConformance(ModeConformance):
    plugin = ctxmodes_tree
    mode_name = "tree"
