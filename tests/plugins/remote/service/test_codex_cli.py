"""The real Codex CLI 0.169.0 against a real ``ctxmodes serve`` process: every request the
client makes goes to the service, the model side is the scripted model or a Chat Completions
model served over HTTP on loopback.

One full cycle: window 0 writes a checkpoint note and searches history, then calls
``new_context``; window 1 reads the note back, finds a window-0 detail with
``history.search_contents`` and reads that item with the ids the search returned. And an
image given with the prompt, read back with ``history.read_item``, is shown to the model again.
"""

import base64
import json
import subprocess

import pytest
from support.images import solid_png
from support.provider_cases import ANTHROPIC_THINKING_TURNS, recorded_case, recorded_reply
from support.serve_process import (
    ServeProcess,
    codex_binary,
    codex_environment,
    create_token,
    scripted_call,
    upstream_endpoint,
    write_codex_home,
)
from support.wire_server import ConversationServer, WireServer

from ctxmodes_remote.service.crypto import load_or_create_keyring

pytestmark = pytest.mark.codex_cli

MODEL = "probe-model"
PNG = solid_png(2, 2, (16, 128, 240))
DETAIL = "needle-7781"
NOTE = f"goal: probe; detail {DETAIL} lives in src/app.py"


SCRIPT = {
    "model": MODEL,
    "context_window": 272_000,
    "responses": [
        scripted_call("write_file", {"path": "checkpoint.md", "text": NOTE}, "notes"),
        scripted_call("search_contents", {"query": "run the probe task"}, "history"),
        scripted_call("new_context", {}),
        scripted_call("read_file", {"path": "checkpoint.md"}, "notes"),
        scripted_call("search_contents", {"query": DETAIL}, "history"),
        scripted_call(
            "read_item",
            {"window_id": "{{out:items.0.window_id}}", "item_id": "{{out:items.0.item_id}}"},
            "history",
        ),
        {"text": "probe done"},
    ],
}


def rollout_lines(home):
    [rollout] = list((home / "sessions").rglob("rollout-*.jsonl"))
    text = rollout.read_text()
    return text, [json.loads(line) for line in text.splitlines() if line.strip()]


def tool_outputs(lines):
    """``(call name, namespace, output)`` for every function call answered in the rollout."""
    calls, outputs = {}, []
    for line in lines:
        payload = line.get("payload", {})
        if line.get("type") != "response_item":
            continue
        if payload.get("type") == "function_call":
            calls[payload["call_id"]] = (payload["name"], payload.get("namespace"))
        elif payload.get("type") == "function_call_output":
            name, namespace = calls.get(payload["call_id"], (None, None))
            outputs.append((name, namespace, payload["output"]))
    return outputs


def run_codex(tmp_path, tls, script, *arguments, storage=()):
    """``codex exec`` with ``arguments`` against a service in front of ``script`` (a scripted
    model's, or the name of a configured model to use instead; its storage chosen by the
    ``serve`` options ``storage``, SQLite by default); returns the run, the Codex home, the
    data directory and the token."""
    codex = codex_binary()
    if codex is None:
        pytest.skip("the Codex CLI is not installed: run `make codex-cli` (needs npm)")
    upstream = script
    if not isinstance(script, str):
        script_file = tmp_path / "script.json"
        script_file.write_text(json.dumps(script))
        upstream = f"scripted:{script_file}"
    data = tmp_path / "data"
    token = create_token(data, "probe", *storage)
    service = ServeProcess(upstream, data, tls, tmp_path / "serve.log", *storage)
    home = tmp_path / "run" / "home"
    work = tmp_path / "run" / "work"
    work.mkdir(parents=True)
    try:
        write_codex_home(home, service, token, MODEL)
        result = subprocess.run(
            [str(codex), "exec", "--skip-git-repo-check", "--json", *arguments],
            cwd=work,
            env=codex_environment(home, tls.ca),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        exit_code = service.stop()
    log = service.log.read_text()
    assert result.returncode == 0, result.stderr[-4000:] + log[-4000:]
    assert exit_code == 0
    return result, home, data, token


def test_full_cycle_with_the_real_codex_cli(tmp_path, tls):
    check_full_cycle(tmp_path, tls)


def test_full_cycle_on_postgres_with_the_real_codex_cli(tmp_path, tls, postgres_url):
    # On Postgres, note reads and writes are answered on the event loop, not a worker.
    check_full_cycle(tmp_path, tls, "--database", postgres_url)


def check_full_cycle(tmp_path, tls, *storage):
    """The probe task through two windows, every notes and history call answered and
    encrypted as the client expects."""
    result, home, data, token = run_codex(
        tmp_path, tls, SCRIPT, "run the probe task", storage=storage
    )
    assert "probe done" in result.stdout

    text, lines = rollout_lines(home)
    assert "Unable to perform operation" not in text
    # The secrets travelled as ciphertext only: neither the note nor the query is in the
    # client's own record of the session.
    assert DETAIL not in text
    assert any(line["type"] == "compacted" for line in lines), "no new window was started"

    keyring = load_or_create_keyring(data)
    account_id = json.loads(__import__("base64").urlsafe_b64decode(token.split(".")[1] + "=="))[
        "https://api.openai.com/auth"
    ]["chatgpt_account_id"]

    def opened(output):
        [part] = [p for p in output if p["type"] == "encrypted_content"]
        return json.loads(keyring.decrypt(account_id, part["encrypted_content"]))

    answers = [(name, ns, opened(out)) for name, ns, out in tool_outputs(lines) if ns]
    assert [(name, ns) for name, ns, _ in answers] == [
        ("write_file", "notes"),
        ("search_contents", "history"),
        ("read_file", "notes"),
        ("search_contents", "history"),
        ("read_item", "history"),
    ]
    write, first_search, read, detail_search, item = (answer for _, _, answer in answers)
    assert write["file"]["path"] == "/root/notes/checkpoint.md"
    # The prompt, and the search call itself (recorded from the response that made it).
    prompt, search_call = first_search["items"]
    assert (prompt["role"], prompt["truncated_content"]) == ("user", "run the probe task")
    assert (search_call["role"], search_call["tool_name"]) == ("assistant", "search_contents")
    assert read["file"]["content"] == NOTE
    # Oldest first: the window-0 note write, then window 1's note read and search call.
    found, *later = detail_search["items"]
    window_zero = prompt["window_id"]
    assert (found["window_id"], found["tool_name"]) == (window_zero, "write_file")
    assert [(i["role"], i["tool_name"]) for i in later] == [
        ("tool", "read_file"),
        ("assistant", "search_contents"),
    ]
    assert all(i["window_id"] != window_zero for i in later)
    assert item["item"]["item_id"] == found["item_id"]
    assert DETAIL in item["item"]["content"]
    # Window 1's marker carried the thread hint naming the checkpoint note.
    assert "/root/notes/checkpoint.md" in text


def test_a_cycle_in_front_of_a_model_over_http_without_namespaces_with_the_real_codex_cli(
    tmp_path, tls, monkeypatch
):
    # As a team runs it in front of Ollama or a gateway: Chat Completions, which has no
    # namespaces, so the model names the tools notes__write_file and notes__read_file.
    turns = [
        {
            "tool_calls": [
                {"name": "notes__write_file", "arguments": {"path": "c.md", "text": NOTE}}
            ]
        },
        {"tool_calls": [{"name": "new_context", "arguments": {}}]},
        {"tool_calls": [{"name": "notes__read_file", "arguments": {"path": "c.md"}}]},
        {"text": "probe done"},
    ]
    with ConversationServer("openai-completions", turns, []) as model:
        config = tmp_path / "config"
        upstream = upstream_endpoint(config, "openai-completions", f"{model.base_url}/v1", MODEL)
        monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(config))
        result, home, *_ = run_codex(tmp_path, tls, upstream, "run the task")
    assert "probe done" in result.stdout

    text, lines = rollout_lines(home)
    assert "Unable to perform operation" not in text
    assert DETAIL not in text
    assert any(line["type"] == "compacted" for line in lines), "no new window was started"
    answered = [(name, ns) for name, ns, _ in tool_outputs(lines) if ns]
    assert answered == [("write_file", "notes"), ("read_file", "notes")]
    # The note written in window 0 was read back in window 1, and the model saw it.
    last = json.loads(model.requests[-1]["body"])
    [read_back] = [m for m in last["messages"] if m["role"] == "tool"]
    assert DETAIL in json.dumps(read_back)


def test_a_thinking_models_thinking_is_shown_and_goes_round_the_real_codex_cli_sealed(
    tmp_path, tls, monkeypatch
):
    # A turn recorded from Anthropic's API: the model thinks (a signed thinking block), then
    # calls a tool. Codex answers the call and asks again; Anthropic refuses that request,
    # thinking on, unless the turn's thinking block comes back first and unaltered.
    first, then = (recorded_reply(recorded_case(name)[0]) for name in ANTHROPIC_THINKING_TURNS)
    with WireServer([first, then]) as model:
        config = tmp_path / "config"
        upstream = upstream_endpoint(
            config, "anthropic-messages", model.base_url, MODEL, reasoning=True
        )
        monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(config))
        result, home, *_ = run_codex(tmp_path, tls, upstream, "run the task")

    asked, answered = (json.loads(request["body"]) for request in model.requests)
    # Codex's effort (low in its configuration) reached the model as thinking.
    assert asked["thinking"]["type"] == "enabled"
    recorded = _thinking_of(first)
    [turn] = [m for m in answered["messages"] if m["role"] == "assistant"]
    assert turn["content"][0] == {"type": "thinking", **recorded}
    assert turn["content"][1]["type"] == "tool_use"
    # Codex shows the thinking (the catalog offers summaries, so Codex asks for them) and
    # keeps the signed block only sealed.
    shown = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    [thought] = [e["item"] for e in shown if e.get("item", {}).get("type") == "reasoning"]
    assert thought["text"] == recorded["thinking"]
    text, lines = rollout_lines(home)
    kept = [line["payload"] for line in lines if line["payload"].get("type") == "reasoning"]
    assert kept
    assert all(item["encrypted_content"] for item in kept)
    assert recorded["signature"][:40] not in text


def _thinking_of(reply) -> dict[str, str]:
    """The thinking text and signature of a recorded Anthropic stream."""
    thinking, signature = [], []
    for line in b"".join(reply.chunks).decode().splitlines():
        if line.startswith("data: "):
            delta = json.loads(line.removeprefix("data: ")).get("delta", {})
            thinking.append(delta.get("thinking", ""))
            signature.append(delta.get("signature", ""))
    return {"thinking": "".join(thinking), "signature": "".join(signature)}


IMAGE_SCRIPT = {
    "model": MODEL,
    "context_window": 272_000,
    "responses": [
        scripted_call("search_contents", {"query": "describe the screenshot"}, "history"),
        scripted_call(
            "read_item",
            {"window_id": "{{out:items.0.window_id}}", "item_id": "{{out:items.0.item_id}}"},
            "history",
        ),
        {"text": "screenshot seen"},
    ],
}


def test_an_image_read_back_from_history_reaches_the_model_with_the_real_codex_cli(tmp_path, tls):
    """The prompt's image, recorded by the service, comes back from ``read_item`` as the
    contract's ``images`` and the real client sends it to the model as an image."""
    screenshot = tmp_path / "screenshot.png"
    screenshot.write_bytes(PNG)
    # The prompt first: --image takes every value after it.
    arguments = ("describe the screenshot", "--image", str(screenshot))
    result, home, _, _ = run_codex(tmp_path, tls, IMAGE_SCRIPT, *arguments)
    assert "screenshot seen" in result.stdout
    text, lines = rollout_lines(home)
    assert "could not be processed" not in text
    [sent] = [
        part
        for line in lines
        if line.get("type") == "response_item" and line["payload"].get("role") == "user"
        for part in line["payload"]["content"]
        if part["type"] == "input_image"
    ]
    assert sent["image_url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    [(_, _, output)] = [o for o in tool_outputs(lines) if o[:2] == ("read_item", "history")]
    assert [part["type"] for part in output] == ["encrypted_content", "input_image"]
    # The image the prompt carried, with its detail, as the model is shown it again.
    assert output[1] == sent
