"""A mode whose plugin is installed but not loaded (blocked, left out of the allow list) is
not called unknown: every command that resolves the mode says why the plugin is not loaded and
which settings decide it, in one line, as ``ctxmodes modes`` lists the plugin. A plugin that
fails to load stops every command with one line naming it, whatever the mode."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings

BLOCKED = (
    "no loaded plugin provides mode 'tree'; plugin 'tree' is blocked: remove it from "
    "plugins.block and CTXMODES_BLOCK_PLUGINS to load it"
)
NOT_ALLOWED = (
    "no loaded plugin provides mode 'tree'; plugin 'tree' is not allowed: the allow list "
    "(plugins.allow, CTXMODES_LOAD_PLUGINS) leaves it out; add it there to load it"
)

#: How a user keeps ``tree`` from loading: the status ``ctxmodes modes`` shows, the
#: environment and the user file that do it, and the error's words.
SELECTIONS = {
    "blocked by the environment": ("blocked", {"CTXMODES_BLOCK_PLUGINS": "tree"}, "", BLOCKED),
    "blocked by the user file": ("blocked", {}, '[plugins]\nblock = ["tree"]\n', BLOCKED),
    "left out by the environment": (
        "not allowed",
        {"CTXMODES_LOAD_PLUGINS": "local"},
        "",
        NOT_ALLOWED,
    ),
    "left out by the user file": (
        "not allowed",
        {},
        '[plugins]\nallow = ["local", "remote"]\n',
        NOT_ALLOWED,
    ),
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_settings(tmp_path, monkeypatch)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))


@pytest.fixture(params=sorted(SELECTIONS))
def selection(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """Keep ``tree`` from loading one of the ways; its status and the error's words."""
    status, environment, user_file, words = SELECTIONS[request.param]
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(user_file)
    return status, words


def scripted_model(tmp_path: Path) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "fine"}]}))
    return f"scripted:{script}"


def session_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "agent").rglob("*.jsonl"))


def test_the_listing_shows_why_the_plugin_is_not_loaded(
    selection: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = selection
    code, out, err = ctxmodes(capsys, "modes")
    assert code == 0, err
    rows = dict(re.split(r"\s{2,}", line)[:2] for line in out.splitlines()[1:])
    assert rows["tree"] == status
    assert rows["off"] == "active"


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (("modes", "--mode", "tree"), "command line: mode: "),
        (("config", "show", "--mode", "tree"), "command line: mode: "),
    ],
)
def test_the_requested_mode_is_said_to_be_not_loaded_and_why(
    selection: tuple[str, str],
    argv: tuple[str, ...],
    where: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, words = selection
    assert ctxmodes(capsys, *argv) == (1, "", f"ctxmodes: error: {where}{words}\n")


@pytest.mark.parametrize("command", [("modes",), ("config", "show")])
def test_the_configured_mode_is_said_to_be_not_loaded_where_it_was_set(
    selection: tuple[str, str],
    command: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, words = selection
    user_file = tmp_path / "config" / "config.toml"
    user_file.write_text('mode = "tree"\n' + user_file.read_text())
    expected = f"ctxmodes: error: {user_file}: mode: {words}\n"
    assert ctxmodes(capsys, *command) == (1, "", expected)


def test_settings_of_a_mode_that_is_not_loaded_cannot_be_validated_and_say_why(
    selection: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, words = selection
    user_file = tmp_path / "config" / "config.toml"
    user_file.write_text(user_file.read_text() + "[modes.tree]\narchive_max_depth = 3\n")
    assert ctxmodes(capsys, "config", "show") == (
        1,
        "",
        f"ctxmodes: error: [modes.tree]: {words}\n",
    )


@pytest.mark.parametrize("how", ["--mode", "CTXMODES_MODE"])
def test_a_session_does_not_start_in_a_mode_that_is_not_loaded(
    selection: tuple[str, str],
    how: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, words = selection
    argv = ["run", "--model", scripted_model(tmp_path), "hello"]
    if how == "--mode":
        argv[1:1] = ["--mode", "tree"]
    else:
        monkeypatch.setenv("CTXMODES_MODE", "tree")
    assert ctxmodes(capsys, *argv) == (1, "", f"ctxmodes: error: {words}\n")
    assert session_files(tmp_path) == [], "nothing is written before the mode is known"


def test_another_mode_asked_for_stands_in_for_a_configured_one_that_is_not_loaded(
    selection: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The configured default matters only to a session that asks for no mode: ``--mode
    off`` runs, and the session records ``off``; without it the default is refused."""
    _, words = selection
    user_file = tmp_path / "config" / "config.toml"
    user_file.write_text('mode = "tree"\n' + user_file.read_text())
    model = scripted_model(tmp_path)
    assert ctxmodes(capsys, "run", "--model", model, "hello") == (
        1,
        "",
        f"ctxmodes: error: {words}\n",
    )
    assert session_files(tmp_path) == []
    code, out, err = ctxmodes(capsys, "run", "--mode", "off", "--model", model, "hello")
    assert (code, err) == (0, "")
    assert "fine" in out
    (session,) = session_files(tmp_path)
    assert '"customType":"ctxmodes-mode","data":{"protocol":1,"mode":"off"' in (session.read_text())


def test_switching_to_a_mode_that_is_not_loaded_is_refused_with_the_reason(
    selection: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, words = selection
    code, _, err = ctxmodes(capsys, "run", "--model", scripted_model(tmp_path), "/mode tree")
    assert (code, err) == (1, f"ctxmodes: error: /mode: {words}\n")


def test_a_session_recording_a_mode_that_is_not_loaded_is_not_continued(
    selection: tuple[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, words = selection
    session = tmp_path / "tree-session.jsonl"
    with monkeypatch.context() as unselected:
        for name in ("CTXMODES_BLOCK_PLUGINS", "CTXMODES_LOAD_PLUGINS"):
            unselected.delenv(name, raising=False)
        unselected.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "no-config"))
        argv = ("run", "--mode", "tree", "--model", scripted_model(tmp_path))
        code, _, err = ctxmodes(capsys, *argv, "--session", str(session), "first")
        assert code == 0, err
    before = session.read_bytes()
    code, _, err = ctxmodes(
        capsys, "run", "--model", scripted_model(tmp_path), "--session", str(session), "again"
    )
    assert (code, err) == (1, f"ctxmodes: error: the mode this session records: {words}\n")
    assert session.read_bytes() == before


def test_a_name_no_plugin_has_is_unknown_and_the_plugins_not_loaded_are_listed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXMODES_BLOCK_PLUGINS", "tree")
    monkeypatch.setenv("CTXMODES_LOAD_PLUGINS", "local,tree")
    expected = (
        "ctxmodes: error: command line: mode: unknown mode 'fancy'; installed modes: local, "
        "off; plugins not loaded: remote (not allowed), tree (blocked)\n"
    )
    for command in (("modes",), ("config", "show")):
        assert ctxmodes(capsys, *command, "--mode", "fancy") == (1, "", expected)


BROKEN = "raise ImportError('probe_broken needs the fastmath extension\\nbuild it with make')\n"
BROKEN_LINE = (
    "ctxmodes: error: plugin 'probe_broken' (probe_broken) failed to load: probe_broken needs "
    "the fastmath extension (probe_broken.py, line 1) (to run without it, block it: "
    "plugins.block or CTXMODES_BLOCK_PLUGINS)\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ("modes",),
        ("modes", "--mode", "probe_broken"),
        ("config", "show", "--mode", "probe_broken"),
        ("run", "--mode", "probe_broken", "hello"),
        ("run", "hello"),
    ],
)
def test_a_plugin_that_fails_to_load_stops_every_command_with_the_first_line_of_its_error(
    argv: tuple[str, ...],
    installed: Callable[[str, str], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    installed("probe_broken", BROKEN)
    if argv[0] == "run":
        argv = ("run", "--model", scripted_model(tmp_path), *argv[1:])
    assert ctxmodes(capsys, *argv) == (1, "", BROKEN_LINE)
    assert session_files(tmp_path) == []


def test_blocking_a_plugin_that_fails_to_load_is_the_way_out(
    installed: Callable[[str, str], None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    installed("probe_broken", BROKEN)
    monkeypatch.setenv("CTXMODES_BLOCK_PLUGINS", "probe_broken")
    code, out, err = ctxmodes(capsys, "modes")
    assert code == 0, err
    assert [line.split()[:2] for line in out.splitlines() if "probe_broken" in line] == [
        ["probe_broken", "blocked"]
    ]
    code, _, err = ctxmodes(capsys, "run", "--model", scripted_model(tmp_path), "hello")
    assert code == 0, err
    expected = (
        "ctxmodes: error: command line: mode: no loaded plugin provides mode 'probe_broken'; "
        "plugin 'probe_broken' is blocked: remove it from plugins.block and "
        "CTXMODES_BLOCK_PLUGINS to load it\n"
    )
    assert ctxmodes(capsys, "modes", "--mode", "probe_broken") == (1, "", expected)
