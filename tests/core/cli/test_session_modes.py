"""A session remembers the mode that manages it: recorded in the file, inferred for files
without the record, changed only when the change is confirmed."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.extension_files import EXTENSION_FILES, local_file, remote_file, tree_file
from support.pi_oracle import our_view, require_pi

from ctxmodes.session.manager import SessionManager
from ctxmodes.session_mode import MODE_ENTRY_TYPE, recorded_mode

MANAGED = ("off", "local", "tree")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)


def _script(tmp_path: Path, responses: list[dict[str, Any]]) -> str:
    path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    path.write_text(json.dumps({"responses": responses}))
    return f"scripted:{path}"


def _run(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    session: Path,
    *options: str,
    responses: list[dict[str, Any]] | None = None,
    prompt: str = "next",
) -> tuple[int, str, str]:
    model = _script(tmp_path, responses if responses is not None else [{"text": "ok"}])
    argv = ["run", "--model", model, "--session", str(session), "--cwd", str(tmp_path)]
    return ctxmodes(capsys, *argv, *options, prompt)


def _traced(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


def _tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in request["tools"]}


def _mode_entries(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [r for r in records if r["type"] == "custom" and r["customType"] == MODE_ENTRY_TYPE]


def test_a_tree_session_continued_without_mode_stays_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "s.jsonl"
    rollover = [{"tool_calls": [{"name": "new_context"}]}, {"text": "window 1"}]
    code, _, err = _run(capsys, tmp_path, session, "--mode", "tree", responses=rollover)
    assert code == 0, err
    assert [e["data"]["mode"] for e in _mode_entries(session)] == ["tree"]
    trace = tmp_path / "t.jsonl"
    code, _, err = _run(capsys, tmp_path, session, "--trace", str(trace))
    assert code == 0, err
    (request,) = _traced(trace)
    assert "new_context" in _tool_names(request)
    sent = json.dumps(request["messages"])
    assert "branchSummary" not in sent, "Tree keeps its archive summaries hidden"
    assert len(_mode_entries(session)) == 1, "an unchanged mode is not recorded again"


@pytest.mark.parametrize(("old", "new"), list(itertools.permutations(MANAGED, 2)))
def test_switching_modes_needs_a_confirmation(
    old: str, new: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "s.jsonl"
    assert _run(capsys, tmp_path, session, "--mode", old, prompt="first")[0] == 0
    before = session.read_bytes()
    code, out, err = _run(capsys, tmp_path, session, "--mode", new)
    assert code == 1
    assert err.count("\n") == 1
    assert f"switching this session from {old} to {new}: " in err
    assert "--switch-mode" in err
    assert session.read_bytes() == before, "a refused switch writes nothing"
    trace = tmp_path / "t.jsonl"
    code, out, err = _run(
        capsys, tmp_path, session, "--mode", new, "--switch-mode", "--trace", str(trace)
    )
    assert code == 0, err
    assert f"switching this session from {old} to {new}" in out
    assert [e["data"]["mode"] for e in _mode_entries(session)] == [old, new]
    (request,) = _traced(trace)
    assert ("new_context" in _tool_names(request)) == (new != "off")
    # The next run without --mode keeps the new mode.
    assert _run(capsys, tmp_path, session)[0] == 0
    assert [e["data"]["mode"] for e in _mode_entries(session)] == [old, new]


@pytest.mark.parametrize(
    ("target", "said", "summary_sent"),
    [
        (
            "off",
            "1 archived summary becomes an ordinary Pi summary and re-enters the context; "
            "run /compact first to leave cleanly",
            True,
        ),
        (
            "local",
            "1 archived window leaves history and its summary stays out of the context; "
            "window markers and notes carry over",
            False,
        ),
    ],
)
def test_leaving_tree_says_whether_its_summaries_re_enter(
    target: str, said: str, summary_sent: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tree_file(tmp_path)
    code, _, err = _run(capsys, tmp_path, session, "--mode", target)
    assert code == 1
    assert f"switching this session from tree to {target}: {said}; " in err
    trace = tmp_path / "t.jsonl"
    code, _, err = _run(
        capsys, tmp_path, session, "--mode", target, "--switch-mode", "--trace", str(trace)
    )
    assert code == 0, err
    (request,) = _traced(trace)
    assert ("Pick the release code name" in json.dumps(request["messages"])) == summary_sent
    if target == "local":
        code, out, err = ctxmodes(capsys, "history", str(session), "list_windows")
        assert code == 0, err
        windows = [w["window_id"] for w in json.loads(out)["windows"]]
        assert windows == ["window-1"], "the archived window is only on its side branch"


@pytest.mark.parametrize("target", MANAGED)
def test_switching_a_remote_session_away_is_confirmed_too(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = remote_file(tmp_path)
    code, _, err = _run(capsys, tmp_path, session, "--mode", target)
    assert code == 1
    assert "switching this session from remote to" in err
    assert "Remote service are out of reach" in err
    code, _, err = _run(capsys, tmp_path, session, "--mode", target, "--switch-mode")
    assert code == 0, err
    assert [e["data"]["mode"] for e in _mode_entries(session)] == [target]


@pytest.mark.parametrize("source", MANAGED)
def test_switching_to_remote_is_confirmed_and_remote_then_decides(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "s.jsonl"
    assert _run(capsys, tmp_path, session, "--mode", source, prompt="first")[0] == 0
    before = session.read_bytes()
    code, _, err = _run(capsys, tmp_path, session, "--mode", "remote")
    assert code == 1
    assert f"switching this session from {source} to remote" in err
    # Confirmed, Remote itself refuses a model that is not on the Codex transport; the
    # session keeps its mode.
    code, _, err = _run(capsys, tmp_path, session, "--mode", "remote", "--switch-mode")
    assert code == 1
    assert "Codex" in err
    assert session.read_bytes() == before


@pytest.mark.parametrize("mode", ["tree", "local", "remote", None])
def test_extension_files_are_inferred_and_recorded_on_the_first_append(
    mode: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = EXTENSION_FILES[mode](tmp_path)
    before = session.read_bytes()
    code, out, _ = ctxmodes(capsys, "session", "show", str(session))
    assert code == 0
    shown = f"mode {mode} (inferred)" if mode else "mode off (default)"
    assert shown in out.splitlines()[0]
    assert session.read_bytes() == before, "looking records nothing"
    if mode == "remote":
        return  # running Remote needs a model on the Codex transport
    with SessionManager.open(session, read_only=True) as manager:
        old_leaf = manager.get_leaf_id()
    assert _run(capsys, tmp_path, session)[0] == 0
    with SessionManager.open(session, read_only=True) as manager:
        first_new = manager.get_entries()[len(before.splitlines()) - 1]
        record = recorded_mode(manager)
    assert first_new.type == "custom"
    assert first_new.parent_id == old_leaf
    assert record is not None
    assert record.mode == (mode or "off")


def test_the_configured_default_never_overrides_a_recorded_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tree_file(tmp_path)
    monkeypatch.setenv("CTXMODES_MODE", "local")
    trace = tmp_path / "t.jsonl"
    code, _, err = _run(capsys, tmp_path, session, "--trace", str(trace))
    assert code == 0, err
    (request,) = _traced(trace)
    assert "Pick the release code name" not in json.dumps(request["messages"])
    assert [e["data"]["mode"] for e in _mode_entries(session)] == ["tree"]
    # A new session takes the configured default.
    fresh = tmp_path / "fresh.jsonl"
    assert _run(capsys, tmp_path, fresh)[0] == 0
    assert [e["data"]["mode"] for e in _mode_entries(fresh)] == ["local"]


@pytest.mark.parametrize("builder", [tree_file, local_file])
def test_history_reads_the_mode_from_the_file(
    builder: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = builder(tmp_path)
    code, out, err = ctxmodes(capsys, "history", str(session), "list_windows")
    assert code == 0, err
    windows = json.loads(out)["windows"]
    assert [w["window_id"] for w in windows] == ["window-0", "window-1"]
    code, out, err = ctxmodes(capsys, "notes", str(session), "list_files_by_prefix")
    assert code == 0, err


def test_a_missing_action_is_the_only_argument_named_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The NAME=VALUE pairs are optional (``list_files_by_prefix`` takes none)."""
    with pytest.raises(SystemExit) as exited:
        ctxmodes(capsys, "notes", str(tree_file(tmp_path)))
    assert exited.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error == "ctxmodes notes: error: the following arguments are required: ACTION"


def test_history_of_an_unmanaged_file_names_the_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = EXTENSION_FILES[None](tmp_path)
    code, _, err = ctxmodes(capsys, "history", str(session), "list_windows")
    assert code == 1
    assert "mode 'off' keeps no history" in err


def test_export_names_the_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = tree_file(tmp_path)
    page = tmp_path / "page.html"
    assert ctxmodes(capsys, "session", "export", str(session), "-o", str(page))[0] == 0
    assert "mode tree (inferred)" in page.read_text()


@pytest.mark.pi
def test_the_real_pi_opens_every_file_as_we_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pi = require_pi()
    files: list[Path] = []
    for mode, builder in EXTENSION_FILES.items():
        directory = tmp_path / (mode or "plain")
        directory.mkdir()
        files.append(builder(directory))
        if mode != "remote":
            # One more prompt records the inferred mode.
            assert _run(capsys, directory, files[-1])[0] == 0
    for old, new in (("tree", "local"), ("local", "off"), ("off", "tree")):
        session = tmp_path / f"{old}-{new}.jsonl"
        assert _run(capsys, tmp_path, session, "--mode", old, prompt="first")[0] == 0
        assert _run(capsys, tmp_path, session, "--mode", new, "--switch-mode")[0] == 0
        files.append(session)
    requests: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []
    for path in files:
        with SessionManager.open(path, read_only=True) as manager:
            positions = [None, *(entry.id for entry in manager.get_entries())]
            ours.append(our_view(manager, positions))
        requests.append({"file": str(path), "at": positions})
    for request, answer, mine in zip(requests, pi.open_many(requests), ours, strict=True):
        assert json.dumps(answer, sort_keys=True) == json.dumps(mine, sort_keys=True), request
    assert sum(len(_mode_entries(path)) for path in files) >= 9
