from __future__ import annotations

from pathlib import Path

from ctxmodes.tui.prompt_history import PromptHistory


def test_prompts_are_kept_across_runs_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "prompt-history"
    first = PromptHistory(path)
    assert first.problem is None
    first.append_string("one\ntwo lines")
    first.append_string("three")
    again = PromptHistory(path)
    assert list(again.load_history_strings()) == ["three", "one\ntwo lines"]


def test_a_folder_that_cannot_be_made_keeps_the_prompts_of_the_run(tmp_path: Path) -> None:
    """Where the state folder would be stands a file: the session is not refused (it
    was, in one line), the prompts of the run are recalled, and the problem is said."""
    (tmp_path / "state").write_text("a file, not a folder")
    history = PromptHistory(tmp_path / "state" / "ctxmodes" / "prompt-history")
    assert history.problem is not None
    assert history.problem.endswith("Not a directory; this run's prompts are kept until it ends")
    history.append_string("still recalled")
    assert history.get_strings() == ["still recalled"]


def test_a_file_that_stops_taking_writes_is_said_once(tmp_path: Path) -> None:
    """The disk fills or the file goes read-only during the run: one notice, the prompts
    still recalled, no error reaching the terminal."""
    path = tmp_path / "prompt-history"
    history = PromptHistory(path)
    said: list[str] = []
    history.on_problem = said.append
    history.append_string("kept in the file")
    path.unlink()
    path.mkdir()  # a folder where the file was: writes to it fail
    history.append_string("second")
    history.append_string("third")
    assert len(said) == 1
    assert "Is a directory" in said[0]
    assert history.get_strings() == ["kept in the file", "second", "third"]
