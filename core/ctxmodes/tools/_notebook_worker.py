"""The notebook worker process: runs code cells in one persistent namespace.

Started by :mod:`ctxmodes.tools.notebook` through a one-line bootstrap that compiles this
file under the name ``<ctxmodes notebook worker>``; ``sys.argv`` is then ``[-c, <this file>,
REQUEST_FD, RESPONSE_FD]``. It imports nothing from ctxmodes, so any Python 3.11+
interpreter can host it.

Requests and replies are length-prefixed JSON objects (a 4-byte big-endian size, then the
UTF-8 body) on two private pipes, so whatever a cell prints on stdout/stderr (inherited:
the parent's output pipe) cannot disturb the framing.

Request ``{"id": int, "code": str}`` → reply ``{"id": int, "ok": bool, "error": str | None,
"interrupted": bool}``. All output, the REPL display of a trailing expression and tracebacks
included, has been written and flushed to stdout/stderr before the reply is sent.

SIGINT interrupts the running cell (``KeyboardInterrupt``) and is ignored between cells, so
an interrupt that arrives late cannot kill the worker and its state.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import os
import signal
import struct
import sys
import traceback
from types import FrameType
from typing import Any

try:
    import orjson

    def _dumps(message: dict[str, Any]) -> bytes:
        return orjson.dumps(message)

    def _loads(data: bytes) -> Any:
        return orjson.loads(data)

except ImportError:  # another interpreter without orjson: same wire format via json
    import json

    def _dumps(message: dict[str, Any]) -> bytes:
        return json.dumps(message, ensure_ascii=False).encode("utf-8")

    def _loads(data: bytes) -> Any:
        return json.loads(data)


_HEADER = struct.Struct(">I")
# Frames of this file carry this name (set by the bootstrap); the bootstrap's own is "<string>".
_WORKER_FILENAMES = frozenset({"<ctxmodes notebook worker>", "<string>"})


class _Interrupts:
    """Turns SIGINT into KeyboardInterrupt only while a cell runs."""

    def __init__(self) -> None:
        self.armed = False

    def handle(self, _signum: int, _frame: FrameType | None) -> None:
        if self.armed:
            raise KeyboardInterrupt


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        data = os.read(fd, size - len(chunks))
        if not data:
            return None
        chunks += data
    return bytes(chunks)


def _receive(fd: int) -> Any:
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, _HEADER.unpack(header)[0])
    return None if body is None else _loads(body)


def _send(fd: int, message: dict[str, Any]) -> None:
    body = _dumps(message)
    data = _HEADER.pack(len(body)) + body
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _print_user_exception(exc: BaseException) -> None:
    """Print the traceback as the cell's author needs it: without the worker's frames."""
    report = traceback.TracebackException.from_exception(exc)
    pending = [report]
    while pending:
        current = pending.pop()
        frames = [frame for frame in current.stack if frame.filename not in _WORKER_FILENAMES]
        current.stack = traceback.StackSummary.from_list(frames)
        pending.extend(c for c in (current.__cause__, current.__context__) if c is not None)
    sys.stderr.write("".join(report.format()))


def _run_cell(number: int, code: str, namespace: dict[str, Any], interrupts: _Interrupts) -> Any:
    filename = f"<cell {number}>"
    # Registered so tracebacks can quote the offending line.
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    try:
        interrupts.armed = True
        tree = ast.parse(code, filename, "exec")
        trailing = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, filename, "exec"), namespace)
        if isinstance(trailing, ast.Expr):
            expression = ast.Expression(body=trailing.value)
            value = eval(compile(expression, filename, "eval"), namespace)
            sys.displayhook(value)
        interrupts.armed = False
    except BaseException as exc:
        interrupts.armed = False
        _print_user_exception(exc)
        interrupted = isinstance(exc, KeyboardInterrupt)
        return {"ok": False, "error": type(exc).__name__, "interrupted": interrupted}
    return {"ok": True, "error": None, "interrupted": False}


def main() -> None:
    request_fd, response_fd = int(sys.argv[2]), int(sys.argv[3])
    # Programs the cells start must not inherit the private pipes.
    os.set_inheritable(request_fd, False)
    os.set_inheritable(response_fd, False)
    sys.argv = [""]
    interrupts = _Interrupts()
    signal.signal(signal.SIGINT, interrupts.handle)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    number = 0
    while True:
        request = _receive(request_fd)
        if request is None:
            return
        number += 1
        reply = _run_cell(number, request["code"], namespace, interrupts)
        sys.stdout.flush()
        sys.stderr.flush()
        _send(response_fd, {"id": request["id"], **reply})


if __name__ == "__main__":
    main()
