"""The conformance suite fails broken modes, each with a message that says what is wrong.

Every mode here is deliberately broken in one way; each test runs the one check that must
catch it, exactly as a third party's ``TestMyMode(ModeConformance)`` would run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxmodes import ContextProjection, HostSession, ModeSpec, ToolContext, ToolResult, hookimpl
from ctxmodes.testing.conformance import ContextWindowConformance, ModeConformance
from ctxmodes.windows import LatestWindowProjection, ManagedMode, WindowStrategies


def declaring(name: str, factory: Any) -> object:
    class Plugin:
        @hookimpl
        def ctx_register_modes(self, register):
            register(ModeSpec(name=name, description=f"broken: {name}", factory=factory))

    return Plugin()


def suite(base: type, name: str, factory: Any) -> Any:
    """The conformance class a third party would write for this mode, instantiated."""
    cls = type(
        f"Test{name.title()}", (base,), {"plugin": declaring(name, factory), "mode_name": name}
    )
    return cls()


class LastTen:
    """The old README example: cuts by message count, splitting calls from results."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        projection.messages = projection.messages[-10:]


class DoubledMarker:
    """A managed mode whose projection repeats the window marker."""

    def project(self, projection: ContextProjection) -> list[Any]:
        messages = LatestWindowProjection().project(projection)
        return [messages[0], *messages] if messages else messages


def doubled_marker_mode(session: HostSession) -> ManagedMode:
    return ManagedMode(
        session, lambda mode: WindowStrategies.defaults(mode, projection=DoubledMarker())
    )


class Rewriter:
    """Rewrites the session file when a session is resumed."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    @hookimpl
    def ctx_session_start(self, session: HostSession, reason: str) -> None:
        path = session.session_manager.session_file
        if reason == "resume" and path is not None:
            lines = Path(path).read_bytes().splitlines(keepends=True)
            Path(path).write_bytes(b"".join(lines[:1] + lines[2:]))


class FragileOnNavigation:
    """Keeps a stale view of the branch and breaks when the user navigates."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: object) -> None:
        raise KeyError("leaf")


class SilentRollover:
    """Offers new_context, history and notes but answers them itself, past the hooks."""

    def __init__(self, session: HostSession) -> None:
        self.inner = ManagedMode(session, assemble_local)

    @hookimpl
    def ctx_register_tools(self, register: Any, session: HostSession) -> None:
        for name in ("new_context", "get_context_remaining", "history", "notes"):
            register(_SelfAnswering(name))


def assemble_local(mode: ManagedMode) -> WindowStrategies:
    return WindowStrategies.defaults(mode)


class _SelfAnswering:
    def __init__(self, name: str) -> None:
        self.name = name
        self.label = name
        self.description = name
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        return ToolResult.text("done")


@pytest.mark.parametrize(
    ("factory", "check", "message"),
    [
        (
            LastTen,
            "test_requests_keep_tool_calls_with_their_results",
            r"request \d+ starts with a result of tool 'bash' .* whose call is not in the request",
        ),
        (
            doubled_marker_mode,
            "test_requests_carry_one_marker_at_most",
            r"request \d+ carries 2 window markers",
        ),
        (
            Rewriter,
            "test_survives_compaction_navigation_and_resume",
            r"the session file was rewritten during a resume",
        ),
        (
            FragileOnNavigation,
            "test_survives_compaction_navigation_and_resume",
            r"the mode failed during a /tree navigation: KeyError\('leaf'\)",
        ),
    ],
    ids=["cuts-pairs", "doubles-marker", "rewrites-file", "breaks-on-navigation"],
)
def test_the_mode_suite_says_what_is_wrong(ctx_host, factory, check, message):
    broken = suite(ModeConformance, "broken", factory)
    with pytest.raises(AssertionError, match=message):
        getattr(broken, check)(ctx_host)


def test_the_context_window_suite_sees_tools_that_bypass_the_hooks(ctx_host):
    broken = suite(ContextWindowConformance, "silent", SilentRollover)
    with pytest.raises(AssertionError, match="did not go through ctx_retrieve: other plugins"):
        broken.test_answers_new_context_and_retrieval_through_the_hooks(ctx_host)


@pytest.mark.parametrize(
    "check",
    [
        "test_requests_keep_tool_calls_with_their_results",
        "test_requests_carry_one_marker_at_most",
        "test_survives_compaction_navigation_and_resume",
    ],
)
def test_a_correct_mode_passes_the_same_checks(ctx_host, check):
    getattr(
        suite(ModeConformance, "correct", lambda session: ManagedMode(session, assemble_local)),
        check,
    )(ctx_host)
