"""Test support for mode authors: pytest fixtures, a real host to drive, and the mode
conformance suites.

The fixtures are installed as a pytest plugin (entry point ``pytest11``); the suites are base
classes to subclass::

    from ctxmodes.testing import ModeConformance
    import my_mode

    class TestMyMode(ModeConformance):
        plugin = my_mode
        mode_name = "mine"

Import from here; the submodules are internal. The names load on first use, so the pytest
plugin costs nothing in a test run that does not use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ctxmodes.testing.clock import SimulatedClock
    from ctxmodes.testing.conformance import ContextWindowConformance, ModeConformance
    from ctxmodes.testing.faults import CampaignReport, FaultyDisk, run_campaign
    from ctxmodes.testing.harness import HostHarness
    from ctxmodes.testing.plugin import isolated_plugin_manager

_EXPORTS: dict[str, str] = {
    "CampaignReport": "ctxmodes.testing.faults",
    "ContextWindowConformance": "ctxmodes.testing.conformance",
    "FaultyDisk": "ctxmodes.testing.faults",
    "HostHarness": "ctxmodes.testing.harness",
    "ModeConformance": "ctxmodes.testing.conformance",
    "SimulatedClock": "ctxmodes.testing.clock",
    "isolated_plugin_manager": "ctxmodes.testing.plugin",
    "run_campaign": "ctxmodes.testing.faults",
}

__all__ = [
    "CampaignReport",
    "ContextWindowConformance",
    "FaultyDisk",
    "HostHarness",
    "ModeConformance",
    "SimulatedClock",
    "isolated_plugin_manager",
    "run_campaign",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
