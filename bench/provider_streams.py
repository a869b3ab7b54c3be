"""Model transports: the same recorded streams through Pi's transports and ours, side by side.

A loopback server (its own process, so its work is nobody's CPU) answers every request with
the recorded SSE body of a provider case from ``../shared/pi-oracle/provider-cases``. Each
transport streams it ``--runs`` times; we report CPU per event (the client process's user +
system time over the events it emitted), the median time to the final message, and the
median time to the first delta next to a raw socket's time to the first body byte (the
transport's first-token overhead). Ratios ours/Pi below 1.0 mean ctxmodes is faster.

Usage: ``.venv/bin/python bench/provider_streams.py [--runs N] [--cases A,B]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from smoke import parse_args

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import stream_function
from ctxmodes.providers.catalog import ModelCatalog, ModelSpec, UnknownModelError, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions, WireEvent

REPO = Path(__file__).resolve().parent.parent
PI_SCRIPT = Path(__file__).with_name("pi_provider_stream.mjs")
DEFAULT_CASES = (
    "responses_reasoning_tool_call",
    "responses_text_commentary_final",
    "codex_reasoning_commentary_tool_call",
    "completions_reasoning_content_tool_call_cached",
    "completions_parallel_tool_calls",
    "anthropic_thinking_signature_tool_use",
    "anthropic_usage_cache_tokens",
    "anthropic_text_system_prompt",
    "google_thought_parts_signature",
    "google_usage_metadata_thoughts",
    "vertex_custom_base_url_with_version",
)
#: Mistral, Azure OpenAI and Bedrock (Bedrock over HTTP/1.1 on both sides: the loopback
#: server speaks no HTTP/2, and both transports fall back as ``AWS_BEDROCK_FORCE_HTTP1`` asks).
MORE_FORMAT_CASES = (
    "mistral_tool_call",
    "mistral_magistral_thinking",
    "mistral_text",
    "azure_tool_call_base_url_deployment_map",
    "bedrock_tool_use_nova",
    "bedrock_claude_thinking_signature",
)

_SERVER = r"""
import http.server, socket, sys
body = open(sys.argv[1], "rb").read()
head = (
    f"HTTP/1.1 200 OK\r\ncontent-type: {sys.argv[2]}\r\n"
    f"content-length: {len(body)}\r\n\r\n"
).encode()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        # One write: no client waits on a delayed ACK between headers and body.
        self.wfile.write(head + body)
        self.wfile.flush()
    def log_message(self, *args):
        pass
class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def handle_error(self, request, client_address):
        pass  # the raw-socket probe hangs up without reading the body
server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def _oracle_dir() -> Path:
    configured = os.environ.get("PI_ORACLE_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "pi-oracle"


def _pi_node_modules() -> Path | None:
    configured = os.environ.get("PI_NODE_MODULES")
    for candidate in [Path(configured)] if configured else [REPO / ".pi" / "node_modules"]:
        if (candidate / "@earendil-works" / "pi-ai").is_dir():
            return candidate
    return None


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _expand(value: Any) -> Any:
    """The oracle's ``{"fakeJwt": claims}`` placeholders as unsigned JWTs."""
    if isinstance(value, list):
        return [_expand(item) for item in value]
    if isinstance(value, dict):
        if "fakeJwt" in value:
            header = _b64url(json.dumps({"alg": "RS256", "typ": "JWT"}, separators=(",", ":")))
            claims = _b64url(json.dumps(value["fakeJwt"], separators=(",", ":")))
            return f"{header}.{claims}.bench-signature"
        return {key: _expand(item) for key, item in value.items()}
    return value


def _model(case: dict[str, Any], received: dict[str, Any], base: str) -> ModelSpec:
    """The case's model (the one Pi received when the catalog lacks it) on ``base``."""
    spec = case["model"]
    if "ref" in spec:
        try:
            data = ModelCatalog(builtin_models()).get(spec["ref"]).to_pi()
        except UnknownModelError:
            data = dict(received)
        data = {**data, **spec.get("overrides", {})}
    else:
        data = dict(spec)
    path = "/" + data.get("baseUrl", "").split("://", 1)[-1].partition("/")[2]
    data["baseUrl"] = base + path.rstrip("/")
    return ModelSpec.model_validate(data)


def _event_stream(messages: list[dict[str, Any]]) -> bytes:
    """The oracle's ``eventStream`` messages as AWS event-stream frames (prelude with its
    CRC-32, string headers, payload, message CRC-32)."""
    frames = b""
    for message in messages:
        headers = b""
        for name, value in message["headers"].items():
            headers += struct.pack("!B", len(name)) + name.encode()
            headers += struct.pack("!BH", 7, len(value.encode())) + value.encode()
        payload = message["payload"].encode()
        prelude = struct.pack("!II", 16 + len(headers) + len(payload), len(headers))
        prelude += struct.pack("!I", zlib.crc32(prelude))
        frame = prelude + headers + payload
        frames += frame + struct.pack("!I", zlib.crc32(frame))
    return frames


def _recorded(case: dict[str, Any]) -> tuple[bytes, str]:
    """The last recorded answer of a case and its content type."""
    answer = case["responses"][-1]
    if "eventStream" in answer:
        return _event_stream(answer["eventStream"]), "application/vnd.amazon.eventstream"
    return answer["sse"].encode(), "text/event-stream"


def _on_loopback(case: dict[str, Any], base: str) -> dict[str, Any]:
    """The case with the endpoint settings Azure and Bedrock read from the environment
    pointed at the loopback server (the recorded ones name Azure resources)."""
    env = {
        "azure-openai-responses": {"AZURE_OPENAI_BASE_URL": base},
        "bedrock-converse-stream": {"AWS_BEDROCK_FORCE_HTTP1": "1"},
    }.get(case["api"])
    if env is None:
        return case
    return {**case, "options": {**case.get("options", {}), "env": env}}


def _serve(
    body: bytes, scratch: Path, content_type: str = "text/event-stream"
) -> tuple[subprocess.Popen[str], int]:
    path = scratch / "body.sse"
    path.write_bytes(body)
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(path), content_type],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def raw_first_byte_ms(port: int, path: str, body: bytes, runs: int) -> float:
    """Median time from sending a request on a kept-alive socket (as the transports keep
    theirs) to the first byte of the answer's body."""
    request = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    times = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(runs + 1):
            started = time.perf_counter()
            sock.sendall(request)
            received = b""
            while b"\r\n\r\n" not in received:
                received += sock.recv(65536)
            head, _, rest = received.partition(b"\r\n\r\n")
            while not rest:
                rest = sock.recv(65536)
            times.append((time.perf_counter() - started) * 1000)
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += sock.recv(65536)
    return statistics.median(times[1:])


def run_ours(case: dict[str, Any], model: ModelSpec, runs: int) -> dict[str, Any]:
    seam = HttpSeam()
    context_data = case.get("context", {})

    def once() -> tuple[float, float | None, int, str]:
        events = 0
        first: float | None = None
        started = time.perf_counter()

        def emit(event: WireEvent) -> None:
            nonlocal events, first
            events += 1
            if first is None and event.type.endswith("_delta"):
                first = (time.perf_counter() - started) * 1000

        context = PiContext(
            context_data.get("systemPrompt"),
            json.loads(json.dumps(context_data.get("messages", []))),
            context_data.get("tools", []),
        )
        options = StreamOptions.from_pi(_expand(case.get("options", {})))
        call = CallContext(seam=seam, signal=AbortController().signal, emit=emit)
        message = stream_function(case["api"])(model, context, options, call)
        return (time.perf_counter() - started) * 1000, first, events, message["stopReason"]

    once()  # warm-up: imports and the first connection
    wall, firsts, total, stops = [], [], 0, set()
    cpu = time.process_time()
    for _ in range(runs):
        elapsed, first, events, stop = once()
        wall.append(elapsed)
        if first is not None:
            firsts.append(first)
        total += events
        stops.add(stop)
    cpu_ms = (time.process_time() - cpu) * 1000
    seam.close()
    return {
        "cpuMs": cpu_ms,
        "wallMs": wall,
        "firstTokenMs": firsts,
        "events": total,
        "stopReasons": sorted(stops),
    }


def run_pi(
    case: dict[str, Any], model: ModelSpec, runs: int, scratch: Path
) -> dict[str, Any] | None:
    node = shutil.which("node")
    modules = _pi_node_modules()
    lib = _oracle_dir() / "pi_oracle_lib.mjs"
    if node is None or modules is None or not lib.exists():
        return None
    spec = {
        "api": case["api"],
        "model": model.to_pi(),
        "context": case.get("context", {"messages": []}),
        "options": _expand(case.get("options", {})),
    }
    path = scratch / "spec.json"
    path.write_text(json.dumps(spec))
    result = subprocess.run(
        [node, str(PI_SCRIPT), str(lib), str(path), str(runs)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PI_NODE_MODULES=str(modules)),
        check=True,
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES + MORE_FORMAT_CASES))
    args = parse_args(parser, runs=3)
    cases_dir = Path(os.environ.get("PI_PROVIDER_CASES") or _oracle_dir() / "provider-cases")
    print("per case: events per stream; CPU per event (us); time to the final message (ms);")
    print("first-token overhead (ms over a raw socket's first body byte); ours, Pi, ours/Pi")
    names = args.cases.split(",")
    unknown = [name for name in names if not (cases_dir / f"{name}.expected.json").is_file()]
    if unknown:
        parser.error(f"no such case in {cases_dir}: {', '.join(unknown)}")
    ratios_cpu, ratios_final = [], []
    for name in names:
        case = json.loads((cases_dir / f"{name}.json").read_text())
        received = json.loads((cases_dir / f"{name}.expected.json").read_text())["model"]
        body, content_type = _recorded(case)
        with tempfile.TemporaryDirectory() as scratch_dir:
            scratch = Path(scratch_dir)
            server, port = _serve(body, scratch, content_type)
            try:
                case = _on_loopback(case, f"http://127.0.0.1:{port}")
                model = _model(case, received, f"http://127.0.0.1:{port}")
                ours = run_ours(case, model, args.runs)
                pi = run_pi(case, model, args.runs, scratch)
                path = "/" + model.base_url.split("://", 1)[1].partition("/")[2]
                raw = raw_first_byte_ms(port, path.rstrip("/") + "/x", b"{}", 200)
            finally:
                server.kill()
                server.wait()
        per_event = ours["cpuMs"] * 1000 / max(1, ours["events"])
        final = statistics.median(ours["wallMs"])
        first = (
            statistics.median(ours["firstTokenMs"]) - raw if ours["firstTokenMs"] else float("nan")
        )
        if pi is None:
            print(
                f"{name:48} {ours['events'] // args.runs:>4} | cpu/event {per_event:6.1f} (no Pi)"
            )
            continue
        pi_per_event = pi["cpuMs"] * 1000 / max(1, pi["events"])
        pi_final = statistics.median(pi["wallMs"])
        pi_first = (
            statistics.median(pi["firstTokenMs"]) - raw if pi["firstTokenMs"] else float("nan")
        )
        ratios_cpu.append(per_event / pi_per_event)
        ratios_final.append(final / pi_final)
        print(
            f"{name:48} {ours['events'] // args.runs:>4}"
            f" | cpu/event {per_event:6.1f} {pi_per_event:6.1f} {per_event / pi_per_event:5.2f}"
            f" | final {final:5.2f} {pi_final:5.2f} {final / pi_final:5.2f}"
            f" | first-token +{first:.2f} +{pi_first:.2f}"
        )
        if ours["events"] != pi["events"]:
            print(f"  event counts differ: ours {ours['events']} Pi {pi['events']}")
        if ours["stopReasons"] != sorted(pi["stopReasons"]):
            print(f"  stop reasons differ: ours {ours['stopReasons']} Pi {pi['stopReasons']}")
    if ratios_cpu:
        print(
            f"\ngeometric mean ratio ours/Pi: CPU per event "
            f"{statistics.geometric_mean(ratios_cpu):.2f}, time to final message "
            f"{statistics.geometric_mean(ratios_final):.2f} (raw socket first byte is the baseline "
            "of the first-token overhead)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
