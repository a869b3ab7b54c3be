"""The one vocabulary: every host record type is either projected onto the SDK events or
declared unprojected, and every SDK event comes from a projection or from the interface."""

from __future__ import annotations

import inspect
import typing

import ctxmodes.sdk.events as events_module
from ctxmodes.host.records import HostRecord, ProviderRequested
from ctxmodes.providers.base import ModelRequest
from ctxmodes.sdk import AgentEvent, RequestSent, SummaryStarted
from ctxmodes.sdk.events import FROM_THE_INTERFACE, PROJECTION, UNPROJECTED, translate


def test_every_record_type_is_projected_or_declared_unprojected() -> None:
    record_types = set(typing.get_args(HostRecord))
    assert set(PROJECTION) | UNPROJECTED == record_types
    assert set(PROJECTION) & UNPROJECTED == set()


def test_every_event_type_has_a_source() -> None:
    """Each event is built by the projection or comes from the interface: none is declared
    and never sent."""
    projection = inspect.getsource(events_module)
    projection = projection[projection.index("def translate") :]
    sources = set(typing.get_args(AgentEvent)) - set(FROM_THE_INTERFACE)
    assert {kind.__name__ for kind in sources if f"{kind.__name__}(" not in projection} == set()


def test_a_request_becomes_the_event_of_its_purpose() -> None:
    def request(purpose: str) -> ProviderRequested:
        return ProviderRequested(
            ModelRequest(system_prompt="", messages=[], purpose=purpose), "scripted"
        )

    turn = request("turn")
    assert translate(turn) == [RequestSent(turn.request)]
    assert translate(request("branch_summary")) == [SummaryStarted()]
    assert translate(request("compaction")) == []
