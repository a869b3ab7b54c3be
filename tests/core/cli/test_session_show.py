"""``ctxmodes session show``: a long Tree session reads well at 80 columns."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from ctxmodes.cli import main
from ctxmodes.session.manager import SessionManager

WINDOWS = 40


@pytest.fixture(scope="module")
def tree_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Tree session of 40 rollovers, written by ``ctxmodes run --mode tree``."""
    directory = tmp_path_factory.mktemp("tree40")
    # Each prompt after the first rolls over; the marker of the new window starts its turn.
    responses = [{"text": "working on step 0"}]
    for window in range(1, WINDOWS + 1):
        responses += [{"tool_calls": [{"name": "new_context"}]}, {"text": f"working on {window}"}]
    summaries = [f"Step {w} finished: wrote part {w} of the report." for w in range(WINDOWS)]
    script = directory / "script.json"
    script.write_text(json.dumps({"responses": responses, "summaries": summaries}))
    session = directory / "tree40.jsonl"
    argv = ["run", "--mode", "tree", "--model", f"scripted:{script}", "--session", str(session)]
    argv += ["--cwd", str(directory), *(f"step {w}" for w in range(WINDOWS + 1))]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return session


def show(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["session", "show", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_active_path_stays_at_one_indent_with_windows_collapsed(
    tree_session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    lines = show(capsys, str(tree_session))
    with SessionManager.open(tree_session, read_only=True) as manager:
        active = manager.get_branch_ids()
        leaf = manager.get_leaf_id()
    drawing = lines[2:]  # after the file line and the session title
    assert all(len(line) <= 80 for line in lines[1:])
    path_lines = [line for line in drawing if line.startswith("● ")]
    assert [line.split()[1] for line in path_lines] == active, "every id whole, in order"
    assert path_lines[-1].endswith("◀ leaf")
    assert leaf in path_lines[-1]
    collapsed = [line for line in drawing if line.startswith("  ⎇ ")]
    assert len(collapsed) == WINDOWS
    for number, line in enumerate(collapsed):
        assert re.match(
            rf"  ⎇ window {number} archived · \d+ entries · Step {number} finished", line
        )
    assert "(window 40)" in drawing[-2]


def test_full_draws_every_entry(
    tree_session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "4000")
    text = "\n".join(show(capsys, str(tree_session), "--full"))
    with SessionManager.open(tree_session, read_only=True) as manager:
        ids = [entry.id for entry in manager.get_entries()]
    assert all(entry_id in text for entry_id in ids)


def test_full_keeps_every_id_whole_at_200_columns(
    tree_session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    lines = show(capsys, str(tree_session), "--full")
    with SessionManager.open(tree_session, read_only=True) as manager:
        ids = [entry.id for entry in manager.get_entries()]
        active = manager.get_branch_ids()
    assert len(ids) > 300
    drawn = [match for line in lines[2:] for match in re.findall(r"\b[0-9a-f]{8}\b", line)]
    assert sorted(drawn) == sorted(ids), "every entry once, its id whole"
    path_lines = [line for line in lines[2:] if "● " in line]
    indents = {line.index("● ") for line in path_lines}
    assert len(indents) == 1, "the active path stays at one indent"
    assert [re.search(r"● (\S+)", line).group(1) for line in path_lines] == active
