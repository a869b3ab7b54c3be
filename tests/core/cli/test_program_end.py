"""How the ``ctxmodes`` program ends: a command that leaves nothing behind ends without the
interpreter's teardown, its whole output written; anything that needs the teardown (an exit
handler, another thread) gets it. Each case is a program of its own."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
from support.long_sessions import write_chain

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report

# Each test runs the program in a process of its own.
pytestmark = pytest.mark.slow

# The program as its entry point runs it, after what a test puts in front of it.
_PROGRAM = """
import sys
{before}
sys.argv = ["ctxmodes", *sys.argv[1:]]
from ctxmodes.cli import run
run()
"""


def _run(before: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM.format(before=before), *argv],
        capture_output=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A session whose context is far more than a pipe holds, and its report."""
    path = tmp_path_factory.mktemp("end") / "long.jsonl"
    write_chain(path, 6_000, compact_every=0)
    with SessionManager.open(path, read_only=True) as manager:
        return path, codec.dumps(context_report(manager)) + b"\n"


def test_the_whole_output_is_written_before_the_program_ends(
    session: tuple[Path, bytes],
) -> None:
    path, report = session
    done = _run("", "session", "context", str(path), "--json")
    assert (done.returncode, done.stderr) == (0, b"")
    assert len(report) > 1 << 20
    assert done.stdout == report


def test_an_exit_handler_still_runs(session: tuple[Path, bytes]) -> None:
    path, report = session
    before = "import atexit\natexit.register(lambda: print('handler ran', file=sys.stderr))"
    done = _run(before, "session", "context", str(path), "--json")
    assert (done.returncode, done.stdout, done.stderr) == (0, report, b"handler ran\n")


def test_another_thread_is_waited_for(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = session
    marker = tmp_path / "thread-finished"
    before = (
        "import threading, time, pathlib\n"
        "def finish():\n"
        "    time.sleep(0.5)\n"
        f"    pathlib.Path({str(marker)!r}).write_text('done')\n"
        "threading.Thread(target=finish).start()"
    )
    done = _run(before, "session", "context", str(path), "--json")
    assert done.returncode == 0
    assert marker.read_text() == "done"


def test_the_status_of_a_failed_command_is_kept(tmp_path: Path) -> None:
    done = _run("", "session", "context", str(tmp_path / "missing.jsonl"), "--json")
    assert done.returncode == 1
    assert done.stderr.startswith(b"ctxmodes: error: ")


# An object whose finalizer speaks: the interpreter's teardown finalizes it.
_LOUD = """
class Loud:
    def __del__(self):
        print("torn down", file=sys.stderr)
loud = Loud()
"""


def test_a_command_that_leaves_nothing_behind_ends_without_the_teardown(
    session: tuple[Path, bytes],
) -> None:
    path, report = session
    done = _run(_LOUD, "session", "context", str(path), "--json")
    assert (done.returncode, done.stdout, done.stderr) == (0, report, b"")


def test_other_commands_end_with_the_teardown() -> None:
    done = _run(_LOUD, "modes")
    assert done.returncode == 0
    assert done.stderr.endswith(b"torn down\n")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("json", [True, False])
def test_output_to_a_full_disk_is_one_line_and_status_1(
    session: tuple[Path, bytes], json: bool
) -> None:
    path, _ = session
    argv = ["session", "context", str(path), *(["--json"] if json else [])]
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-c", _PROGRAM.format(before=""), *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    assert (done.returncode, done.stderr) == (1, b"ctxmodes: error: No space left on device\n")


# Reports, as the process ends, whether the session it opened is still in memory, whether
# its file is still open and whether the cyclic collector runs.
_AT_THE_END = """
import gc, os, weakref
from ctxmodes.session.manager import SessionManager
opened = []
open_session = SessionManager.open.__func__
def recording_open(cls, path, *args, **kwargs):
    manager = open_session(cls, path, *args, **kwargs)
    opened.append((weakref.ref(manager), os.path.realpath(path)))
    return manager
SessionManager.open = classmethod(recording_open)
end = os._exit
def reporting_end(status):
    (manager, path), = opened
    files = [os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")]
    words = "kept" if manager() else "freed", "open" if path in files else "closed"
    print(*words, "collecting" if gc.isenabled() else "paused", file=sys.stderr)
    sys.stderr.flush()
    end(status)
os._exit = reporting_end
"""


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("argv", [["context", "--json"], ["context"], ["show"]])
def test_an_ending_command_leaves_its_session_index_and_collector_to_the_end(
    session: tuple[Path, bytes], argv: list[str]
) -> None:
    path, _ = session
    command, *options = argv
    program = _PROGRAM.format(before=_AT_THE_END)
    done = subprocess.run(
        [sys.executable, "-c", program, "session", command, str(path), *options],
        capture_output=True,
        timeout=60,
        # No forked readers or encoders, which end through the same os._exit.
        env={**os.environ, "CTXMODES_READ_PROCESSES": "1"},
    )
    assert done.returncode == 0
    assert done.stderr.splitlines()[-1] == (
        b"kept closed paused" if "--json" in options else b"kept closed collecting"
    )


def test_a_program_that_goes_on_keeps_nothing_and_collects_again(
    session: tuple[Path, bytes], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    from ctxmodes import cli

    class Index:
        pass

    index = Index()
    reference = weakref.ref(index)
    cli.keep_to_the_end(index)
    del index
    assert reference() is None
    path, report = session
    assert gc.isenabled()
    assert cli.main(["session", "context", str(path), "--json"]) == 0
    assert gc.isenabled()
    assert capsysbinary.readouterr().out == report
