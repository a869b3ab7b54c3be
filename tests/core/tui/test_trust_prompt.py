"""The trust question of ``ctxmodes chat`` in a real terminal (tmux): a project with its own
``.pi`` files or ``.ctxmodes.toml`` is asked about before the session opens; the answer
decides what loads (its resources and its configuration alike) and, unless it was for this
session only, is saved in ``trust.json`` for the next start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.tmux import Tmux, ctxmodes_command, private_env
from support.wire_server import Reply, WireServer, text_stream

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def start_chat(work: Path, project: Path, *flags: str) -> Tmux:
    script = work / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}] * 4}))
    command = ctxmodes_command(
        "chat", "--mode", "off", "--model", f"scripted:{script}", "--cwd", str(project), *flags
    )
    return Tmux(command, private_env(work))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "clone"
    (folder / ".pi" / "prompts").mkdir(parents=True)
    (folder / ".pi" / "prompts" / "fix.md").write_text("Fix issue $1")
    (folder / "AGENTS.md").write_text("rules")
    return folder


def test_trusting_loads_the_project_and_is_remembered(tmp_path: Path, project: Path) -> None:
    tmux = start_chat(tmp_path, project)
    try:
        screen = tmux.wait("Trust project folder?")
        assert str(project) in screen
        assert "Trust parent folder" in screen
        assert "↑↓ navigate  enter select  escape/ctrl+c cancel" in screen
        tmux.key("Enter")  # the first answer: Trust
        screen = tmux.wait("[Prompts]")
        assert "/fix" in screen
        # Answered, the question is cleared, as Pi clears it: the session starts in its place.
        shown = tmux.visible()
        assert shown.startswith("ctxmodes · mode off")
        assert "Trust project folder?" not in shown
        tmux.key("C-c")
        tmux.key("C-c")
        tmux.wait("CTXMODES-EXIT=0")
    finally:
        tmux.close()
    saved = json.loads((tmp_path / "pi" / "trust.json").read_text())
    assert saved == {str(project.resolve()): True}

    again = start_chat(tmp_path, project)
    try:
        screen = again.wait("[Prompts]")
        assert "Trust project folder?" not in screen
    finally:
        again.close()


def test_refusing_for_this_session_loads_nothing_and_saves_nothing(
    tmp_path: Path, project: Path
) -> None:
    tmux = start_chat(tmp_path, project)
    try:
        tmux.wait("Do not trust (this session only)")
        for key in ("Down", "Down", "j", "j", "k", "j"):  # Pi's selectors take j and k too
            tmux.key(key)
        tmux.key("Enter")
        screen = tmux.wait("[Project]")
        assert "[Prompts]" not in screen
        assert "[Context]" in screen  # context files load before trust
    finally:
        tmux.close()
    assert not (tmp_path / "pi" / "trust.json").exists()


@pytest.mark.parametrize("key", ["Escape", "C-c"])
def test_cancelling_the_question_trusts_nothing_for_this_run(
    tmp_path: Path, project: Path, key: str
) -> None:
    tmux = start_chat(tmp_path, project)
    try:
        tmux.wait("Do not trust (this session only)")
        tmux.key(key)
        screen = tmux.wait("[Project]")
        assert "[Prompts]" not in screen
        assert "Trust project folder?" not in tmux.visible()
    finally:
        tmux.close()
    assert not (tmp_path / "pi" / "trust.json").exists()


def test_the_question_takes_the_keys_keybindings_json_gives(tmp_path: Path, project: Path) -> None:
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "keybindings.json").write_text(
        json.dumps({"tui.select.down": "ctrl+n", "tui.select.confirm": "tab"})
    )
    tmux = start_chat(tmp_path, project)
    try:
        screen = tmux.wait("Do not trust (this session only)")
        assert "tab select" in screen
        tmux.key("C-n")
        tmux.key("Tab")
        tmux.wait("[Prompts]")
    finally:
        tmux.close()
    saved = json.loads((tmp_path / "pi" / "trust.json").read_text())
    assert saved == {str(project.parent.resolve()): True}


def test_no_approve_asks_nothing(tmp_path: Path, project: Path) -> None:
    tmux = start_chat(tmp_path, project, "--no-approve")
    try:
        screen = tmux.wait("[Project]")
        assert "Trust project folder?" not in screen
    finally:
        tmux.close()


def provider(base_url: str, extra: str = "") -> str:
    return (
        f'[providers.openai]\napi = "openai-responses"\nbase_url = "{base_url}/v1"\n{extra}'
        'models = [{ id = "gpt-loopback" }]\n'
    )


@pytest.fixture
def endpoints():
    """The user's own endpoint and the one a cloned project points the same provider at,
    both loopback servers that record every request."""
    answers = [Reply(text_stream("openai-responses", "ANSWER-FROM-USER-ENDPOINT"))]
    other = [Reply(text_stream("openai-responses", "ANSWER-FROM-CLONE-ENDPOINT"))]
    with WireServer(answers) as user, WireServer(other) as clone:
        yield user, clone


def start_configured_chat(work: Path, project: Path, user: WireServer, clone: WireServer) -> Tmux:
    """``ctxmodes chat`` with the model the user configured; the project's ``.ctxmodes.toml``
    (and nothing else of its own) redirects that model's provider."""
    (work / "config").mkdir()
    (work / "config" / "config.toml").write_text(
        'model = "openai/gpt-loopback"\nmode = "off"\n'
        + provider(user.base_url, 'api_key_env = "MY_KEY"\n')
    )
    (project / ".ctxmodes.toml").write_text(provider(clone.base_url))
    env = {**private_env(work), "MY_KEY": "sk-user-secret"}
    return Tmux(ctxmodes_command("chat", "--cwd", str(project)), env)


@pytest.mark.parametrize(
    ("downs", "answer", "saved"),
    [
        (0, "ANSWER-FROM-CLONE-ENDPOINT", True),  # Trust
        (3, "ANSWER-FROM-USER-ENDPOINT", False),  # Do not trust
    ],
)
def test_the_question_governs_the_project_configuration(
    tmp_path: Path, endpoints: tuple[WireServer, WireServer], downs: int, answer: str, saved: bool
) -> None:
    user, clone = endpoints
    project = tmp_path / "clone"
    # A resource of the project's own beside its configuration: one question decides both.
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "APPEND_SYSTEM.md").write_text("PROJECT-APPENDED-RULE\n")
    tmux = start_configured_chat(tmp_path, project, user, clone)
    try:
        screen = tmux.wait("Trust project folder?")
        assert ".ctxmodes.toml" in screen
        for _ in range(downs):
            tmux.key("Down")
        tmux.key("Enter")
        screen = tmux.wait("openai/gpt-loopback")
        assert ("[Project]" in screen) is not saved  # the note on what was left out
        tmux.type("hello")
        tmux.key("Enter")
        # One answer (one Enter) let the chat go on: the resources were not asked about again.
        tmux.wait(answer)
    finally:
        tmux.close()
    trusted_requests, untrusted_requests = (clone, user) if saved else (user, clone)
    assert len(trusted_requests.requests) == 1
    assert untrusted_requests.requests == []
    assert (b"PROJECT-APPENDED-RULE" in trusted_requests.requests[0]["body"]) is saved
    if not saved:
        assert user.requests[0]["headers"]["Authorization"] == "Bearer sk-user-secret"
    decision = json.loads((tmp_path / "pi" / "trust.json").read_text())
    assert decision == {str(project.resolve()): saved}


def test_the_question_wraps_between_words(tmp_path: Path, project: Path) -> None:
    """The question is one long sentence: on a terminal narrower than it, each line ends
    between two words, none cut in two and no line starting with a comma."""
    from ctxmodes.resources.trust import trust_prompt_text

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}]}))
    command = ctxmodes_command(
        "chat", "--mode", "off", "--model", f"scripted:{script}", "--cwd", str(project)
    )
    tmux = Tmux(command, private_env(tmp_path), columns=70)
    try:
        screen = tmux.wait("Do not trust (this session only)")
    finally:
        tmux.close()
    question = screen.partition("Trust project folder?")[2].partition("▸ Trust")[0]
    lines = question.splitlines()
    assert all(len(line) <= 70 for line in lines), question
    assert not [line for line in lines if line.lstrip().startswith((",", "."))], question
    words = trust_prompt_text(project).partition("\n\n")[2].split()
    assert question.split()[-len(words) :] == words, question
