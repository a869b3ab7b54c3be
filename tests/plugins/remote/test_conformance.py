"""Remote against the conformance suite of every mode and the context-window contract, its
backend the emulator of the Codex contract (:mod:`support.codex_backend`).

The suite's scripted model writes plaintext; on the Codex wire the backend hands the client
the fields Codex marks ``encrypted`` as ciphertext, so the double seals them here exactly as
the backend would; :meth:`TestRemoteConformance.retrieve` seals a read's encrypted
arguments and opens the backend's ``encrypted_output`` with the account's key, and
:meth:`TestRemoteConformance.refusal` opens a refusal, which the backend seals like any
answer. The emulator's history is the kit's (the window log and operations the service
uses), so the contract's ids, order and limits are checked for real.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.codex_backend import Account, CodexBackendEmulator, CodexDouble

import ctxmodes_remote
from ctxmodes.events import RetrievalRequest
from ctxmodes.hooks import HookRelay
from ctxmodes.providers.script import Script
from ctxmodes.session.models import ToolResultMessage
from ctxmodes.testing.conformance import ContextWindowConformance
from ctxmodes.testing.harness import HostHarness
from ctxmodes.windows import FAMILIES, OPERATIONS, Family

BASE_URL = "http://backend.test/backend-api/codex"


def _sealed_call(
    emulator: CodexBackendEmulator, account: Account, call: dict[str, Any]
) -> dict[str, Any]:
    family, arguments = call.get("name"), dict(call.get("arguments", {}))
    operation = (
        OPERATIONS.get(family, {}).get(arguments.get("action")) if family in FAMILIES else None
    )
    if operation is not None:
        for field in operation.encrypted:
            if isinstance(arguments.get(field), str):
                arguments[field] = emulator.encrypt(account, arguments[field])
    return {**call, "arguments": arguments}


def _sealed(
    emulator: CodexBackendEmulator, account: Account, responses: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    return [
        {**step, "tool_calls": [_sealed_call(emulator, account, c) for c in step["tool_calls"]]}
        if "tool_calls" in step
        else step
        for step in responses
    ]


class TestRemoteConformance(ContextWindowConformance):
    plugin = ctxmodes_remote
    mode_name = "remote"

    @pytest.fixture
    def emulator(self) -> CodexBackendEmulator:
        return CodexBackendEmulator()

    @pytest.fixture
    def account(self, emulator: CodexBackendEmulator) -> Account:
        return emulator.add_account("acct-conformance")

    @pytest.fixture
    def ctx_host(
        self, ctx_host: Callable[..., HostHarness], emulator: CodexBackendEmulator, account: Account
    ) -> Callable[..., HostHarness]:
        def make(responses: list[dict[str, Any]], **options: Any) -> HostHarness:
            sealed = _sealed(emulator, account, responses)
            client = httpx.Client(transport=httpx.WSGITransport(app=emulator))
            script = Script.model_validate({"responses": sealed})
            provider = CodexDouble(script, emulator, account, base_url=BASE_URL, client=client)
            return ctx_host(sealed, provider=provider, **options)

        self._emulator, self._account = emulator, account
        return make

    def opened(self, details: Any) -> dict[str, Any]:
        sealed = details["codexHistoryNotes"]["encrypted_output"]
        answer: dict[str, Any] = self._emulator.decrypt_json(self._account, sealed)
        return answer

    def refusal(self, result: ToolResultMessage) -> str | None:
        # The backend refuses inside its ciphertext (Codex keeps statuses from the model):
        # the session only ever holds "<family> operation completed" and the sealed answer.
        if result.is_error:
            return super().refusal(result)
        error = self.opened(result.details).get("error")
        return error if isinstance(error, str) else None

    def retrieve(
        self, harness: HostHarness, family: Family, action: str, **arguments: Any
    ) -> dict[str, Any]:
        sealed = _sealed_call(
            self._emulator,
            self._account,
            {"name": family, "arguments": {"action": action, **arguments}},
        )
        relay = HookRelay(harness.host.plugin_manager, harness.session)
        result = relay.retrieve(
            RetrievalRequest(family=family, action=action, arguments=sealed["arguments"])
        )
        assert result is not None, f"the mode did not answer {family} {action}"
        assert not result.is_error, result.text
        return self.opened(result.details)
