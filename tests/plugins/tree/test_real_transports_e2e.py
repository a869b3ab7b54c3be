"""End to end: ``ctxmodes run --mode tree`` with a configured provider on a loopback server
that replays a conversation in each wire format — two rollovers, a notes read and a
history search — and the session then opens in the real Pi with the same context. On the
formats without a developer role the window marker travels in the system channel. The
Anthropic and Gemini formats also run with a catalog model, moved onto the server by Pi's
``models.json``, its key in the provider's own variable."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.pi_oracle import require_pi
from support.tree_sessions import assert_pi_sees_the_same, tool_results
from support.wire_server import ALL_APIS, OTHER_APIS, ConversationServer, fake_jwt

from ctxmodes.session.manager import SessionManager
from ctxmodes_tree.demo import CODE_NAME, DEMO_SCRIPT, PROMPT

ARCHIVE = "codex-context-tree-archive"


def _turns(api: str) -> list[dict[str, Any]]:
    """The demo's conversation as a model on ``api`` would call its tools: on the Responses
    endpoint Tree offers ``history``/``notes`` as namespaces, elsewhere as flat routers."""
    turns = []
    for response in DEMO_SCRIPT["responses"]:
        calls = []
        for call in response.get("tool_calls", []):
            arguments = dict(call.get("arguments", {}))
            if api == "openai-responses" and call["name"] in ("history", "notes"):
                action = arguments.pop("action")
                calls.append({"name": action, "namespace": call["name"], "arguments": arguments})
            else:
                calls.append({"name": call["name"], "arguments": arguments})
        turns.append({"text": response.get("text", ""), "tool_calls": calls})
    return turns


#: Where each format's endpoint lives under the server (Anthropic's SDK adds ``/v1``;
#: Vertex takes a custom base URL holding its version, as a proxy would).
BASE_PATHS = {
    "openai-codex-responses": "/backend-api",
    "anthropic-messages": "",
    "google-generative-ai": "/v1beta",
    "google-vertex": "/v1/projects/loop/locations/global",
}


def _configure(tmp_path: Path, api: str, base: str) -> None:
    base_url = f"{base}{BASE_PATHS.get(api, '/v1')}"
    key = fake_jwt() if api == "openai-codex-responses" else "sk-loopback"
    (tmp_path / ".ctxmodes.toml").write_text(
        "[providers.loop]\n"
        f'api = "{api}"\n'
        f'base_url = "{base_url}"\n'
        f'api_key = "{key}"\n'
        'models = [{ id = "m", context_window = 200000, max_tokens = 4096 }]\n'
    )


#: A catalog model of each format, the variable its key is read from, and where its endpoint
#: lives under the server when Pi's ``models.json`` moves the provider there.
CATALOG = {
    "anthropic-messages": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", ""),
    "google-generative-ai": ("google/gemini-2.5-flash", "GEMINI_API_KEY", "/v1beta"),
    "google-vertex": (
        "google-vertex/gemini-2.5-flash",
        "GOOGLE_CLOUD_API_KEY",
        "/v1/projects/loop/locations/global",
    ),
}


def _catalog_model(api: str, base: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The catalog model of ``api`` with its provider moved onto ``base`` by Pi's
    ``models.json`` and a key in the provider's own variable."""
    ref, variable, path = CATALOG[api]
    provider = ref.split("/", 1)[0]
    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    (agent / "models.json").write_text(
        json.dumps({"providers": {provider: {"baseUrl": f"{base}{path}"}}})
    )
    monkeypatch.setenv(variable, "sk-loopback")
    return ref


@pytest.mark.pi
@pytest.mark.parametrize(
    ("api", "source"),
    [*((api, "configured") for api in ALL_APIS), *((api, "catalog") for api in OTHER_APIS)],
)
def test_tree_session_over_each_wire_format_opens_in_pi(
    api: str,
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    session_file = tmp_path / "session.jsonl"
    with ConversationServer(api, _turns(api), DEMO_SCRIPT["summaries"]) as server:
        if source == "catalog":
            model = _catalog_model(api, server.base_url, monkeypatch)
        else:
            _configure(tmp_path, api, server.base_url)
            model = "loop/m"
        code, out, err = ctxmodes(
            capsys,
            "run",
            "--approve",  # the project file configures the loopback provider
            "--mode",
            "tree",
            "--model",
            model,
            "--session",
            str(session_file),
            PROMPT,
        )
        bodies = [json.loads(request["body"]) for request in server.requests]
    assert code == 0, err
    assert f"The release code name is {CODE_NAME}" in out

    manager = SessionManager.open(session_file)
    archives = [e for e in manager.get_entries() if getattr(e, "custom_type", None) == ARCHIVE]
    assert len(archives) == 2
    results = tool_results(manager)
    assert any("code name chosen" in text for text in results["notes"])
    assert any(CODE_NAME in text for text in results["history"])

    # The history and notes tools went on the wire in the shape each format takes.
    turn = next(body for body in bodies if body.get("tools"))
    if api == "openai-completions":
        names = [tool["function"]["name"] for tool in turn["tools"]]
        assert {"history", "notes", "new_context"} <= set(names)
    elif api == "anthropic-messages":
        schemas = {tool["name"]: tool["input_schema"] for tool in turn["tools"]}
        assert {"history", "notes", "new_context"} <= set(schemas)
        assert "action" in schemas["notes"]["required"]
        marker = [block["text"] for block in turn["system"][1:]]
        assert any("Current context window id:" in text for text in marker)
    elif api.startswith("google-"):
        (tools,) = turn["tools"]
        names = {tool["name"] for tool in tools["functionDeclarations"]}
        assert {"history", "notes", "new_context"} <= names
        parts = [part["text"] for part in turn["systemInstruction"]["parts"][1:]]
        assert any("Current context window id:" in text for text in parts)
    else:
        kinds = {tool["name"]: tool["type"] for tool in turn["tools"]}
        family_type = "namespace" if api == "openai-responses" else "function"
        assert kinds["history"] == kinds["notes"] == family_type
    summaries = [body for body in bodies if not body.get("tools")]
    assert len(summaries) == 2

    pi = require_pi()
    assert_pi_sees_the_same(pi, session_file, manager)
