"""A typed facade over ``pm.hook``: the only way core code calls a session's hooks.

Each method mirrors one hookspec in :mod:`ctxmodes.hookspecs`, takes keyword arguments and
returns a typed value, so mypy checks every call site against the contract. The import-level
registration hooks (``hookspecs.MODULE_HOOKS``) have no method: the mode registry, the command
line and the model registry call them where they collect what is registered.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxmodes.errors import PluginError

if TYPE_CHECKING:
    import pluggy

    from ctxmodes.commands import Command
    from ctxmodes.events import (
        CompactionDecision,
        CompactionEvent,
        CompactionRequest,
        ContextProjection,
        ForkRequest,
        InputEvent,
        InputResult,
        NewContextOutcome,
        NewContextRequest,
        ProviderRequestEvent,
        RetrievalRequest,
        RetrievalResult,
        SessionChangeDecision,
        SessionShutdownReason,
        SessionStartReason,
        SessionSwitchRequest,
        ToolCallBlock,
        ToolCallEvent,
        ToolResultEvent,
        TreeDecision,
        TreeNavigationEvent,
        TreePreparation,
        TurnEndEvent,
        UserBashEvent,
        UserBashResult,
    )
    from ctxmodes.hostapi import HostSession
    from ctxmodes.session.models import AgentMessage
    from ctxmodes.tools.base import Tool


class HookRelay:
    """Typed calls into one plugin manager's hooks, bound to one session."""

    def __init__(self, pm: pluggy.PluginManager, session: HostSession) -> None:
        self._pm = pm
        self._hook: Any = pm.hook
        self._session = session

    @classmethod
    def for_plugin(
        cls, pm: pluggy.PluginManager, session: HostSession, plugin: object
    ) -> HookRelay:
        """A relay whose calls reach ``plugin``'s implementations only (the host uses it to
        shut down and start one mode object when the mode is switched)."""
        relay = cls(pm, session)
        relay._hook = _PluginHooks(pm, plugin)
        return relay

    # registration
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        self._hook.ctx_register_tools(register=register, session=self._session)

    def register_commands(self, register: Callable[[Command, str], None]) -> None:
        """Every plugin's commands, each with the name of the plugin that registered it
        (the terminal names it in a warning), in the order one call of the hook would
        register them: each implementation is called on its own, last registered first,
        as pluggy calls them, through the manager's tracing."""
        from ctxmodes.plugins import plugin_label

        impls = self._hook.ctx_register_commands.get_hookimpls()
        # A wrapper wraps every plugin's call, as it wraps the one call it would see.
        wrappers = {id(impl.plugin) for impl in impls if impl.wrapper or impl.hookwrapper}
        for impl in reversed([impl for impl in impls if id(impl.plugin) not in wrappers]):
            others = [
                plugin
                for plugin in self._pm.get_plugins()
                if plugin is not impl.plugin and id(plugin) not in wrappers
            ]
            call = self._pm.subset_hook_caller("ctx_register_commands", remove_plugins=others)

            label = plugin_label(impl.plugin_name, impl.plugin)

            def attributed(command: Command, plugin: str = label) -> None:
                register(command, plugin)

            call(register=attributed, session=self._session)

    # session
    def session_start(self, reason: SessionStartReason) -> None:
        self._hook.ctx_session_start(session=self._session, reason=reason)

    def session_shutdown(self, reason: SessionShutdownReason) -> None:
        self._hook.ctx_session_shutdown(session=self._session, reason=reason)

    # input and runs
    def input(self, event: InputEvent) -> InputResult | None:
        result: InputResult | None = self._hook.ctx_input(session=self._session, event=event)
        return result

    def agent_start(self) -> None:
        self._hook.ctx_agent_start(session=self._session)

    def turn_start(self, turn_index: int) -> None:
        self._hook.ctx_turn_start(session=self._session, turn_index=turn_index)

    def project_context(self, projection: ContextProjection) -> None:
        results = self._hook.ctx_project_context(session=self._session, projection=projection)
        _refuse_returned_values("ctx_project_context", results, "assign projection.messages")

    def provider_request(self, event: ProviderRequestEvent) -> None:
        results = self._hook.ctx_provider_request(session=self._session, event=event)
        _refuse_returned_values("ctx_provider_request", results, "edit or assign event.request")

    def message_end(self, message: AgentMessage) -> AgentMessage | None:
        result: AgentMessage | None = self._hook.ctx_message_end(
            session=self._session, message=message
        )
        return result

    def tool_call(self, event: ToolCallEvent) -> ToolCallBlock | None:
        result: ToolCallBlock | None = self._hook.ctx_tool_call(session=self._session, event=event)
        return result

    def tool_result(self, event: ToolResultEvent) -> None:
        results = self._hook.ctx_tool_result(session=self._session, event=event)
        _refuse_returned_values("ctx_tool_result", results, "assign event.result")

    def turn_end(self, event: TurnEndEvent) -> None:
        self._hook.ctx_turn_end(session=self._session, event=event)

    def agent_end(self, messages: list[AgentMessage]) -> None:
        self._hook.ctx_agent_end(session=self._session, messages=messages)

    def agent_settled(self) -> None:
        self._hook.ctx_agent_settled(session=self._session)

    # rollover and tree
    def new_context(self, request: NewContextRequest) -> NewContextOutcome | None:
        result: NewContextOutcome | None = self._hook.ctx_new_context(
            session=self._session, request=request
        )
        return result

    def session_before_switch(self, request: SessionSwitchRequest) -> SessionChangeDecision | None:
        result: SessionChangeDecision | None = self._hook.ctx_session_before_switch(
            session=self._session, request=request
        )
        return result

    def session_before_fork(self, request: ForkRequest) -> SessionChangeDecision | None:
        result: SessionChangeDecision | None = self._hook.ctx_session_before_fork(
            session=self._session, request=request
        )
        return result

    def user_bash_askers(self) -> list[Callable[[UserBashEvent], UserBashResult | None]]:
        """One call of ``ctx_user_bash`` per plugin implementing it, in the order pluggy
        calls them, each reaching that plugin's implementations alone: as Pi asks the next
        extension when one throws, a failing plugin must not keep the others from being
        asked."""
        plugins: list[object] = []
        for implementation in reversed(self._hook.ctx_user_bash.get_hookimpls()):
            if not any(plugin is implementation.plugin for plugin in plugins):
                plugins.append(implementation.plugin)
        every = self._pm.get_plugins()
        return [
            self._user_bash_of(
                self._pm.subset_hook_caller(
                    "ctx_user_bash",
                    remove_plugins=[other for other in every if other is not plugin],
                )
            )
            for plugin in plugins
        ]

    def _user_bash_of(self, caller: Any) -> Callable[[UserBashEvent], UserBashResult | None]:
        from ctxmodes.events import UserBashResult

        def user_bash(event: UserBashEvent) -> UserBashResult | None:
            result: object = caller(session=self._session, event=event)
            if result is not None and not isinstance(result, UserBashResult):
                raise PluginError(
                    f"ctx_user_bash returned {type(result).__name__}, not a UserBashResult"
                )
            return result

        return user_bash

    def is_implemented(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (its ``ctx_`` name)."""
        return bool(getattr(self._hook, hook).get_hookimpls())

    def session_before_tree(self, preparation: TreePreparation) -> TreeDecision | None:
        result: TreeDecision | None = self._hook.ctx_session_before_tree(
            session=self._session, preparation=preparation
        )
        return result

    def session_tree(self, event: TreeNavigationEvent) -> None:
        self._hook.ctx_session_tree(session=self._session, event=event)

    # compaction
    def session_before_compact(self, request: CompactionRequest) -> CompactionDecision | None:
        result: CompactionDecision | None = self._hook.ctx_session_before_compact(
            session=self._session, request=request
        )
        return result

    def session_compact(self, event: CompactionEvent) -> None:
        self._hook.ctx_session_compact(session=self._session, event=event)

    # retrieval
    def retrieve(self, request: RetrievalRequest) -> RetrievalResult | None:
        result: RetrievalResult | None = self._hook.ctx_retrieve(
            session=self._session, request=request
        )
        return result


class _PluginHooks:
    """``pm.hook`` restricted to one plugin's implementations."""

    def __init__(self, pm: pluggy.PluginManager, plugin: object) -> None:
        self._pm = pm
        self._others = [other for other in pm.get_plugins() if other is not plugin]

    def __getattr__(self, name: str) -> Any:
        return self._pm.subset_hook_caller(name, remove_plugins=self._others)


def _refuse_returned_values(hook: str, results: list[object], instead: str) -> None:
    """:raises PluginError: an implementation of ``hook``, which changes its argument in
    place, returned something: the host would ignore it without a word."""
    if any(result is not None for result in results):
        raise PluginError(f"{hook} returned a value, which the host ignores: {instead} instead")
