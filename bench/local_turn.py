"""Benchmark of the Local mode's per-turn overhead: what runs before every model request.

Run: ``.venv/bin/python bench/local_turn.py [--sizes 10000,100000] [--windows 100]``

For each size it writes a Local session of user / assistant / tool-result exchanges (~600
characters each) cut into ``--windows`` windows, each opened by a ``new_context`` marker and
trimmed once by the fixed no-summary compaction Local writes, reopens it, and times:

* ``context``: the host building Pi's context of the leaf (the store keeps it incrementally);
* ``projection + shaping``: Local's ``ctx_project_context`` (the latest window, marker
  concealed) plus ``ctx_provider_request`` (marker promoted to a developer message);
* ``append``: one append reaching Local's window state.

The current window has the same size at every session size, so the printed ratios
(largest ÷ smallest size, measured in the same run) show whether the per-turn cost depends
on the session's length: it must not.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from sizes import best, compare_sizes
from smoke import parse_args
from tree_index import CURRENT_WINDOW_EXCHANGES, Writer

import ctxmodes_local
from ctxmodes import ModelCapabilities
from ctxmodes.events import ContextProjection, ProviderRequestEvent
from ctxmodes.host.branch_view import LazyBranch
from ctxmodes.modes import ModeRegistry
from ctxmodes.offline import OfflineSession
from ctxmodes.providers.base import ModelRequest
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes.testing.plugin import isolated_plugin_manager
from ctxmodes.windows import ManagedMode
from ctxmodes.windows.compaction import no_summary_compaction


class LocalWriter(Writer):
    """Writes what Local appends: a marker per window and, once, the trimming compaction."""

    def rollover(self) -> None:
        self.identity = self.identity.advance()
        self.boundary = self.marker()
        fixed = no_summary_compaction(
            boundary_entry_id=self.boundary,
            default_first_kept_entry_id=self.boundary,
            tokens_before=1,
            window_id=self.identity.current_window_id,
        )
        self.manager.append_compaction(
            fixed.summary, fixed.first_kept_entry_id, fixed.tokens_before, fixed.details.dump()
        )


def build(path: Path, entries: int, windows: int) -> Path:
    manager = SessionManager.create(path, path / "sessions", durability=Durability.NONE)
    writer = LocalWriter(manager)
    closed_exchanges = max(1, (entries - 3 * CURRENT_WINDOW_EXCHANGES) // (3 * windows))
    for window in range(windows + 1):
        last = window == windows
        for n in range(CURRENT_WINDOW_EXCHANGES if last else closed_exchanges):
            writer.exchange(f"detail-w{window}-n{n}")
        if not last:
            writer.rollover()
    file = manager.session_file
    assert file is not None
    manager.close()
    return file


def measure(file: Path) -> dict[str, float]:
    manager = SessionManager.open(file, durability=Durability.NONE)
    session = OfflineSession(manager, mode_name="local", context_window=272_000)
    pm = isolated_plugin_manager(ctxmodes_local)
    mode = ModeRegistry.from_plugin_manager(pm).activate(pm, "local", session)
    assert isinstance(mode, ManagedMode)
    pm.hook.ctx_session_start(session=session, reason="resume")
    figures = {"entries (count)": float(manager.entry_count())}

    def context() -> ContextProjection:
        messages = list(manager.build_session_context().messages)
        return ContextProjection(messages=messages, branch=LazyBranch(manager))

    def shaped(projection: ContextProjection) -> ModelRequest:
        pm.hook.ctx_project_context(session=session, projection=projection)
        llm = convert_to_llm(projection.messages)
        request = ModelRequest(system_prompt="", messages=list(llm))
        pm.hook.ctx_provider_request(
            session=session,
            event=ProviderRequestEvent(
                request=request, transport="scripted", capabilities=ModelCapabilities()
            ),
        )
        return request

    def turn() -> ModelRequest:
        return shaped(context())

    sent = turn()
    assert sent.messages[0].role == "developer", "the window marker leads every request"
    figures["context messages (count)"] = float(len(context().messages))
    figures["context (per turn)"] = best(context)
    figures["context + projection + shaping (per turn)"] = best(turn)
    ready = context()
    figures["projection + shaping alone (per turn)"] = best(
        lambda: shaped(ContextProjection(messages=list(ready.messages), branch=ready.branch))
    )

    def append() -> None:
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": "next"}], "timestamp": 1}
        )
        _ = mode.windows.current  # the state follows the append

    figures["append (indexes)"] = best(append, repeat=50)
    pm.hook.ctx_session_shutdown(session=session, reason="quit")
    manager.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--windows", type=int, default=100)
    args = parse_args(parser, sizes="300,600", windows=3)
    compare_sizes(
        args, lambda path, size: build(path, size, args.windows), measure, f"{args.windows} windows"
    )


if __name__ == "__main__":
    main()
