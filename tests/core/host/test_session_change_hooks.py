"""Plugins may keep the current session, as Pi's extensions may with
``session_before_switch`` and ``session_before_fork``: ``/new``, a resume or a switch, and a
fork first ask ``ctx_session_before_switch`` or ``ctx_session_before_fork``, and a decision
to cancel leaves the session as it was; the RPC commands then answer ``cancelled: true``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent

from ctxmodes import ForkRequest, SessionChangeDecision, SessionSwitchRequest, hookimpl
from ctxmodes.errors import CtxmodesError
from ctxmodes.host.errors import SessionChangeCancelled
from ctxmodes.rpc import prompting, session_commands
from ctxmodes.rpc.framing import OutputLines
from ctxmodes.rpc.protocol import RpcContext
from ctxmodes.sdk.model_cycling import model_cycler


class Keeper:
    """Keeps the session when ``keep`` is set; records what it was asked."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.asked: list[Any] = []

    @hookimpl
    def ctx_session_before_switch(
        self, session: Any, request: SessionSwitchRequest
    ) -> SessionChangeDecision | None:
        self.asked.append(request)
        return SessionChangeDecision(cancel=True) if self.keep else None

    @hookimpl
    def ctx_session_before_fork(
        self, session: Any, request: ForkRequest
    ) -> SessionChangeDecision | None:
        self.asked.append(request)
        return SessionChangeDecision(cancel=True) if self.keep else None


def _agent(tmp_path: Path, keeper: Keeper) -> Any:
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}])
    agent.host.plugin_manager.register(keeper)
    return agent


def _rpc(agent: Any) -> RpcContext:
    return RpcContext(agent, OutputLines(io.BytesIO()), model_cycler(agent, [])[0])


def test_a_plugin_keeps_the_session_from_every_replacement(tmp_path: Path) -> None:
    keeper = Keeper(keep=True)
    other = tmp_path / "other.jsonl"
    with _agent(tmp_path, keeper) as agent:
        agent.prompt("hi")
        session_file, entries = agent.session_file, agent.session_manager.get_entries()
        first_user = entries[-2].id
        rpc = _rpc(agent)
        answers = [
            prompting.new_session(rpc, {"type": "new_session"}),
            session_commands.switch_session(rpc, {"sessionPath": str(other)}),
            session_commands.fork(rpc, {"entryId": first_user}),
            session_commands.clone(rpc, {}),
        ]
        with pytest.raises(SessionChangeCancelled):
            agent.new_session()
        kept = (agent.session_file, len(agent.session_manager.get_entries()))
    assert answers == [{"cancelled": True}] * 4
    assert kept == (session_file, len(entries))
    assert not other.exists()
    leaf = entries[-1].id
    assert keeper.asked == [
        SessionSwitchRequest("new"),
        SessionSwitchRequest("resume", str(other)),
        ForkRequest(first_user, "before"),
        ForkRequest(leaf, "at"),
        SessionSwitchRequest("new"),
    ]


def test_without_a_veto_the_replacements_happen_and_say_so(tmp_path: Path) -> None:
    keeper = Keeper(keep=False)
    with _agent(tmp_path, keeper) as agent:
        agent.prompt("hi")
        first, first_user = agent.session_file, agent.session_manager.get_entries()[-2].id
        rpc = _rpc(agent)
        forked = session_commands.fork(rpc, {"entryId": first_user})
        after_fork = agent.session_file
        renewed = prompting.new_session(rpc, {"type": "new_session"})
        switched = session_commands.switch_session(rpc, {"sessionPath": str(first)})
        back = agent.session_file
    assert forked == {"text": "hi", "cancelled": False}
    assert after_fork != first
    assert renewed == switched == {"cancelled": False}
    assert back == first
    assert [type(request).__name__ for request in keeper.asked] == [
        "ForkRequest",
        "SessionSwitchRequest",
        "SessionSwitchRequest",
    ]


def test_a_fork_is_asked_about_before_its_entry_is_looked_up(tmp_path: Path) -> None:
    """As Pi asks its extensions first: a cancelled fork is cancelled whatever its entry;
    an entry that does not exist is told as asked (RPC ``fork`` without a string
    ``entryId`` as ``None``), before it, and the fork fails only when it goes on."""
    keeper = Keeper(keep=True)
    with _agent(tmp_path, keeper) as agent:
        agent.prompt("hi")
        reply = agent.session_manager.get_entries()[-1].id
        rpc = _rpc(agent)
        commands = [{"entryId": "nope"}, {"entryId": reply}, {}, {"entryId": 7}]
        answers = [session_commands.fork(rpc, command) for command in commands]
        with pytest.raises(SessionChangeCancelled):
            agent.fork("nope")
        keeper.keep = False
        with pytest.raises(CtxmodesError) as before_a_reply:
            session_commands.fork(rpc, {"entryId": reply})
        with pytest.raises(CtxmodesError) as from_nothing:
            agent.fork("nope")
        kept = agent.session_manager.get_entries()[-1].id
    assert answers == [{"cancelled": True}] * 4
    assert kept == reply
    assert str(before_a_reply.value) == "Invalid entry ID for forking"
    assert str(from_nothing.value) == "Entry nope not found"
    assert keeper.asked == [
        ForkRequest("nope", "before"),
        ForkRequest(reply, "before"),
        ForkRequest(None, "before"),
        ForkRequest(None, "before"),
        ForkRequest("nope", "before"),
        ForkRequest(reply, "before"),
        ForkRequest("nope", "before"),
    ]
