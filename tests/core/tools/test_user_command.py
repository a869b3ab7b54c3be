"""A shell command the user runs: its output cleaned, kept and cut as Pi's ``executeBash``
makes it (compared with the real Pi on the same pieces of output), and real commands run,
stopped and streamed."""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.abort import AbortController
from ctxmodes.tools.user_command import (
    CleanedOutput,
    clean_output,
    local_shell_runner,
    run_user_command,
)

#: Feeds each case's pieces to Pi's executeBashWithOperations through a stand-in shell, and
#: answers the result, the pieces handed on and the temporary file's text.
PI_EXECUTE = """
const { rmSync } = await import('node:fs');
const out = [];
for (const c of input) {
  const deltas = [];
  const controller = new AbortController();
  const operations = { exec: async (command, cwd, { onData }) => {
    for (const piece of c.pieces) onData(Buffer.from(piece, 'base64'));
    if (c.cancelled) controller.abort();
    return { exitCode: c.exitCode };
  } };
  const result = await mod.executeBashWithOperations('x', '/', operations,
    { onChunk: (d) => deltas.push(d), signal: controller.signal });
  let file = null;
  if (result.fullOutputPath) {
    await new Promise((done) => setTimeout(done, 300));  // the file stream ends lazily
    file = readFileSync(result.fullOutputPath, 'utf8');
    rmSync(result.fullOutputPath);
  }
  out.push({ result: { ...result, fullOutputPath: result.fullOutputPath !== undefined },
             deltas, file });
}
process.stdout.write(JSON.stringify(out));
"""


def _ours(pieces: list[bytes], exit_code: int, cancelled: bool) -> dict[str, Any]:
    deltas: list[str] = []
    output = CleanedOutput(deltas.append)
    for piece in pieces:
        output.feed(piece)
    result = output.result(exit_code, cancelled=cancelled)
    file = None
    if result.full_output_path is not None:
        file = Path(result.full_output_path).read_text(encoding="utf-8")
        Path(result.full_output_path).unlink()
    shown: dict[str, Any] = {"output": result.output}
    if result.exit_code is not None:
        shown["exitCode"] = result.exit_code
    shown |= {
        "cancelled": result.cancelled,
        "truncated": result.truncated,
        "fullOutputPath": result.full_output_path is not None,
    }
    return {"result": shown, "deltas": deltas, "file": file}


LONG_LINES = [f"line {n}\n".encode() for n in range(2500)]
CASES: list[tuple[list[bytes], int, bool]] = [
    ([b"hello\n"], 0, False),
    ([b"\x1b[31mred\x1b[0m \x1b]0;title\x07plain\r\n", b"bar\rbaz\n"], 1, False),
    ([b"bell\x07 nul\x00 esc-alone\x1b tab\there \x7f del\n"], 0, False),
    ([b"caf", b"\xc3", b"\xa9 split\n"], 0, False),
    ([b"bad \xff\xfe bytes\n", b"cut at the end \xe2\x82"], 2, False),
    ([b"\r", b"", b"only after\n"], 0, False),
    ([b"\xef\xbf\xb9annotated\xef\xbf\xbb\n"], 0, False),
    ([b"stopped early\n"], 0, True),
    (LONG_LINES, 0, False),
    ([b"x" * 30_000, b"y" * 30_000, b"\nz\n"], 0, False),
    ([("é" * 20_000).encode()] * 5 + [b"\x1b[1mend\x1b[0m\n"], 0, False),
]


@pytest.mark.pi
def test_the_output_is_pis_for_the_same_pieces(pi_node) -> None:
    payload = [
        {
            "pieces": [base64.b64encode(piece).decode() for piece in pieces],
            "exitCode": exit_code,
            "cancelled": cancelled,
        }
        for pieces, exit_code, cancelled in CASES
    ]
    theirs = pi_node("core/bash-executor.js", PI_EXECUTE, payload)
    for case, expected in zip(CASES, theirs, strict=True):
        assert _ours(*case) == expected, case


def test_cleaning_keeps_text_tabs_and_newlines() -> None:
    assert clean_output("\x1b[32mok\x1b[0m\tdone\r\n") == "ok\tdone\n"
    assert clean_output("plain ünïcode 😀\n") == "plain ünïcode 😀\n"


def test_a_command_runs_in_the_directory_and_streams_its_output(tmp_path: Path) -> None:
    pieces: list[str] = []
    result = run_user_command(
        "printf 'one\\r\\n'; pwd; echo two >&2; exit 3",
        tmp_path,
        local_shell_runner(),
        AbortController().signal,
        pieces.append,
    )
    assert result.output == f"one\n{tmp_path}\ntwo\n"
    assert "".join(pieces) == result.output
    assert (result.exit_code, result.cancelled, result.truncated) == (3, False, False)
    assert result.full_output_path is None


def test_the_configured_bash_runs_the_command(tmp_path: Path) -> None:
    logged = tmp_path / "log"
    wrapper = tmp_path / "logging-bash"
    wrapper.write_text(f'#!/bin/bash\necho "$@" >> {logged}\nexec bash "$@"\n')
    wrapper.chmod(0o755)
    result = run_user_command(
        "echo ran", tmp_path, local_shell_runner(str(wrapper)), AbortController().signal
    )
    assert result.output == "ran\n"
    assert logged.exists()


def test_a_stopped_command_is_cancelled_without_an_exit_status(tmp_path: Path) -> None:
    controller = AbortController()
    started = threading.Event()

    def seen(piece: str) -> None:
        if "started" in piece:
            started.set()

    def stop() -> None:
        started.wait(10)
        controller.abort()

    stopper = threading.Thread(target=stop)
    stopper.start()
    result = run_user_command(
        "echo started; sleep 20; echo never",
        tmp_path,
        local_shell_runner(),
        controller.signal,
        seen,
    )
    stopper.join()
    assert (result.output, result.exit_code, result.cancelled) == ("started\n", None, True)


def test_long_output_leaves_the_cleaned_text_in_a_file(tmp_path: Path) -> None:
    result = run_user_command(
        "for i in $(seq 1 3000); do printf '\\033[1m%s\\033[0m\\n' $i; done",
        tmp_path,
        local_shell_runner(),
        AbortController().signal,
    )
    assert result.truncated
    assert result.output.splitlines()[0] == "1001"
    assert result.full_output_path is not None
    full = Path(result.full_output_path)
    assert full.read_text().splitlines() == [str(n) for n in range(1, 3001)]
    full.unlink()
