"""Differential test: for every provider case, our transport against the real Pi's.

Each case is served by the oracle's own canned server (``provider_oracle.mjs --serve``), so
our transport receives the bytes Pi received; what it sent (method, path, Pi's headers, the
JSON body) and what it produced (events and the final message) must equal Pi's recorded
output in ``NAME.expected.json``. Cases come from ``$PI_PROVIDER_CASES`` (default
``../shared/pi-oracle/provider-cases``), so any directory in that format can be judged, and
from ``cases/`` beside this file: the project's own cases (Chat Completions compat flags,
strict tools), whose expected files the real Pi wrote (``provider_oracle.mjs --update``) and
which :func:`test_own_cases_are_what_the_real_pi_produces` checks again against Pi.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import pi_node_modules, require_node, require_pi
from support.provider_cases import (
    case_names,
    cases_dir,
    expected_event_view,
    normalized_message,
    request_view,
    run_case,
    without_invented_id_clock,
)

from ctxmodes.providers.apis import API_MODULES
from ctxmodes.session.models import AssistantMessage, to_json

pytestmark = pytest.mark.pi

#: Where ctxmodes deliberately differs from Pi (docs/models.md, "Differences from Pi's
#: transports"); each has its own test below showing both behaviours.
DELIBERATE = {
    "codex_crlf_frames_response_done": "Pi's Codex parser splits frames on \\n\\n only",
    "completions_content_parts_array": "Pi appends typed content parts to text as JS values",
}

#: How the oracle records the user agent Pi (and ctxmodes) send.
PI_USER_AGENT = "pi (<platform> <release>; <arch>)"

_DIR = cases_dir()
#: The project's own cases, in the oracle's format.
OWN_CASES = Path(__file__).parent / "cases"
#: Each case name and the directory holding it.
_WHERE: dict[str, Path] = {
    **(dict.fromkeys(case_names(_DIR), _DIR) if _DIR is not None and _DIR.is_dir() else {}),
    **dict.fromkeys(case_names(OWN_CASES), OWN_CASES),
}
_NAMES = sorted(_WHERE)


def _load(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    directory = _WHERE[name]
    case = json.loads((directory / f"{name}.json").read_text())
    expected = json.loads((directory / f"{name}.expected.json").read_text())
    return case, expected


def _require_transport(case: dict[str, Any]) -> None:
    module = API_MODULES.get(case["api"])
    if module is None or importlib.util.find_spec(module) is None:
        pytest.skip(f"no transport for api {case['api']!r}")


def _as_sent(request: dict[str, Any]) -> dict[str, Any]:
    """A recorded request of Pi as ctxmodes sends it: Pi's fixed-URL calls (the token
    refresh) go through Node's fetch, whose user agent is ``node``; ctxmodes sends Pi's own
    ``pi (…)`` user agent there as everywhere. The oracle's ``url`` records the redirect."""
    if "url" not in request:
        return request
    sent = {key: value for key, value in request.items() if key != "url"}
    if sent["headers"].get("user-agent") == "node":
        sent["headers"] = {**sent["headers"], "user-agent": PI_USER_AGENT}
    return sent


def _run(name: str) -> Any:
    pi = require_pi()
    return run_case(require_node(), pi.oracle, _WHERE[name], name)


def test_cases_are_found() -> None:
    assert case_names(OWN_CASES), f"no cases in {OWN_CASES}"
    if _DIR is None or not _DIR.is_dir():
        pytest.skip("the oracle's provider cases not found: set PI_PROVIDER_CASES")
    assert set(case_names(_DIR)) <= set(_NAMES)


def test_own_cases_are_what_the_real_pi_produces() -> None:
    """The expected files of the project's cases are the real Pi's output, byte for byte."""
    pi = require_pi()
    checked = subprocess.run(
        [require_node(), str(pi.oracle / "provider_oracle.mjs"), "--check", str(OWN_CASES)],
        capture_output=True,
        text=True,
        env={**os.environ, "PI_NODE_MODULES": str(pi_node_modules())},
        timeout=300,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"{len(case_names(OWN_CASES))} passed, 0 failed" in checked.stdout


@pytest.mark.parametrize("name", [name for name in _NAMES if name not in DELIBERATE])
def test_same_request_events_and_message_as_pi(name: str) -> None:
    case, expected = _load(name)
    _require_transport(case)
    run = _run(name)
    assert [request_view(r) for r in run.requests] == [
        _as_sent(request_view(r)) for r in expected["requests"]
    ]
    if "thrown" in expected:
        assert run.thrown == expected["thrown"]
        return
    assert run.thrown is None
    assert without_invented_id_clock(run.events) == without_invented_id_clock(
        [expected_event_view(event) for event in expected["events"]]
    )
    if "credentials" in expected:
        assert run.credentials == expected["credentials"]
    message = without_invented_id_clock(normalized_message(run.message))
    assert message == without_invented_id_clock(expected["message"])
    assert list(message) == list(expected["message"]), "keys in Pi's order"
    # The session stores the answer as the transport made it, keys in the same order.
    stored = to_json(AssistantMessage.model_validate(run.message))
    assert json.dumps(stored) == json.dumps(run.message)


def test_crlf_framed_codex_stream_is_read_where_pi_fails() -> None:
    name = "codex_crlf_frames_response_done"
    if name not in _NAMES:
        pytest.skip(f"{name} not among the cases")
    _case, expected = _load(name)
    run = _run(name)
    assert expected["message"]["stopReason"] == "error"
    assert expected["message"]["errorMessage"].startswith("Invalid Codex SSE JSON")
    assert run.message["stopReason"] == "stop"
    assert [block["text"] for block in run.message["content"]] == ["Hello"]
    assert [request_view(r) for r in run.requests] == [
        request_view(r) for r in expected["requests"]
    ]


def test_typed_content_parts_are_read_as_thinking_and_text_where_pi_stores_object_text() -> None:
    name = "completions_content_parts_array"
    if name not in _NAMES:
        pytest.skip(f"{name} not among the cases")
    _case, expected = _load(name)
    run = _run(name)
    assert expected["message"]["content"][0]["text"].startswith("[object Object]")
    blocks = run.message["content"]
    assert [block["type"] for block in blocks] == ["thinking", "text"]
    assert blocks[0]["thinking"].startswith("Okay, the user is asking for the product of 17 and 23")
    assert blocks[0]["thinking"].endswith("= 391.")
    assert blocks[1]["text"] == "391"
    assert "[object Object]" not in str(run.message)
    # Everything else is Pi's: the request, usage, ids and stop reason.
    assert [request_view(r) for r in run.requests] == [
        request_view(r) for r in expected["requests"]
    ]
    for key in ("usage", "stopReason", "responseId", "responseModel", "rawStopReason"):
        assert run.message[key] == expected["message"][key]


def test_oracle_install_is_located() -> None:
    # The differential tests above skip without Pi; in CI `make pi` installs it.
    if pi_node_modules() is None:
        pytest.skip("Pi 0.85 not installed")
    assert (Path(str(pi_node_modules())) / "@earendil-works" / "pi-ai").is_dir()
