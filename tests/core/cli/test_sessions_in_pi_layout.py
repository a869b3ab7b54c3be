"""``ctxmodes run`` and ``ctxmodes session list`` on Pi's session directory layout."""

import json

import pytest

from ctxmodes.cli import main


@pytest.fixture
def agent_dir(tmp_path, monkeypatch):
    directory = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    return directory


@pytest.fixture
def project(tmp_path):
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


def script(tmp_path, *texts):
    path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    path.write_text(json.dumps({"responses": [{"text": text} for text in texts]}))
    return f"scripted:{path}"


def listed(capsys, project, *extra):
    capsys.readouterr()  # drop what earlier runs printed
    assert main(["session", "list", "--cwd", str(project), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_creates_a_session_where_pi_keeps_them(tmp_path, agent_dir, project, capsys):
    model = script(tmp_path, "hello")
    assert main(["run", "--cwd", str(project), "--model", model, "first prompt"]) == 0
    (info,) = listed(capsys, project)
    assert info["first_message"] == "first prompt"
    assert info["message_count"] == 2
    assert info["cwd"] == str(project)
    assert info["path"].startswith(str(agent_dir / "sessions"))


def test_continue_appends_to_the_most_recent_session(tmp_path, agent_dir, project, capsys):
    assert main(["run", "--cwd", str(project), "--model", script(tmp_path, "a"), "one"]) == 0
    assert main(["run", "--cwd", str(project), "--model", script(tmp_path, "b"), "two"]) == 0
    newest = listed(capsys, project)[0]
    args = ["run", "--continue", "--cwd", str(project), "--model", script(tmp_path, "c"), "three"]
    assert main(args) == 0
    sessions = listed(capsys, project)
    assert len(sessions) == 2
    assert sessions[0]["path"] == newest["path"]
    assert sessions[0]["message_count"] == 4


def test_list_all_covers_every_project(tmp_path, agent_dir, project, capsys):
    other = tmp_path / "other"
    other.mkdir()
    for directory in (project, other):
        assert main(["run", "--cwd", str(directory), "--model", script(tmp_path, "x"), "p"]) == 0
    assert {info["cwd"] for info in listed(capsys, project, "--all")} == {
        str(project),
        str(other),
    }


def test_empty_listing_says_so(agent_dir, project, capsys):
    assert main(["session", "list", "--cwd", str(project)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == f"no sessions for {project}"
