"""Pi's search tools, ``ls``, ``find`` and ``grep``: each call here answers what Pi 0.85's own
tool answers for the same call on the same folder (a git checkout with a ``.gitignore``,
dotfiles, names Node's ``localeCompare`` orders, a long line, a file that is not UTF-8), run
in node beside ours; fd and ripgrep are the machine's, as each finds them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import run_pi_script
from support.timebox import bounded

from ctxmodes.abort import AbortController
from ctxmodes.tools.base import Tool, ToolContext
from ctxmodes.tools.search import FindTool, GrepTool, LsTool

PI_SCRIPT = Path(__file__).parents[1].parent / "support" / "pi_search_tools.mjs"
TOOLS: dict[str, Tool] = {"ls": LsTool(), "find": FindTool(), "grep": GrepTool()}


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout to search, and an agent directory without Pi's downloaded programs."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_OFFLINE", "1")
    root = tmp_path / "checkout"
    files = {
        ".gitignore": "build/\n*.log\n",
        ".hidden.py": "def hidden():\n    return 1\n",
        "README.md": "# Title\nSee a.b and aXb.\n",
        "_private.py": "def private():\n    pass\n",
        "-dash.txt": "dash\n",
        "Zeta.py": "def zeta(a, b):\n    return a.b\n",
        "alpha.py": "import os\n\n\ndef alpha():\n    return os.sep\n",
        "app.log": "def logged\n",
        "build/out.py": "def built():\n    pass\n",
        "src/main.py": "def main():\n    print('DEF')\n\n\ndef helper():\n    pass\n",
        "src/deep/tests/x.spec.py": "def test_x():\n    assert True\n",
        "src/long.txt": "x" * 700 + " needle\n" + "short needle\n",
        "src/many.txt": ("many " + "y" * 600 + "\n") * 150,
        "src/émile.py": "def émile():\n    pass\n",
        "src/e.py": "def e():\n    pass\n",
        "src/f.py": "def f():\n    pass\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "src" / "latin1.txt").write_bytes("caf\xe9 needle\n".encode("latin-1"))
    (root / "empty").mkdir()
    (root / "dangling").symlink_to(root / "nowhere")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _ours(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    answers = []
    for name, arguments in calls:
        context = ToolContext(cwd=cwd, signal=AbortController().signal)
        result = TOOLS[name].execute("call-1", arguments, context)
        text = result.content[0].text  # type: ignore[union-attr]
        answers.append(
            {"error": text} if result.is_error else {"text": text, "details": result.details}
        )
    return answers


def _pis(cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = run_pi_script(PI_SCRIPT, str(cwd), stdin=json.dumps(calls))
    return answers


def _compare(
    cwd: Path, calls: list[tuple[str, dict[str, Any]]], *, unordered: bool = False
) -> None:
    """Ours and Pi's answers alike, call by call (``unordered``: fd's results come in the
    order its threads find them, so the lines of a result are compared as a set)."""
    for call, ours, pis in zip(calls, _ours(cwd, calls), _pis(cwd, calls), strict=True):
        if unordered and "text" in ours and "text" in pis:
            ours, pis = _sorted_lines(ours), _sorted_lines(pis)
        assert ours == pis, call
        # The details in Pi's order too: the session file records them as they are.
        assert json.dumps(ours) == json.dumps(pis), call


def _sorted_lines(answer: dict[str, Any]) -> dict[str, Any]:
    listing, _, notice = answer["text"].partition("\n\n[")
    return {**answer, "text": (sorted(listing.splitlines()), notice)}


@pytest.mark.slow  # runs Pi's tools in node
def test_ls_answers_as_pi_s(checkout: Path) -> None:
    _compare(
        checkout,
        [
            ("ls", {}),
            ("ls", {"path": "src"}),
            ("ls", {"path": "@src/deep"}),
            ("ls", {"limit": 3}),
            ("ls", {"path": "empty"}),
            ("ls", {"path": "missing"}),
            ("ls", {"path": "README.md"}),
            ("ls", {"path": str(checkout / "src")}),
        ],
    )


@pytest.mark.slow  # runs Pi's tools in node and fd
@pytest.mark.skipif(
    shutil.which("fd") is None and shutil.which("fdfind") is None, reason="fd is not installed"
)
def test_find_answers_as_pi_s(checkout: Path) -> None:
    plain = checkout.parent / "plain"
    plain.mkdir()
    (plain / ".gitignore").write_text("skipped.txt\n")
    (plain / "kept.txt").write_text("")
    (plain / "skipped.txt").write_text("")
    _compare(
        checkout,
        [
            ("find", {"pattern": "*.py"}),
            ("find", {"pattern": "src/**/*.py"}),
            ("find", {"pattern": "**/x.spec.py"}),
            ("find", {"pattern": "*.py", "path": "src"}),
            ("find", {"pattern": "*.nothing"}),
            ("find", {"pattern": "*", "path": "missing"}),
            # Outside a git checkout .gitignore files count too (fd before 8.7 refuses the
            # option that says so, for Pi as here).
            ("find", {"pattern": "*.txt", "path": str(plain)}),
        ],
        unordered=True,
    )
    [ours] = _ours(checkout, [("find", {"pattern": "*.py", "limit": 2})])
    [pis] = _pis(checkout, [("find", {"pattern": "*.py", "limit": 2})])
    assert ours["details"] == pis["details"] == {"resultLimitReached": 2}
    assert len(ours["text"].split("\n\n")[0].splitlines()) == 2
    assert ours["text"].split("\n\n")[1] == pis["text"].split("\n\n")[1]


@pytest.mark.slow  # runs Pi's tools in node and ripgrep
@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_grep_answers_as_pi_s(checkout: Path) -> None:
    _compare(
        checkout,
        [
            ("grep", {"pattern": "def", "path": "src/main.py"}),
            ("grep", {"pattern": "DEF", "path": "src", "ignoreCase": True, "glob": "main.py"}),
            ("grep", {"pattern": "a.b", "literal": True}),
            ("grep", {"pattern": "helper", "path": "src", "context": 2}),
            ("grep", {"pattern": "needle", "path": "src/long.txt"}),
            ("grep", {"pattern": "needle", "path": "src/latin1.txt"}),
            ("grep", {"pattern": "def", "path": "src/main.py", "limit": 1}),
            # Every limit at once: 100 matches, 50KB, lines cut.
            ("grep", {"pattern": "many", "path": "src/many.txt"}),
            ("grep", {"pattern": "nothing here"}),
            ("grep", {"pattern": "(", "path": "src"}),
            ("grep", {"pattern": "x", "path": "missing"}),
        ],
    )
    # Over the whole checkout ripgrep's threads report files in any order: one file's
    # lines (the ignored ones absent) as a set.
    _compare(checkout, [("grep", {"pattern": "^def "})], unordered=True)


def test_pi_s_own_copy_of_a_program_comes_first_and_none_is_a_clear_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pi downloads ripgrep and fd into its agent directory's ``bin``: found there first,
    then on ``PATH``; ctxmodes downloads nothing, and says what to install."""
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    (tmp_path / "a.txt").write_text("needle\n")
    calls = [("grep", {"pattern": "needle"}), ("find", {"pattern": "*.txt"})]
    assert _ours(tmp_path, calls) == [
        {"error": "ripgrep (rg) is not installed (the ripgrep package)"},
        {"error": "fd is not installed (the fd-find package on Debian and Ubuntu)"},
    ]
    (agent / "bin").mkdir(parents=True)
    script = '#!/bin/sh\nprintf \'%s\\n\' "$@" > "$0.args"\n'
    for name in ("rg", "fd"):
        (agent / "bin" / name).write_text(script)
        (agent / "bin" / name).chmod(0o755)
    _ours(tmp_path, calls)
    assert "--json" in (agent / "bin" / "rg.args").read_text().splitlines()
    assert "--glob" in (agent / "bin" / "fd.args").read_text().splitlines()


@pytest.mark.parametrize("name", ["grep", "find"])
def test_an_aborted_search_stops_its_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    (agent / "bin").mkdir(parents=True)
    for program in ("rg", "fd"):
        (agent / "bin" / program).write_text("#!/bin/sh\nexec sleep 60\n")
        (agent / "bin" / program).chmod(0o755)
    controller = AbortController()
    threading.Timer(0.1, controller.abort).start()
    started = time.monotonic()
    context = ToolContext(cwd=tmp_path, signal=controller.signal)
    result = TOOLS[name].execute("call-1", {"pattern": "x"}, context)
    assert result.is_error
    assert time.monotonic() - started < 10


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_grep_refuses_a_fifo_or_a_device(checkout: Path) -> None:
    """ripgrep would read either for ever: the call fails at once, naming what it is."""
    os.mkfifo(checkout / "pipe")
    context = ToolContext(cwd=checkout, signal=AbortController().signal)
    for path, what in (("pipe", "a FIFO"), ("/dev/zero", "a character device")):
        call = {"pattern": "x", "path": path}
        result = bounded(lambda call=call: TOOLS["grep"].execute("g", call, context), 10)
        assert result.is_error
        where = checkout / path
        assert result.content[0].text == f"Not a regular file or directory ({what}): {where}"
