"""The interactive session in a real terminal (tmux), started from a shell as a person
starts it: nothing but the session's own drawing reaches the screen, and the slash-command
menu keeps its rows when the editor sits at the bottom of the screen."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from support.pi_oracle import pi_session_name
from support.tmux import WAIT, Tmux, ctxmodes_command, private_env, quote

from ctxmodes.config import TerminalSettings

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FOOTER = "scripted/scripted"
#: A terminal's answer to a cursor-position request, as it shows when echoed.
ECHOED_REPORT = re.compile(r"\^\[\[\d+;\d+R|\x1b\[\d+;\d+R")


def shell_in_tmux(work: Path, *, rows: int = 40) -> Tmux:
    """An interactive shell in tmux, its terminal in the state a person's would be."""
    return Tmux(["bash", "--norc", "--noprofile"], private_env(work), columns=100, rows=rows)


def chat_command(work: Path) -> str:
    """The command line a person types to start the session in ``work``."""
    script = work / "script.json"
    script.write_text('{"responses": [{"text": "hello there"}]}')
    command = ctxmodes_command("chat", "--model", "scripted:script.json")
    return f"cd {quote(str(work))} && " + " ".join(quote(part) for part in command)


def start_chat(tmux: Tmux, work: Path) -> str:
    """Type the command that starts the session, as a person would; the first screen."""
    tmux.type(chat_command(work))
    tmux.key("Enter")
    return tmux.wait(FOOTER)


def test_no_cursor_position_report_reaches_the_screen_at_start(tmp_path):
    for launch in range(8):
        work = tmp_path / f"launch-{launch}"
        work.mkdir()
        tmux = shell_in_tmux(work)
        try:
            start_chat(tmux, work)
            tmux.type("hi")
            tmux.key("Enter")
            screen = tmux.wait("hello there")
            assert not ECHOED_REPORT.search(screen), f"launch {launch}:\n{screen}"
            prompt_lines = [line for line in screen.splitlines() if line.startswith("\u203a")]
            assert prompt_lines[0] == "\u203a hi", screen
        finally:
            tmux.close()


def draft_rows(screen: str) -> list[str]:
    """The editor's rows on ``screen``: the last prompt mark's, and the indented ones under
    it."""
    lines = screen.splitlines()
    # The last mark is the editor's (tmux drops an empty editor's space after it).
    first = max(n for n, line in enumerate(lines) if line.startswith("\u203a"))
    rows = [lines[first][2:].rstrip()]
    for line in lines[first + 1 :]:
        if not line.startswith("  "):
            break
        rows.append(line[2:].rstrip())
    return rows


def test_a_long_prompt_wraps_at_spaces_and_up_and_down_move_between_its_rows(tmp_path):
    tmux = shell_in_tmux(tmp_path)
    try:
        start_chat(tmux, tmp_path)
        words = [f"word{number:02d}" for number in range(40)]
        tmux.type(" ".join(words))
        rows = draft_rows(tmux.wait("word39"))
        assert len(rows) == 3, rows
        # Each row ends at a word (the space stays at its end), none cut in two.
        assert " ".join(rows).split() == words, rows
        assert all(len(row) <= 100 - 3 for row in rows), rows
        tmux.key("Up")
        tmux.type("X")
        rows = draft_rows(tmux.until(lambda text: "X" in "".join(draft_rows(text))))
        # ↑ from the end of the last row lands in the row above, at the same column.
        assert "X" in rows[1], rows
        tmux.key("Down", "End")
        tmux.type("Z")
        screen = tmux.until(lambda text: draft_rows(text)[-1].endswith("Z"))
        sent = " ".join(draft_rows(screen)).split()
        tmux.key("Enter")
        tmux.wait("hello there")
        # On an empty draft, ↑ brings back the prompt sent, wrapped the same way.
        tmux.key("Up")
        screen = tmux.until(lambda text: draft_rows(text)[-1].endswith("Z"))
        assert " ".join(draft_rows(screen)).split() == sent, screen
    finally:
        tmux.close()


def test_the_slash_menu_keeps_its_rows_at_the_bottom_of_the_screen(tmp_path):
    tmux = shell_in_tmux(tmp_path, rows=20)
    try:
        # Fill the screen first: the editor starts on its last rows, as in real use.
        tmux.type("seq 100")
        tmux.key("Enter")
        start_chat(tmux, tmp_path)
        tmux.type("/")
        screen = tmux.wait("/compact")
        menu = [line for line in screen.splitlines() if re.match(r"^\s+/\w", line)]
        assert len(menu) >= 8, screen
        assert len(menu) == TerminalSettings().completion_rows, screen
        tmux.type("mo")
        # The menu narrows to the commands that start so (drawn a moment after the text).
        deadline = time.monotonic() + WAIT
        while True:
            below = tmux.screen().partition("\u203a /mo")[2]
            if "/model" in below and "/compact" not in below:
                break
            assert time.monotonic() < deadline, below
            time.sleep(0.05)
    finally:
        tmux.close()


def test_the_slash_menu_shows_as_many_rows_as_pis_autocomplete_max_visible(tmp_path):
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "settings.json").write_text('{"autocompleteMaxVisible": 4}')
    tmux = shell_in_tmux(tmp_path)
    try:
        start_chat(tmux, tmp_path)
        tmux.type("/")
        screen = tmux.wait("/compact")
        menu = [line for line in screen.splitlines() if re.match(r"^\s+/\w", line)]
        assert len(menu) == 4, screen
    finally:
        tmux.close()


def test_keybindings_json_rebinds_the_terminal_s_actions(tmp_path):
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "keybindings.json").write_text(
        '{"app.thinking.toggle": "ctrl+y", "tui.input.newLine": ["shift+enter", "alt+j"]}'
    )
    tmux = shell_in_tmux(tmp_path)
    try:
        screen = start_chat(tmux, tmp_path)
        assert "tui.input.newLine: 'shift+enter': terminals send the same as 'enter'" in screen
        tmux.key("C-y")
        tmux.wait("Thinking shown in full")
        tmux.type("first line")
        tmux.key("M-j")
        tmux.type("second line")
        screen = tmux.wait("second line")
        lines = screen.splitlines()
        at = lines.index("\u203a first line")
        assert lines[at + 1].strip() == "second line"
    finally:
        tmux.close()


@pytest.fixture
def x_display(tmp_path):
    """A virtual X display of the test's own, for the real clipboard (xclip)."""
    import subprocess
    import time

    if shutil.which("Xvfb") is None or shutil.which("xclip") is None:
        pytest.skip("Xvfb and xclip are not installed (make test installs them)")
    display = f":{os.getpid() % 500 + 100}"
    server = subprocess.Popen(
        ["Xvfb", display, "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{display[1:]}").exists():
        assert time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    try:
        yield display
    finally:
        server.terminate()
        server.wait(10)


def test_ctrl_v_pastes_a_clipboard_image_as_a_file_path_then_text(tmp_path, x_display):
    import subprocess

    from support.images import solid_png

    image = solid_png(4, 3, (200, 30, 30))
    env = {**private_env(tmp_path), "DISPLAY": x_display}
    subprocess.run(
        ["xclip", "-selection", "clipboard", "-t", "image/png", "-i"],
        input=image,
        env=env,
        check=True,
        timeout=10,
    )
    tmux = Tmux(["bash", "--norc", "--noprofile"], env, columns=160, rows=40)
    try:
        start_chat(tmux, tmp_path)
        tmux.key("C-v")
        screen = tmux.wait(".png")
        pasted = re.search(r"\u203a (\S+ctxmodes-clipboard-\S+\.png)", screen)
        assert pasted is not None, screen
        assert Path(pasted.group(1)).read_bytes() == image
        tmux.key("C-u")
        subprocess.run(
            ["xclip", "-selection", "clipboard", "-i"],
            input=b"plain words",
            env=env,
            check=True,
            timeout=10,
        )
        tmux.key("C-v")
        tmux.wait("\u203a plain words")
    finally:
        tmux.close()


def test_ctrl_v_without_a_clipboard_says_so(tmp_path):
    tmux = shell_in_tmux(tmp_path)
    try:
        start_chat(tmux, tmp_path)
        tmux.key("C-v")
        tmux.wait("Nothing to paste: the clipboard is empty or unreachable")
    finally:
        tmux.close()


def test_ctrl_z_suspends_to_the_shell_and_fg_brings_the_session_back_as_it_was(tmp_path):
    tmux = shell_in_tmux(tmp_path)
    try:
        start_chat(tmux, tmp_path)
        tmux.type("hi")
        tmux.key("C-z")
        tmux.wait("Stopped")
        tmux.type("fg")
        tmux.key("Enter")
        tmux.wait("\u203a hi")  # the editor's text kept
        tmux.key("Enter")
        tmux.wait("hello there")
    finally:
        tmux.close()


def test_the_mode_switch_question_is_shown_whole_on_a_narrow_terminal(tmp_path):
    """``/mode NAME`` asks with one long sentence saying what the switch changes: it wraps
    at the terminal's width, none of it cut off."""
    (tmp_path / "script.json").write_text('{"responses": [{"text": "hello there"}]}')
    command = ctxmodes_command("chat", "--mode", "tree", "--model", "scripted:script.json")
    tmux = Tmux(["env", "-C", str(tmp_path), *command], private_env(tmp_path), columns=60)
    try:
        tmux.wait(FOOTER)
        tmux.type("hi")
        tmux.key("Enter")
        tmux.wait("hello there")
        tmux.type("/mode local")
        tmux.key("Enter")
        screen = tmux.wait("Stay in tree")
        question = screen.rpartition("hello there")[2].partition("\n> ")[0]
        assert " ".join(question.split()).startswith(
            "Switching this session from tree to local: "
        ), screen
        assert " ".join(question.split()).endswith(
            "local manages the context from the next prompt"
        ), screen
        assert all(len(line) <= 60 for line in question.splitlines())
    finally:
        tmux.close()


def test_chat_r_renames_one_session_and_deletes_another_as_pi_s_picker_does(tmp_path):
    """``chat -r`` in a real terminal: Ctrl+R on a session, End (the cursor starts before
    the name, as in Pi's rename field) and its name typed on, Enter;
    Ctrl+D on another, Enter to confirm. The first file gains the entry Pi reads its name
    from, the second goes to ``trash``, and the picker shows both at once."""
    import orjson

    from ctxmodes.session import UserMessage
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.paths import default_session_dir

    project = tmp_path / "project"
    project.mkdir()
    sessions = default_session_dir(project, tmp_path / "pi")
    paths = {}
    for text, name in (("keep this one", "first name"), ("drop this one", None)):
        manager = SessionManager.create(project, sessions)
        manager.append_message(UserMessage(content=text, timestamp=1))
        if name is not None:
            manager.append_session_info(name)
        paths[text] = manager.session_file
        manager.close()
    kept, dropped = paths["keep this one"], paths["drop this one"]
    os.utime(kept, (1_000_000, 1_000_000))  # listed second
    kept_before = kept.read_bytes()
    # A trash of the test's own, first on PATH: no real trash can is touched.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = bin_dir / "calls"
    (bin_dir / "trash").write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec rm -- "$1"\n')
    (bin_dir / "trash").chmod(0o755)
    env = private_env(tmp_path)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    (project / "script.json").write_text('{"responses": [{"text": "hello there"}]}')
    command = ctxmodes_command("chat", "-r", "--model", "scripted:script.json")
    tmux = Tmux(["env", "-C", str(project), *command], env)
    try:
        tmux.wait("first name")
        tmux.key("Down")
        tmux.key("C-r")
        tmux.wait("> first name")
        tmux.key("End")
        tmux.type(" v2")
        tmux.key("Enter")
        tmux.until(lambda s: "first name v2" in s and "ctrl+d delete" in s)
        tmux.key("Up")
        tmux.key("C-d")
        tmux.wait("Delete session?")
        tmux.key("Enter")
        screen = tmux.wait("Session moved to trash")
        assert "drop this one" not in screen.partition("Resume Session")[2], screen
        tmux.key("Escape")
        tmux.wait("CTXMODES-EXIT=0")
    finally:
        tmux.close()
    assert calls.read_text().split() == [str(dropped)]
    assert not dropped.exists()
    after = kept.read_bytes()
    assert after.startswith(kept_before)
    [added] = [orjson.loads(line) for line in after[len(kept_before) :].splitlines()]
    assert (added["type"], added["name"]) == ("session_info", "first name v2")
    assert pi_session_name(kept) == "first name v2"


def test_the_users_commands_carry_the_agents_process_markers(tmp_path):
    """The interactive session marks its process as the print, JSON and RPC modes do, over
    an outer agent's markers, so a ``!`` command (which inherits the agent's environment)
    sees its own."""
    outer = {"AI_AGENT": "outer", "PI_CODING_AGENT": "outer"}
    tmux = Tmux(
        ["bash", "--norc", "--noprofile"], {**private_env(tmp_path), **outer}, columns=100, rows=40
    )
    try:
        start_chat(tmux, tmp_path)
        tmux.type('!printf "agent=%s pi=%s\\n" "$AI_AGENT" "$PI_CODING_AGENT"')
        tmux.key("Enter")
        tmux.wait("agent=ctxmodes pi=true")
    finally:
        tmux.close()


def test_a_first_start_without_credentials_then_with_a_key_as_a_person_meets_them(tmp_path):
    """Nothing configured and no key: the session opens and says how to get a model. With a
    provider's key set, a session made with a script continues on that provider's default
    model, and the screen says the session's own model could not be used."""
    from ctxmodes.providers.catalog import default_models
    from ctxmodes.tui.commands import NO_MODEL_AT_START

    into = f"cd {quote(str(tmp_path))}"
    start = " ".join(quote(part) for part in ctxmodes_command())
    tmux = shell_in_tmux(tmp_path)
    try:
        tmux.type(f"{into} && {start}")
        tmux.key("Enter")
        tmux.wait(NO_MODEL_AT_START[:40])
        tmux.wait("no model")
    finally:
        tmux.close()
    (tmp_path / "script.json").write_text('{"responses": [{"text": "scripted"}]}')
    tmux = shell_in_tmux(tmp_path)
    try:
        made = f"{start} -p --model scripted:script.json hi"
        tmux.type(f"{into} && {made} && GROQ_API_KEY=g {start} -c")
        tmux.key("Enter")
        screen = tmux.wait(f"groq/{default_models()['groq']}")
        assert "last used scripted/scripted, which cannot be used here" in " ".join(screen.split())
    finally:
        tmux.close()


def test_scoped_models_changes_what_ctrl_p_cycles_through(tmp_path):
    (tmp_path / "pi").mkdir()
    loop = {
        "baseUrl": "http://127.0.0.1:9/v1",
        "api": "openai-completions",
        "apiKey": "sk-loop",
        "models": [{"id": "plain"}, {"id": "wide"}, {"id": "deep"}],
    }
    (tmp_path / "pi" / "models.json").write_text(json.dumps({"providers": {"loop": loop}}))
    tmux = shell_in_tmux(tmp_path)
    try:
        command = ctxmodes_command("chat", "--model", "loop/plain", "--models", "plain,wide")
        tmux.type(f"cd {quote(str(tmp_path))} && " + " ".join(quote(part) for part in command))
        tmux.key("Enter")
        tmux.wait("Model scope: plain, wide")
        tmux.type("/scoped-models")
        tmux.key("Enter")
        screen = tmux.wait("Model Configuration")
        assert "\u2713 plain [loop]" in screen, screen
        assert "\u2713 wide [loop]" in screen, screen
        assert "2/3 enabled" in screen, screen
        tmux.key("Down", "Down", "Enter")
        screen = tmux.wait("\u2713 deep [loop]")
        assert "all enabled (unsaved)" in screen, screen
        tmux.key("Enter")  # deep out again: plain, wide
        tmux.wait("2/3 enabled")
        tmux.key("Up")
        tmux.key("M-Up")  # wide before plain

        def wide_first(text: str) -> bool:
            rows = text.rpartition("Model Configuration")[2]
            return 0 <= rows.find("\u2713 wide [loop]") < rows.find("\u2713 plain [loop]")

        tmux.until(wide_first)
        tmux.key("Escape")
        tmux.until(lambda text: "Model Configuration" not in text)
        tmux.key("C-p")
        tmux.wait("Switched to wide")
        tmux.key("C-p")
        screen = tmux.wait("Switched to plain")
        assert "Switched to deep" not in screen, screen
    finally:
        tmux.close()


def test_the_footer_goes_on_below_on_a_narrow_terminal(tmp_path: Path) -> None:
    """At 30 columns the footer's second line does not fit: it goes on between its parts,
    the tokens left last, and no row is wider than the terminal."""
    script = tmp_path / "script.json"
    script.write_text('{"responses": [{"text": "hello there"}]}')
    command = ctxmodes_command("chat", "--mode", "off", "--model", f"scripted:{script}")
    tmux = Tmux(command, private_env(tmp_path), columns=30, rows=20)
    try:
        tmux.wait("111.6k left")
        rows = tmux._tmux("capture-pane", "-p", "-t", "t").splitlines()
    finally:
        tmux.close()
    below = rows[rows.index("\u203a") + 2 :]
    assert below[:2] == ["scripted/scripted • off", "? / 111.6k left"]
    assert not any(row.strip() for row in below[2:]), below
    assert all(len(row) <= 30 for row in rows), rows


def test_narrowing_the_terminal_leaves_no_row_of_the_old_editor_behind(tmp_path: Path) -> None:
    """tmux re-lays its rows when it narrows, as most terminals do: the editor and footer
    drawn at 100 columns take more rows at 60 and at 30, and the redraw starts where they
    now start, so the screen shows the draft once."""
    tmux = shell_in_tmux(tmp_path)
    try:
        start_chat(tmux, tmp_path)
        words = [f"word{number:02d}" for number in range(14)]
        tmux.type(" ".join(words))
        tmux.wait("word13")
        for columns in (60, 30):
            tmux.resize(columns)
            shown = tmux.until(
                lambda text, columns=columns: (
                    "\u203a" in text
                    and "word13" in text
                    and all(len(row) <= columns for row in draft_rows(text))
                )
            )
            visible = tmux.visible()
            assert visible.count("word00") == 1, visible
            assert visible.count("\u203a") == 1, visible  # one editor, no stale top row
            assert " ".join(draft_rows(shown)).split() == words, shown
    finally:
        tmux.close()


def test_a_draft_taller_than_the_editor_says_how_many_rows_are_out_of_view(
    tmp_path: Path,
) -> None:
    """At 24 rows the editor shows 7 (Pi's three tenths); a draft of 13 rows says under it
    how many are above and below the ones shown, as Pi's editor says it in its rules."""
    tmux = shell_in_tmux(tmp_path, rows=24)
    try:
        start_chat(tmux, tmp_path)
        for number in range(1, 13):
            tmux.type(f"line {number:02d}")
            tmux.key("C-j")
        screen = tmux.wait("\u2191 6 more")
        assert "\u2193" not in screen.split("line 12")[1]  # the cursor's row is the last
        tmux.key(*["Up"] * 10)
        screen = tmux.wait("\u2191 2 more  \u2193 4 more")
        shown = [row.strip() for row in screen.splitlines() if row.startswith("  line ")]
        assert shown == [f"line {number:02d}" for number in range(3, 10)], screen
        tmux.key("C-c")  # the draft cleared: nothing is out of view
        tmux.until(lambda text: "\u2191" not in text and "\u2193" not in text)
    finally:
        tmux.close()


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_termination_signal_ends_the_session_and_gives_the_terminal_back(
    tmp_path: Path, name: str
) -> None:
    """``kill`` (or the terminal's window closed) while the model's ``bash`` call runs:
    the session ends as ``/quit`` ends it, as Pi's does: the run aborted and recorded, the
    command stopped with the session's shell, status 0, and the shell's terminal as it was
    (its default action left it without echo or line editing, and the command running)."""
    import signal
    import subprocess

    # Command lines of this test's own, to look for (tests may run side by side).
    command = f"sleep 30.{len(name)}{os.getpid()}"
    script = {"responses": [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}]}
    (tmp_path / f"tool-{name}.json").write_text(json.dumps(script))
    chat = ctxmodes_command("chat", "--model", f"scripted:tool-{name}.json")
    tmux = shell_in_tmux(tmp_path)
    try:
        tmux.type(f"cd {quote(str(tmp_path))} && " + " ".join(quote(part) for part in chat))
        tmux.key("Enter")
        tmux.wait(FOOTER)
        tmux.type("go")
        tmux.key("Enter")
        tmux.wait("Elapsed")
        [pid] = subprocess.run(
            ["pgrep", "-f", f"ctxmodes chat --model scripted:tool-{name}.json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        os.kill(int(pid), getattr(signal, name))
        # Keys typed before it has ended would go to its editor, not to the shell.
        deadline = time.monotonic() + WAIT
        while Path(f"/proc/{pid}").exists():
            assert time.monotonic() < deadline, "the session did not end"
            time.sleep(0.05)
        tmux.type("echo status=$?; stty; echo end-of-check")
        tmux.key("Enter")
        screen = tmux.until(lambda s: re.search(r"^end-of-check$", s, re.MULTILINE) is not None)
    finally:
        tmux.close()
    assert "status=0" in screen, screen
    settings = screen.rpartition("status=0")[2]
    assert "-icanon" not in settings, settings
    assert "-echo" not in settings, settings
    found = subprocess.run(["pgrep", "-xf", command], capture_output=True, check=False)
    assert found.returncode == 1, "the tool's command outlived the session"
    [session] = (tmp_path / "pi" / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    replies = [e["message"] for e in entries if e.get("message", {}).get("role") == "assistant"]
    assert [reply["stopReason"] for reply in replies] == ["toolUse", "aborted"]
