"""Every command that reads a session, in-process, on mutated real session files: an exit
status of 0 or 1, nothing on standard error but ``ctxmodes:`` lines, never a traceback,
never a hang; and ``ctxmodes run`` on the same file only ever appends to it."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import SeedSessions, bounded, fuzz_settings, mutated_session, seed_sessions
from support.pi_oracle import require_oracle_cases

from ctxmodes.cli import main

pytestmark = pytest.mark.slow

COMMANDS = [
    ["session", "show", "{}"],
    ["session", "show", "{}", "--full"],
    ["session", "context", "{}"],
    ["session", "context", "{}", "--json", "--llm"],
    ["session", "context", "{}", "--at", "null", "--json"],
    ["history", "{}", "list_windows", "--mode", "tree"],
    ["history", "{}", "list_items", "--mode", "local"],
    ["history", "{}", "search_contents", "query=code name", "--mode", "tree"],
    ["history", "{}", "read_item", "item_id=28b8ec0f", "--mode", "tree"],
    ["notes", "{}", "list_files_by_prefix", "--mode", "local"],
    ["notes", "{}", "read_file", "path=checkpoint.md", "--mode", "tree"],
    ["notes", "{}", "search_contents", "query=Release", "--mode", "local"],
]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> SeedSessions:
    cases = require_oracle_cases()
    return SeedSessions(seed_sessions(tmp_path_factory.mktemp("seeds"), cases))


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@fuzz_settings(max_examples=40)
@given(data=st.data())
def test_commands_on_mutated_sessions_answer_or_fail_in_one_line(
    seeds: SeedSessions, data: st.DataObject, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = data.draw(mutated_session(seeds.lines))
    with tempfile.TemporaryDirectory() as directory:
        monkeypatch.setenv("CTXMODES_CONFIG_DIR", directory)
        path = Path(directory) / "fuzzed.jsonl"
        path.write_bytes(content)
        for command in COMMANDS:
            argv = [str(path) if part == "{}" else part for part in command]
            code, err = bounded(lambda argv=argv: run(argv))
            assert code in (0, 1), argv
            lines = err.splitlines()
            assert all(line.startswith("ctxmodes: ") for line in lines), (argv, err[:500])
            assert len(lines) <= 12, "warnings are bounded"
            if code == 1:
                assert lines[-1].startswith("ctxmodes: error: "), argv
        assert path.read_bytes() == content, "read-only commands never write"
        script = Path(directory) / "script.json"
        script.write_text('{"responses": [{"text": "ok"}], "summaries": ["s"]}')
        for mode in ("tree", "local"):
            argv = ["run", "--mode", mode, "--model", f"scripted:{script}"]
            argv += ["--session", str(path), "--cwd", directory, "hello"]
            monkeypatch.setenv("PI_CODING_AGENT_DIR", directory)
            code, err = bounded(lambda argv=argv: run(argv))
            assert code in (0, 1), argv
            assert "Traceback" not in err
            assert path.read_bytes().startswith(content), "a session file is only appended to"
