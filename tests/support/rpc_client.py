"""A client of Pi's RPC mode for tests: the real Pi (``pi --mode rpc``) or ctxmodes
(``ctxmodes --mode rpc``) as a live process, commands written to it, every line it writes
collected as it comes."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from support.cli_process import CTXMODES, ctxmodes_environment
from support.pi_print import configure_ours, pi_agent_dir, pi_command

JsonObject = dict[str, Any]
#: How long a test waits for a line it expects.
WAIT = 30.0


class RpcProcess:
    """A process speaking Pi's RPC protocol on its standard input and output."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        #: Every line written so far, parsed, in order.
        self.lines: list[JsonObject] = []
        self._arrived: queue.SimpleQueue[JsonObject | None] = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._seen = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            self._arrived.put(json.loads(raw))
        self._arrived.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(data)
        self._process.stdin.flush()

    def send(self, command: JsonObject) -> None:
        self.send_raw(json.dumps(command).encode() + b"\n")

    def request(self, command: JsonObject, timeout: float = WAIT) -> JsonObject:
        """Send ``command`` with a new ``id``; its response."""
        request_id = f"req-{next(self._ids)}"
        self.send({"id": request_id, **command})
        return self.wait_for(
            lambda line: line.get("type") == "response" and line.get("id") == request_id,
            timeout,
        )

    def wait_for(self, matches: Callable[[JsonObject], bool], timeout: float = WAIT) -> JsonObject:
        """The first line not waited for before that ``matches``, waiting for it to come.

        :raises AssertionError: none came within ``timeout`` seconds, or the output ended.
        """
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.lines):
                line = self.lines[self._seen]
                self._seen += 1
                if matches(line):
                    return line
            left = deadline - time.monotonic()
            try:
                arrived = self._arrived.get(timeout=max(left, 0.001))
            except queue.Empty:
                raise AssertionError(f"no matching line within {timeout} s: {self.lines}") from None
            if arrived is None:
                raise AssertionError(f"the output ended: {self.lines}\n{self.stderr()}")
            self.lines.append(arrived)

    def wait_for_event(self, kind: str, timeout: float = WAIT) -> JsonObject:
        return self.wait_for(lambda line: line.get("type") == kind, timeout)

    def close(self, timeout: float = WAIT) -> int:
        """End the input; the exit status once the process ended (all output collected)."""
        assert self._process.stdin is not None
        if not self._process.stdin.closed:
            self._process.stdin.close()
        status = self._process.wait(timeout)
        while (arrived := self._arrived.get(timeout=timeout)) is not None:
            self.lines.append(arrived)
        return status

    def stderr(self) -> str:
        if self._process.poll() is None or self._process.stderr is None:
            return ""
        return self._process.stderr.read().decode(errors="replace")

    def __enter__(self) -> RpcProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()


def pi_rpc(
    tmp_path: Path,
    base_url: str,
    argv: Sequence[str] = (),
    env: dict[str, str] | None = None,
    more_models: Sequence[dict[str, Any]] = (),
) -> RpcProcess:
    """``pi --mode rpc --model loop/m ARGV`` in ``tmp_path`` (see
    :func:`~support.pi_print.run_pi`), ``env`` over the environment, ``more_models`` beside
    ``loop/m``. Skips without Pi."""
    agent = pi_agent_dir(tmp_path, base_url, more_models=more_models)
    pi, environment = pi_command(agent, env)
    return RpcProcess([*pi, "--mode", "rpc", "--model", "loop/m", *argv], tmp_path, environment)


def our_rpc(
    tmp_path: Path,
    base_url: str,
    argv: Sequence[str] = (),
    env: dict[str, str] | None = None,
    more_models: Sequence[dict[str, Any]] = (),
) -> RpcProcess:
    """``ctxmodes --mode rpc --model loop/m ARGV`` in ``tmp_path``, the models as Pi's."""
    configure_ours(tmp_path, base_url, more_models=more_models)
    return RpcProcess(
        [*CTXMODES, "--mode", "rpc", "--model", "loop/m", *argv],
        tmp_path,
        ctxmodes_environment(tmp_path, env),
    )


def bash_messages(where: Path) -> list[JsonObject]:
    """The ``bashExecution`` messages of the one session file under ``where``, without the
    clock's timestamp (to compare Pi's with ctxmodes')."""
    (session,) = where.rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    messages = [e["message"] for e in entries if e["type"] == "message"]
    bash = [m for m in messages if m["role"] == "bashExecution"]
    return [{key: value for key, value in m.items() if key != "timestamp"} for m in bash]
