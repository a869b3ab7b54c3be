"""The mode conformance suites: what every mode, built-in or third-party, must satisfy.

Subclass :class:`ModeConformance` in a test module, set ``plugin`` (the object or module
holding the mode's ``ctx_register_modes``) and ``mode_name``; pytest then runs every check
against a fresh plugin manager holding only that plugin. Beyond registration, the suite runs
one scripted session through a real host — many turns with two tool calls each, a
compaction, a ``/tree`` navigation and a resume — and checks that every request keeps tool
calls and results paired, carries at most one window marker, that the session file is only
appended to, and that the mode survives each step. A mode that offers the context tools
(``new_context``, ``get_context_remaining``, ``history``, ``notes``) subclasses
:class:`ContextWindowConformance` instead, which adds the context-window contract.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ctxmodes import hookimpl
from ctxmodes.compaction.settings import CompactionSettings
from ctxmodes.events import NewContextRequest, RetrievalRequest
from ctxmodes.hooks import HookRelay
from ctxmodes.hookspecs import MODULE_HOOKS
from ctxmodes.hostapi import NavigationRequest
from ctxmodes.modes import ModeRegistry, mode_plugin_name
from ctxmodes.offline import OfflineSession
from ctxmodes.plugins import CtxPluginManager
from ctxmodes.providers.base import DeveloperMessage, ModelRequest
from ctxmodes.session.models import (
    AssistantMessage,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    TextContent,
    ToolResultMessage,
)
from ctxmodes.testing.checks import AppendOnlyWatch, check_single_marker, check_tool_pairing
from ctxmodes.testing.harness import HostHarness
from ctxmodes.testing.plugin import isolated_plugin_manager
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE
from ctxmodes.windows.tools import (
    CONTEXT_TOOL_NAMES,
    GET_CONTEXT_REMAINING,
    NEW_CONTEXT,
    NEW_CONTEXT_STARTED,
    Family,
    FunctionTool,
    flat_router,
)


class ModeConformance:
    """Base class of the suite; not collected by itself (its name does not start with Test)."""

    plugin: ClassVar[object]
    mode_name: ClassVar[str]

    @pytest.fixture
    def pm(self) -> CtxPluginManager:
        return isolated_plugin_manager(self.plugin)

    @pytest.fixture
    def registry(self, pm: CtxPluginManager) -> ModeRegistry:
        return ModeRegistry.from_plugin_manager(pm)

    @pytest.fixture
    def offline_session(self, tmp_path: Path) -> OfflineSession:
        from ctxmodes.session.manager import SessionManager

        manager = SessionManager.create(cwd=tmp_path, session_dir=tmp_path / "sessions")
        return OfflineSession(manager, mode_name=self.mode_name, cwd=tmp_path)

    def test_declares_its_mode(self, registry: ModeRegistry) -> None:
        spec = registry.get(self.mode_name).spec
        assert spec.description.strip(), "a mode needs a description for `ctxmodes modes`"
        assert "\n" not in spec.description, "the description is shown on one line"

    def test_is_inert_until_activated(self, pm: CtxPluginManager) -> None:
        # Before activation only the registration hooks may be implemented at module level;
        # lifecycle hooks of an unselected mode must never run.
        lifecycle = {
            impl.plugin_name
            for name in dir(pm.hook)
            if name.startswith("ctx_") and name not in MODULE_HOOKS
            for impl in getattr(pm.hook, name).get_hookimpls()
        }
        assert lifecycle == set()

    def test_activation_registers_valid_hooks(
        self, pm: CtxPluginManager, registry: ModeRegistry, offline_session: OfflineSession
    ) -> None:
        mode_object = registry.activate(pm, self.mode_name, offline_session)
        assert pm.get_plugin(mode_plugin_name(self.mode_name)) is mode_object
        pm.check_pending()  # a misspelled hook implementation fails here
        registry.deactivate(pm, self.mode_name)
        assert pm.get_plugin(mode_plugin_name(self.mode_name)) is None

    def test_session_lifecycle_keeps_existing_lines(
        self, pm: CtxPluginManager, registry: ModeRegistry, offline_session: OfflineSession
    ) -> None:
        manager = offline_session.session_manager
        # A message first: a session file is written from its first message on.
        manager.append_message({"role": "user", "content": "probe", "timestamp": 1})
        manager.append_custom_entry("conformance-probe", {"keep": "me"})
        path = manager.session_file
        assert path is not None
        before = path.read_bytes()
        registry.activate(pm, self.mode_name, offline_session)
        relay = HookRelay(pm, offline_session)
        relay.session_start("resume")
        relay.session_shutdown("quit")
        after = path.read_bytes()
        assert after.startswith(before), "a mode may append to a session file, never rewrite it"

    # -- one lived session ----------------------------------------------------------------

    def start(self, ctx_host: HostFactory, responses: list[dict[str, Any]]) -> HostHarness:
        """A host running this mode with ``responses`` scripted."""
        return ctx_host(responses, plugins=[self.plugin], mode=self.mode_name)

    def lived_session(self, ctx_host: HostFactory) -> HostHarness:
        """Run the suite's scripted session, checking after every step that the file was
        only appended to and that the mode did not fail."""
        turns = [
            {
                "tool_calls": [
                    {"name": "bash", "arguments": {"command": f"echo step-{n}-{part}"}}
                    for part in ("a", "b")
                ]
            }
            for n in range(LIVED_TURNS)
        ]
        answers = [{"text": f"answer {n}"} for n in range(4)]
        # Keeping one token makes the short session compactable with any mode's policy.
        harness = ctx_host(
            [*turns, *answers],
            plugins=[self.plugin],
            mode=self.mode_name,
            compaction=CompactionSettings(keep_recent_tokens=1),
        )
        path = harness.manager.session_file
        assert path is not None
        watch = AppendOnlyWatch(path, lambda: harness.manager.flush())

        def step(name: str, action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as error:
                raise AssertionError(f"the mode failed during {name}: {error!r}") from error
            errors = [text for level, text in harness.ui.notifications if level == "error"]
            if errors:
                raise AssertionError(f"the mode reported an error during {name}: {errors[0]}")
            watch.check(name)

        step("a prompt with tool calls", lambda: harness.prompt("work"))
        step("a second prompt", lambda: harness.prompt("and now?"))
        step("a compaction", lambda: harness.session.compact())
        reply = next(
            entry
            for entry in harness.entries()
            if isinstance(entry, MessageEntry)
            and isinstance(entry.message, AssistantMessage)
            and entry.message.content == [TextContent(text="answer 0")]
        )
        step(
            "a /tree navigation", lambda: harness.session.navigate_tree(NavigationRequest(reply.id))
        )
        step("a prompt after navigating", lambda: harness.prompt("from here"))
        step("a resume", lambda: harness.host.resume_session(path))
        step("a prompt after resuming", lambda: harness.prompt("still there?"))
        return harness

    def test_requests_keep_tool_calls_with_their_results(self, ctx_host: HostFactory) -> None:
        harness = self.lived_session(ctx_host)
        for number, request in enumerate(harness.requests()):
            check_tool_pairing(request, number)

    def test_requests_carry_one_marker_at_most(self, ctx_host: HostFactory) -> None:
        harness = self.lived_session(ctx_host)
        for number, request in enumerate(harness.requests()):
            check_single_marker(request, number)

    def test_survives_compaction_navigation_and_resume(self, ctx_host: HostFactory) -> None:
        harness = self.lived_session(ctx_host)
        # The session answered after each step: the last prompt got the last answer.
        last = harness.session.messages[-1]
        assert isinstance(last, AssistantMessage)
        assert last.content == [TextContent(text="answer 3")], "the last prompt got no answer"


#: Turns of two tool calls in the lived session: enough that a cut by message count splits
#: a call from its result.
LIVED_TURNS = 8


# ---------------------------------------------------------------------------------------------
# The context-window contract
# ---------------------------------------------------------------------------------------------

#: Words that appear only in window 0 of the scripted sessions below.
OLD_WINDOW_PROMPT = "conformance-request-7c1f"
OLD_WINDOW_ANSWER = "conformance-answer-52ad"

#: Enough text for a compaction to find something to cut with Pi's default settings.
FILLER = "filler " * 15_000

#: The contract's refusals of note paths that would leave the notes root.
ESCAPING_NOTE_PATHS = {
    "../x": "Note paths cannot contain empty, . or .. components",
    "/etc/x": "Absolute note paths must use <agent>/notes/<path>",
    "a//b": "Note paths cannot contain empty, . or .. components",
}

HostFactory = Callable[..., HostHarness]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _window_markers(harness: HostHarness) -> list[dict[str, Any]]:
    """The ``contextManagement`` details of every ``kind: "window"`` marker, in file order."""
    found = []
    for entry in harness.custom_entries(CONTEXT_WINDOW_CUSTOM_TYPE):
        assert isinstance(entry, CustomMessageEntry)
        details = entry.details["contextManagement"]
        if details["kind"] == "window":
            found.append(details)
    return found


def _request_text(request: ModelRequest) -> str:
    return "\n".join(message.model_dump_json() for message in request.messages)


def _tool_results(harness: HostHarness, tool_name: str) -> list[ToolResultMessage]:
    return [
        entry.message
        for entry in harness.entries()
        if isinstance(entry, MessageEntry)
        and isinstance(entry.message, ToolResultMessage)
        and entry.message.tool_name == tool_name
    ]


class _HookObserver:
    """Sees each rollover and retrieval before the mode answers (and answers nothing)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    @hookimpl(tryfirst=True)
    def ctx_new_context(self, session: object, request: NewContextRequest) -> None:
        self.calls.append(("ctx_new_context", NEW_CONTEXT.name))

    @hookimpl(tryfirst=True)
    def ctx_retrieve(self, session: object, request: RetrievalRequest) -> None:
        self.calls.append(("ctx_retrieve", request.family))


class ContextWindowConformance(ModeConformance):
    """The context-window contract, for modes that offer the context tools.

    Every check runs a real host on a new session with the scripted model. The checks fix
    what the model sees and what is persisted, never how a mode gets there: a mode may
    roll over at once or after the run settles, cut the session's tree or only the request.
    """

    def rolled_over(self, ctx_host: HostFactory) -> HostHarness:
        """A session whose window 0 held a request and an answer, then ``new_context``."""
        harness = self.start(
            ctx_host,
            [
                {"text": OLD_WINDOW_ANSWER},
                _call(NEW_CONTEXT.name),
                {"text": "working in the new window"},
            ],
        )
        harness.prompt(OLD_WINDOW_PROMPT)
        harness.prompt("please continue in a fresh window")
        return harness

    def retrieve(
        self, harness: HostHarness, family: Family, action: str, **arguments: Any
    ) -> dict[str, Any]:
        """Answer one read operation through the hook the ``history``/``notes`` tools use."""
        relay = HookRelay(harness.host.plugin_manager, harness.session)
        request = RetrievalRequest(family=family, action=action, arguments=arguments)
        result = relay.retrieve(request)
        assert result is not None, f"the mode did not answer {family} {action}"
        assert not result.is_error, result.text
        answer: dict[str, Any] = result.details["codexHistoryNotes"]
        return answer

    def refusal(self, result: ToolResultMessage) -> str | None:
        """The refusal a ``history``/``notes`` result carries, ``None`` for an answer.

        A mode whose results are opaque on this side (Remote's backend answers with
        ciphertext, its refusals included) overrides this to open them.
        """
        if not result.is_error:
            return None
        return "\n".join(block.text for block in result.content if isinstance(block, TextContent))

    def note_paths(self, harness: HostHarness) -> list[str]:
        """The paths of the notes the mode keeps for the session, listed through ``notes``."""
        listed = self.retrieve(harness, "notes", "list_files_by_prefix")
        return [note["path"] for note in listed["files"]]

    def test_answers_new_context_and_retrieval_through_the_hooks(
        self, ctx_host: HostFactory
    ) -> None:
        observer = _HookObserver()
        harness = ctx_host(
            [
                _call("notes", action="write_file", path="seen.md", text="x"),
                _call("history", action="list_windows"),
                _call(NEW_CONTEXT.name),
                {"text": "done"},
            ],
            plugins=[self.plugin, observer],
            mode=self.mode_name,
        )
        harness.prompt("go")
        for hook, family in (("ctx_retrieve", "notes"), ("ctx_retrieve", "history")):
            assert (hook, family) in observer.calls, (
                f"the {family} tool did not go through {hook}: other plugins cannot see it"
            )
        assert ("ctx_new_context", NEW_CONTEXT.name) in observer.calls, (
            "the new_context tool did not go through ctx_new_context: other plugins cannot "
            "see the rollover"
        )
        for name in ("notes", "history", NEW_CONTEXT.name):
            (result,) = _tool_results(harness, name)
            assert not result.is_error, f"the mode did not answer {name}: {result.content}"

    def test_window_markers_are_never_duplicated(self, ctx_host: HostFactory) -> None:
        harness = self.rolled_over(ctx_host)
        path = harness.manager.session_file
        assert path is not None
        harness.host.resume_session(path)
        harness.prompt("after resuming")
        windows = [marker["currentWindowId"] for marker in _window_markers(harness)]
        repeated = sorted({window for window in windows if windows.count(window) > 1})
        assert not repeated, f"window {repeated[0]} was opened by more than one marker"
        for number, request in enumerate(harness.requests()):
            check_single_marker(request, number)

    def test_offers_the_context_tools(self, ctx_host: HostFactory) -> None:
        harness = self.start(ctx_host, [{"text": "ok"}])
        harness.prompt("hello")
        contract: list[FunctionTool] = [
            NEW_CONTEXT,
            GET_CONTEXT_REMAINING,
            flat_router("history"),
            flat_router("notes"),
        ]
        tools = harness.session.tools
        for schema in contract:
            assert schema.name in tools, f"{schema.name} is not registered"
            assert tools[schema.name].parameters == schema.parameters, schema.name
        (request,) = harness.requests()
        offered = {tool.name for tool in request.tools}
        assert set(CONTEXT_TOOL_NAMES) <= offered

    def test_first_input_opens_window_zero(self, ctx_host: HostFactory) -> None:
        harness = self.start(ctx_host, [{"text": "ok"}])
        assert _window_markers(harness) == [], "starting a session must not open a window"
        harness.prompt("hello")
        (window,) = _window_markers(harness)
        assert window["windowNumber"] == 0
        assert window["firstWindowId"] == window["currentWindowId"]
        assert "previousWindowId" not in window
        (request,) = harness.requests()
        first = request.messages[0]
        assert isinstance(first, DeveloperMessage), "the model must get the marker as developer"
        assert f"Current context window id: {window['currentWindowId']}" in first.text

    def test_new_context_shows_the_model_only_the_new_window(self, ctx_host: HostFactory) -> None:
        harness = self.rolled_over(ctx_host)
        old, new = _window_markers(harness)
        assert new["windowNumber"] == old["windowNumber"] + 1
        assert new["firstWindowId"] == old["firstWindowId"]
        assert new["previousWindowId"] == old["currentWindowId"]
        assert new["currentWindowId"] != old["currentWindowId"]
        (result,) = _tool_results(harness, NEW_CONTEXT.name)
        assert result.content == [TextContent(text=NEW_CONTEXT_STARTED)]
        assert result.details == {"started": True}
        request = harness.requests()[-1]
        first = request.messages[0]
        assert isinstance(first, DeveloperMessage)
        assert f"Current context window id: {new['currentWindowId']}" in first.text
        sent = _request_text(request)
        assert OLD_WINDOW_PROMPT not in sent
        assert OLD_WINDOW_ANSWER not in sent
        assert f"Current context window id: {old['currentWindowId']}" not in sent

    def test_history_ids_are_stable_and_opaque(self, ctx_host: HostFactory) -> None:
        harness = self.rolled_over(ctx_host)
        old, new = (window["currentWindowId"] for window in _window_markers(harness))
        listed = self.retrieve(harness, "history", "list_windows")
        assert [w["window_id"] for w in listed["windows"]] == [old, new]
        oldest = self.retrieve(harness, "history", "list_windows", limit=1)
        newest = self.retrieve(harness, "history", "list_windows", limit=1, recent_first=True)
        assert oldest["windows"] == listed["windows"][:1]
        assert newest["windows"] == listed["windows"][-1:]
        found = self.retrieve(harness, "history", "search_contents", query=OLD_WINDOW_PROMPT)
        assert {item["window_id"] for item in found["items"]} == {old}
        assert "user" in {item["role"] for item in found["items"]}
        items = self.retrieve(harness, "history", "list_items", window_id=old)["items"]
        assert len(items) >= 2
        for item in items:
            read = self.retrieve(
                harness,
                "history",
                "read_item",
                window_id=item["window_id"],
                item_id=item["item_id"],
            )["item"]
            assert read is not None, f"read_item refused the listed id {item['item_id']}"
            assert (read["window_id"], read["item_id"]) == (item["window_id"], item["item_id"])
            assert read["content"].startswith(item["truncated_content"])
        # The ids are the session's, not the process's: a resumed session gives the same.
        path = harness.manager.session_file
        assert path is not None
        harness.host.resume_session(path)
        assert self.retrieve(harness, "history", "list_windows") == listed
        assert self.retrieve(harness, "history", "list_items", window_id=old)["items"] == items

    def test_note_paths_cannot_escape_the_notes_root(self, ctx_host: HostFactory) -> None:
        calls = [
            {"name": "notes", "arguments": {"action": action, "path": path, "text": "x"}}
            for path in ESCAPING_NOTE_PATHS
            for action in ("write_file", "append_to_file")
        ]
        calls += [
            {"name": "notes", "arguments": {"action": "read_file", "path": path}}
            for path in ESCAPING_NOTE_PATHS
        ]
        harness = self.start(ctx_host, [{"tool_calls": calls}, {"text": "done"}])
        harness.prompt("try these paths")
        results = _tool_results(harness, "notes")
        expected = [message for message in ESCAPING_NOTE_PATHS.values() for _ in range(2)]
        expected += list(ESCAPING_NOTE_PATHS.values())
        assert [self.refusal(r) for r in results] == expected
        written = [e for e in harness.entries() if isinstance(e, CustomEntry)]
        assert [e for e in written if e.custom_type == NOTE_CUSTOM_TYPE] == []
        assert self.note_paths(harness) == []

    def test_lines_it_did_not_write_stay_byte_identical(self, ctx_host: HostFactory) -> None:
        harness = self.start(
            ctx_host,
            [
                {"text": "first answer"},
                _call("notes", action="write_file", path="plan.md", text="step one"),
                _call(NEW_CONTEXT.name),
                {"text": "in the new window"},
                {"text": "last answer"},
            ],
        )
        path = harness.manager.session_file
        assert path is not None
        steps: list[Callable[[], object]] = [
            lambda: harness.prompt("first " + FILLER),
            lambda: harness.session.compact(),
            lambda: harness.prompt("second"),
            lambda: harness.prompt("third"),
        ]
        before = b""
        for step in steps:
            step()
            harness.manager.flush()
            after = path.read_bytes()
            assert after.startswith(before), "a mode may append to a session file, never rewrite"
            before = after
        # The session went through everything the steps were meant to exercise.
        assert b'"type":"compaction"' in before
        assert self.note_paths(harness) == ["/root/notes/plan.md"]
        assert b'"text":"last answer"' in before
