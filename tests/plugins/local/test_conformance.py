"""Local passes the conformance suite of every mode and the context-window contract."""

from __future__ import annotations

import ctxmodes_local
from ctxmodes.testing.conformance import ContextWindowConformance


class TestLocalConformance(ContextWindowConformance):
    plugin = ctxmodes_local
    mode_name = "local"
