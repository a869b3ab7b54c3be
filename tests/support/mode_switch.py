"""A host holding every built-in mode, on the scripted model presented as Codex (its backend the
emulator, served in process), so that a session can be switched between any two of them,
Remote included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

import ctxmodes_local
import ctxmodes_off
import ctxmodes_remote
import ctxmodes_tree
from ctxmodes.providers.script import Script
from ctxmodes.testing.harness import HostHarness
from support.codex_backend import CodexBackendEmulator, CodexDouble

BUILT_IN_MODES = ("off", "local", "tree", "remote")


def every_mode_harness(directory: Path, start: str, script: dict[str, Any]) -> HostHarness:
    """A harness in mode ``start`` whose model answers from ``script`` (as for
    :class:`~ctxmodes.providers.script.Script`)."""
    emulator = CodexBackendEmulator()
    account = emulator.add_account("acct-switch")
    client = httpx.Client(transport=httpx.WSGITransport(app=emulator))
    provider = CodexDouble(
        Script.model_validate(script),
        emulator,
        account,
        base_url="http://backend.test/backend-api/codex",
        client=client,
    )
    return HostHarness(
        directory,
        [],
        plugins=[ctxmodes_off, ctxmodes_local, ctxmodes_tree, ctxmodes_remote],
        mode=start,
        provider=provider,
    )
