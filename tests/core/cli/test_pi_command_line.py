"""Pi's own command line: ``ctxmodes -p PROMPT`` prints only the reply, as ``pi -p`` does,
with what is piped in and ``@FILE`` arguments in its first prompt; a prompt without a
command opens the interactive session on a terminal and is print mode without one. The real
Pi's print mode, against the same loopback model, is the judge of what is sent and printed."""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.cli_process import run_ctxmodes
from support.images import dot_bmp, dot_gif, solid_png
from support.pi_oracle import require_pi
from support.pi_print import API, pi_cli, run_ours, run_pi
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.cli.pi_command_line import PI_ONLY_COMMANDS, meant_command_line
from ctxmodes.tools.image_fit import NOT_CONVERTED, NOT_RESIZED

pytestmark = pytest.mark.slow  # each test runs ctxmodes (and Pi) as processes, end to end

COMMANDS = frozenset({"run", "chat", "session"})


@pytest.mark.parametrize(
    ("argv", "terminal", "meant"),
    [
        (["-p", "hi"], True, ["run", "--print", "hi"]),
        (["hi", "--print", "--model", "x/y"], True, ["run", "--print", "hi", "--model", "x/y"]),
        (["hi", "again"], True, ["chat", "hi", "again"]),
        (["hi"], False, ["run", "--print", "hi"]),
        (["--model", "run", "hi"], False, ["run", "--print", "--model", "run", "hi"]),
        (["-c", "--model", "x/y"], True, ["chat", "-c", "--model", "x/y"]),
        # Chat's options alone stay the interactive session, which then needs a terminal.
        (["-c"], False, ["chat", "-c"]),
        (["-p", "--", "-p", "--help"], True, ["run", "--print", "--", "-p", "--help"]),
        (["-p", "run", "tests"], True, ["run", "--print", "run", "tests"]),
        (["run", "-p", "hi"], True, None),
        (["session", "list"], False, None),
        (["--help"], True, ["--help"]),
        (["-p", "--version"], True, ["--version"]),
        # As Pi: the version or the help, wherever among the options, the version first.
        (["-p", "hi", "-v"], True, ["--version"]),
        (["-p", "hi", "-h", "--model", "x/y"], False, ["--help"]),
        (["--model", "x/y", "hi", "-h"], False, ["--help"]),
        (["sesion", "--help"], True, None),
        (["hi", "-v"], True, ["--version"]),
        (["-h", "-c", "--version"], True, ["--version"]),
        (["run", "--help"], True, None),
        (["-p", "--", "-v"], True, ["run", "--print", "--", "-v"]),
        ([], False, None),
        (["-p", "sesion"], True, ["run", "--print", "sesion"]),
        (["--", "sesion"], True, ["chat", "--", "sesion"]),
        (["sesion list"], True, ["chat", "sesion list"]),
        (["--export", "s.jsonl"], True, ["session", "export", "s.jsonl"]),
        (
            ["--export", "s.jsonl", "o.html"],
            False,
            ["session", "export", "s.jsonl", "-o", "o.html"],
        ),
        (["--list-models"], True, ["models", "--pi-list"]),
        (["--list-models", "gpt 4o"], False, ["models", "--pi-list", "--search", "gpt 4o"]),
        # As in Pi: what follows is the search (a command's name too) unless it is an option
        # or an @FILE; the last --list-models counts; prompts and other options go unused.
        (["--list-models", "run"], True, ["models", "--pi-list", "--search", "run"]),
        (["--list-models", "@notes.txt"], True, ["models", "--pi-list"]),
        (["-p", "hi", "--list-models", "-c"], False, ["models", "--pi-list"]),
        (["--list-models", "a", "--list-models"], True, ["models", "--pi-list"]),
        (
            ["-a", "--list-models", "x", "-na"],
            True,
            ["models", "--pi-list", "-na", "--search", "x"],
        ),
        (["--list-models", ""], True, ["models", "--pi-list"]),
        # The value of an option is not the flag.
        (
            ["-p", "--model", "--list-models", "hi"],
            True,
            ["run", "--print", "--model", "--list-models", "hi"],
        ),
        (["--", "--list-models"], False, ["run", "--print", "--", "--list-models"]),
    ],
)
def test_what_a_pi_style_command_line_means(
    argv: list[str], terminal: bool, meant: list[str] | None
) -> None:
    got = meant_command_line(argv, is_command=COMMANDS.__contains__, terminal=terminal)
    assert got == meant


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        # As Pi: with standard input piped, what it holds is the prompt, in print mode.
        ([], ["run", "--print"]),
        (["-c"], ["run", "--print", "-c"]),
        (["--model", "x/y"], ["run", "--print", "--model", "x/y"]),
        (["hi"], ["run", "--print", "hi"]),
        (["session", "list"], None),
        (["--help"], ["--help"]),
    ],
)
def test_standard_input_piped_in_is_print_mode(argv: list[str], meant: list[str] | None) -> None:
    got = meant_command_line(argv, is_command=COMMANDS.__contains__, terminal=False, piped=True)
    assert got == meant


@pytest.mark.parametrize(("word", "meant"), [("sesion", "session"), ("runn", "run")])
def test_a_one_word_prompt_spelled_like_a_command_is_refused(word: str, meant: str) -> None:
    from ctxmodes.errors import CtxmodesError

    with pytest.raises(CtxmodesError) as refused:
        meant_command_line([word, "list"], is_command=COMMANDS.__contains__, terminal=True)
    assert str(refused.value) == (
        f"unknown command {word!r} (did you mean {meant!r}?); to send it as a prompt, put -- "
        "before it"
    )


@pytest.mark.parametrize("word", sorted(PI_ONLY_COMMANDS))
def test_pi_s_own_commands_are_refused_and_not_sent_as_a_prompt(tmp_path: Path, word: str) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "sent"}]}))
    model = ["--model", f"scripted:{script}"]
    result = run_ctxmodes(tmp_path, word, "npm:left-pad", *model)
    assert (result.returncode, result.stdout) == (1, "")
    [line] = result.stderr.splitlines()
    assert line.startswith(f"ctxmodes: error: `ctxmodes {word}` is Pi's ")
    assert line.endswith(f"to send {word!r} as a prompt, put -- before it")
    assert not list(tmp_path.rglob("*.jsonl"))
    # As in Pi, only the first argument is the command; after --, or later, it is a prompt.
    for argv in (["-p", "--", word], ["-p", word]):
        sent = run_ctxmodes(tmp_path, *model, *argv)
        assert (sent.returncode, sent.stdout) == (0, "sent\n"), sent.stderr


@pytest.mark.pi
def test_the_refused_commands_are_those_pi_runs_as_its_own(tmp_path: Path) -> None:
    # Pi shows a command's usage for `pi WORD --help`, and its own for a prompt's word.
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    for word in [*PI_ONLY_COMMANDS, "chat"]:
        shown = pi_cli(tmp_path, agent, [word, "--help"])
        assert shown.returncode == 0, shown.stderr
        named = "remove" if word == "uninstall" else word  # Pi's alias, shown as remove
        assert shown.stdout.startswith(f"Usage:\n  pi {named}") == (word != "chat"), word


def test_dash_v_is_the_version_as_in_pi_wherever_it_is(tmp_path: Path) -> None:
    long = run_ctxmodes(tmp_path, "--version")
    assert long.stdout.startswith("ctxmodes ")
    for argv in (["-v"], ["hello", "-v"], ["--model", "x/y", "hello", "--help", "-v"]):
        short = run_ctxmodes(tmp_path, *argv)
        assert (short.returncode, short.stdout, short.stderr) == (0, long.stdout, ""), argv
    helped = run_ctxmodes(tmp_path, "-p", "hello", "-h")
    assert (helped.returncode, helped.stdout) == (0, run_ctxmodes(tmp_path, "--help").stdout)


def _files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes("\ufeffline one\nline two\n".encode())
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")


def _user_messages(server: WireServer) -> list[list[Any]]:
    bodies = [json.loads(request["body"]) for request in server.requests]
    return [[m for m in body["messages"] if m["role"] == "user"] for body in bodies]


@pytest.mark.pi
def test_print_mode_sends_and_prints_what_pi_does(tmp_path: Path) -> None:
    """Among the files, an empty one, a FIFO and ``/dev/zero``: each of size 0, so Pi
    passes over them unread, and so does ctxmodes, where it waited on the FIFO for ever and
    filled memory from the device."""
    _files(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    argv = ["-p", "--model", "loop/m", "@notes.txt", "@empty.txt", "@pipe", "@/dev/zero"]
    argv += ["summarize", "@latin.txt", "and again"]
    stdin = "  piped text\n\n"
    answers = ["First answer.", "Line one of two.\nLine two."]
    runs = {}
    for name, run in (("pi", run_pi), ("ctxmodes", run_ours)):
        with WireServer([Reply(text_stream(API, text)) for text in answers]) as server:
            runs[name] = (run(tmp_path, server.base_url, argv, stdin), _user_messages(server))
    (pi, pi_sent), (ours, our_sent) = runs["pi"], runs["ctxmodes"]
    assert pi.returncode == 0, pi.stderr
    assert ours.returncode == 0, ours.stderr
    assert our_sent == pi_sent
    first = pi_sent[-1][0]["content"][0]["text"]
    assert first.startswith(f'piped text<file name="{tmp_path / "notes.txt"}">\nline one\n')
    assert ours.stdout == pi.stdout == "Line one of two.\nLine two.\n"


@pytest.mark.pi
@pytest.mark.parametrize("argv", [["--model", "loop/m"], ["--model", "loop/m", "-c"]])
def test_what_is_piped_in_alone_is_the_prompt_as_in_pi(tmp_path: Path, argv: list[str]) -> None:
    """``echo question | pi --model M``: no ``-p`` and no prompt argument, yet print mode,
    the piped text the prompt (``-c``: in the last session, none here)."""
    runs = {}
    for name, run in (("pi", run_pi), ("ctxmodes", run_ours)):
        with WireServer([Reply(text_stream(API, "The answer."))]) as server:
            runs[name] = (
                run(tmp_path, server.base_url, argv, "what is piped\n"),
                _user_messages(server),
            )
    (pi, pi_sent), (ours, our_sent) = runs["pi"], runs["ctxmodes"]
    assert (ours.returncode, ours.stdout) == (pi.returncode, pi.stdout) == (0, "The answer.\n")
    assert our_sent == pi_sent
    assert pi_sent[-1][-1]["content"][0]["text"] == "what is piped"


@pytest.mark.pi
def test_a_failed_reply_in_print_mode_is_one_line_and_status_1_as_in_pi(tmp_path: Path) -> None:
    argv = ["-p", "--model", "loop/m", "hi"]
    refusal = {"error": {"message": "bad request: no", "type": "invalid_request_error"}}
    results = []
    for run in (run_pi, run_ours):
        with WireServer([Reply([json.dumps(refusal).encode()], status=400)]) as server:
            results.append(run(tmp_path, server.base_url, argv, ""))
    pi, ours = results
    assert (pi.returncode, pi.stdout) == (1, "")
    assert (ours.returncode, ours.stdout) == (1, "")
    assert ours.stderr.count("\n") == 1
    assert "bad request: no" in ours.stderr
    assert "bad request: no" in pi.stderr


def test_a_prompt_without_a_terminal_is_print_mode(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "one"}, {"text": "two"}]}))
    result = run_ctxmodes(tmp_path, "--model", f"scripted:{script}", "hi", "again")
    assert (result.returncode, result.stdout) == (0, "two\n"), result.stderr
    [session] = (tmp_path / "agent").rglob("*.jsonl")
    sent = [
        entry["message"]["content"][0]["text"]
        for entry in map(json.loads, session.read_text().splitlines())
        if entry.get("message", {}).get("role") == "user"
    ]
    assert sent == ["hi", "again"]


def _image_files(tmp_path: Path) -> None:
    (tmp_path / "small.png").write_bytes(solid_png(3, 2, (200, 30, 30)))
    (tmp_path / "notes.txt").write_text("line one\n")
    (tmp_path / "dot.gif").write_bytes(dot_gif())


def _pairs(line: str) -> Any:
    """A session line with every object as its list of key-value pairs: equal only when
    the keys come in the same order too."""
    return json.loads(line, object_pairs_hook=list)


def _user_lines(agent: Path) -> list[str]:
    [session] = agent.rglob("*.jsonl")
    return [
        line
        for line in session.read_text().splitlines()
        if json.loads(line).get("message", {}).get("role") == "user"
    ]


@pytest.mark.pi
@pytest.mark.parametrize("model_input", [None, ["text", "image"]])
def test_print_mode_attaches_images_as_pi_does(
    tmp_path: Path, model_input: list[str] | None
) -> None:
    """``@FILE`` images, PNG and GIF among a text file: the user message the model receives
    (its images, or Pi's placeholder for a model without image input) is Pi's, and so is
    the session line, byte for byte but for its time."""
    _image_files(tmp_path)
    argv = ["-p", "--model", "loop/m", "@small.png", "@notes.txt", "@dot.gif", "look"]
    runs = {}
    for name, run in (("pi", run_pi), ("ctxmodes", run_ours)):
        with WireServer([Reply(text_stream(API, "seen"))]) as server:
            done = run(tmp_path, server.base_url, argv, "piped\n", model_input=model_input)
            runs[name] = (done, _user_messages(server))
    (pi, pi_sent), (ours, our_sent) = runs["pi"], runs["ctxmodes"]
    assert pi.returncode == 0, pi.stderr
    assert ours.returncode == 0, ours.stderr
    assert our_sent == pi_sent
    [[sent]] = pi_sent
    if model_input is None:
        assert sent["content"][-1] == {
            "type": "text",
            "text": "(image omitted: model does not support images)",
        }
    else:
        assert [part["type"] for part in sent["content"]] == ["text", "image_url", "image_url"]
    [pi_line], [our_line] = _user_lines(tmp_path / "pi-agent"), _user_lines(tmp_path / "agent")
    pi_entry, our_entry = _pairs(pi_line), _pairs(our_line)
    timeless = {"id", "parentId", "timestamp"}
    pi_message, our_message = dict(pi_entry)["message"], dict(our_entry)["message"]
    assert [pair for pair in our_message if pair[0] != "timestamp"] == [
        pair for pair in pi_message if pair[0] != "timestamp"
    ]
    assert [key for key, _ in our_entry if key not in timeless] == [
        key for key, _ in pi_entry if key not in timeless
    ]
    assert json.loads(our_line)["message"]["content"][1:] == [
        {"type": "image", "mimeType": "image/png", "data": _base64(tmp_path / "small.png")},
        {"type": "image", "mimeType": "image/gif", "data": _base64(tmp_path / "dot.gif")},
    ]


def _base64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def test_an_image_file_is_attached_to_the_first_prompt(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "seen"}, {"text": "again"}]}))
    _image_files(tmp_path)
    argv = ["-p", "--model", f"scripted:{script}", "@small.png", "@dot.gif", "look", "more"]
    result = run_ctxmodes(tmp_path, *argv)
    assert (result.returncode, result.stdout) == (0, "again\n"), result.stderr
    first, second = (json.loads(line)["message"] for line in _user_lines(tmp_path / "agent"))
    blocks = f'<file name="{tmp_path / "small.png"}"></file>\n'
    blocks += f'<file name="{tmp_path / "dot.gif"}"></file>\n'
    assert first["content"] == [
        {"type": "text", "text": blocks + "look"},
        {"type": "image", "mimeType": "image/png", "data": _base64(tmp_path / "small.png")},
        {"type": "image", "mimeType": "image/gif", "data": _base64(tmp_path / "dot.gif")},
    ]
    assert second["content"] == [{"type": "text", "text": "more"}]


@pytest.mark.pi
def test_pi_opens_a_session_whose_prompt_has_images(tmp_path: Path) -> None:
    pi = require_pi()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "seen"}]}))
    _image_files(tmp_path)
    argv = ["-p", "--model", f"scripted:{script}", "@small.png", "@dot.gif", "look"]
    result = run_ctxmodes(tmp_path, *argv)
    assert result.returncode == 0, result.stderr
    [session] = (tmp_path / "agent").rglob("*.jsonl")
    [line] = _user_lines(tmp_path / "agent")
    [opened] = pi.open_many([{"file": str(session), "at": []}])
    assert "openError" not in opened
    [pi_view] = [m for m in opened["context"]["messages"] if m["role"] == "user"]
    assert pi_view == json.loads(line)["message"]
    assert [block["type"] for block in pi_view["content"]] == ["text", "image", "image"]


def _broken_png() -> bytes:
    return solid_png(200, 200, (0, 0, 0))[:80]


def _broken_bmp() -> bytes:
    return dot_bmp()[:40]


@pytest.mark.parametrize(
    ("name", "content", "note"),
    [("broken.png", _broken_png, NOT_RESIZED), ("broken.bmp", _broken_bmp, NOT_CONVERTED)],
    ids=["png", "bmp"],
)
def test_an_image_that_cannot_be_fitted_is_not_attached_and_the_prompt_says_why(
    tmp_path: Path, name: str, content: Callable[[], bytes], note: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "seen"}]}))
    (tmp_path / name).write_bytes(content())
    result = run_ctxmodes(tmp_path, "-p", "--model", f"scripted:{script}", f"@{name}", "look")
    assert (result.returncode, result.stdout) == (0, "seen\n"), result.stderr
    [line] = _user_lines(tmp_path / "agent")
    assert json.loads(line)["message"]["content"] == [
        {"type": "text", "text": f'<file name="{tmp_path / name}">{note}</file>\nlook'}
    ]


@pytest.mark.parametrize(
    ("argv", "stdin", "error"),
    [
        (["-p", "@missing.txt", "hi"], "", "ctxmodes: error: file not found: {tmp}/missing.txt"),
        (["-p"], "  \n", "ctxmodes: error: nothing to send: give a prompt, an @FILE or text on "
         "standard input"),
        (["run"], "", "ctxmodes: error: run needs a PROMPT"),
    ],
)  # fmt: skip
def test_nothing_to_send_is_one_line_and_leaves_no_session(
    tmp_path: Path, argv: list[str], stdin: str, error: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "never"}]}))
    result = run_ctxmodes(tmp_path, *argv, "--model", f"scripted:{script}", stdin=stdin)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [error.format(tmp=tmp_path)]
    assert not list((tmp_path / "agent").rglob("*.jsonl"))


def test_no_session_writes_nothing_and_name_names_the_session(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "one"}, {"text": "two"}]}))
    model = f"scripted:{script}"
    result = run_ctxmodes(tmp_path, "-p", "--no-session", "--model", model, "hi")
    assert (result.returncode, result.stdout) == (0, "one\n"), result.stderr
    assert not list((tmp_path / "agent").rglob("*.jsonl"))
    result = run_ctxmodes(tmp_path, "-n", "  release prep ", "--model", model, "hi")
    assert (result.returncode, result.stdout) == (0, "one\n"), result.stderr
    [session] = (tmp_path / "agent").rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    names = [entry["name"] for entry in entries if entry["type"] == "session_info"]
    assert names == ["release prep"]
    listed = run_ctxmodes(tmp_path, "session", "list")
    assert "release prep" in listed.stdout


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["-p", "--name", " ", "hi"], "ctxmodes: error: --name requires a non-empty value"),
        (["-c", "run", "--no-session", "hi"],
         "ctxmodes: error: --no-session keeps no session: leave out --session and -c"),
    ],
)  # fmt: skip
def test_a_session_flag_that_cannot_hold_is_one_line(
    tmp_path: Path, argv: list[str], error: str
) -> None:
    result = run_ctxmodes(tmp_path, *argv, "--model", "scripted:none.json")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [error]


@pytest.mark.pi
def test_a_session_id_names_one_session_that_pi_and_ctxmodes_both_continue(
    tmp_path: Path,
) -> None:
    """``--session-id``: the first run creates the session of that id (saying so), the real
    Pi's print mode finds it by the id and continues it, and so does ctxmodes after it."""
    agent = tmp_path / "pi-agent"
    argv = ["-p", "--model", "loop/m", "--session-id", "job-7"]
    with WireServer([Reply(text_stream(API, t)) for t in ("one", "two", "three")]) as server:
        shared = {"PI_CODING_AGENT_DIR": str(agent)}
        first = run_pi(tmp_path, server.base_url, ["--version"], "")  # writes models.json
        assert first.returncode == 0
        (tmp_path / "config").mkdir(exist_ok=True)
        (tmp_path / "config" / "config.toml").write_text(
            f'[providers.loop]\napi = "{API}"\nbase_url = "{server.base_url}/v1"\n'
            'api_key = "sk-loop"\nmodels = [{ id = "m" }]\n'
        )
        created = run_ctxmodes(tmp_path, *argv, "hi", env=shared)
        continued_by_pi = run_pi(tmp_path, server.base_url, [*argv, "again"], "")
        continued = run_ctxmodes(tmp_path, *argv, "once more", env=shared)
    assert created.returncode == 0, created.stderr
    assert "creating a new session with that id" in created.stderr
    assert continued_by_pi.returncode == 0, continued_by_pi.stderr
    assert "No project session found" not in continued_by_pi.stderr
    assert (continued.returncode, continued.stdout, continued.stderr) == (0, "three\n", "")
    [session] = agent.rglob("*.jsonl")
    assert session.name.endswith("_job-7.jsonl")
    messages = [
        entry["message"] for entry in map(json.loads, session.read_text().splitlines())
        if entry["type"] == "message"
    ]  # fmt: skip
    users = [message["content"][0]["text"] for message in messages if message["role"] == "user"]
    assert users == ["hi", "again", "once more"]
    # Each answer written with its keys in the order Pi's transport adds them, by either.
    answers = [message for message in messages if message["role"] == "assistant"]
    assert "responseId" in answers[1]
    assert [list(answer) for answer in answers] == [list(answers[1])] * 3


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--session-id", "no spaces"], "Session id must be non-empty"),
        (["--session", "x.jsonl", "--session-id", "a"],
         "--session-id cannot be combined with --session"),
    ],
)  # fmt: skip
def test_a_session_id_pi_would_refuse_is_one_line(
    tmp_path: Path, flags: list[str], error: str
) -> None:
    result = run_ctxmodes(tmp_path, "-p", *flags, "--model", "scripted:none.json", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"ctxmodes: error: {error}")


def test_pi_s_verbose_and_offline_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--offline`` asks for nothing ctxmodes does; ``--verbose`` brings the start-up header
    back over Pi's ``quietStartup``."""
    from ctxmodes.cli import build_parser
    from ctxmodes.cli.options import agent_settings, run_trust

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "one"}]}))
    result = run_ctxmodes(
        tmp_path, "-p", "--offline", "--verbose", "--model", f"scripted:{script}", "hi"
    )
    assert (result.returncode, result.stdout) == (0, "one\n"), result.stderr
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"quietStartup": True}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    argv = ["chat", "--cwd", str(tmp_path), "--model", f"scripted:{script}"]
    parser = build_parser(argv=argv)
    for flags, quiet in (([], True), (["--verbose"], False)):
        args = parser.parse_args([*argv, *flags])
        assert agent_settings(args, run_trust(args))[1].terminal.quiet_startup is quiet


def test_pi_s_flags_for_what_ctxmodes_has_none_of_change_nothing(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "one"}]}))
    flags = ["--no-extensions", "-ne", "--no-themes", "--tui-mode", "regular"]
    result = run_ctxmodes(tmp_path, "-p", *flags, "--model", f"scripted:{script}", "hi")
    assert (result.returncode, result.stdout) == (0, "one\n"), result.stderr


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["-e", "./plan.ts"], "-e/--extension loads a Pi extension (TypeScript)"),
        (["--extension", "./plan.ts"], "-e/--extension loads a Pi extension (TypeScript)"),
        (["--theme", "./dark.json"], "--theme loads a Pi theme"),
        (["--use-theme", "dark"], "--use-theme picks a Pi theme"),
        (["--tui-mode", "fullscreen"], "--tui-mode: ctxmodes' terminal has Pi's regular mode"),
    ],
)
def test_pi_s_flags_for_what_ctxmodes_does_not_do_are_one_line(
    tmp_path: Path, flags: list[str], said: str
) -> None:
    # The flag's value is not taken for the prompt, on the bare command line or on `run`.
    for command in ([], ["run", "-p"]):
        result = run_ctxmodes(tmp_path, *command, *flags, "--model", "scripted:none.json", "hi")
        assert result.returncode == 1
        [line] = result.stderr.splitlines()
        assert line.startswith(f"ctxmodes: error: {said}")


def test_pi_s_export_writes_the_session_s_page(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "exported reply"}]}))
    made = run_ctxmodes(tmp_path, "-p", "--model", f"scripted:{script}", "hi")
    assert made.returncode == 0, made.stderr
    [session] = (tmp_path / "agent").rglob("*.jsonl")
    page = tmp_path / "page.html"
    result = run_ctxmodes(tmp_path, "--export", str(session), str(page))
    assert result.returncode == 0, result.stderr
    assert "exported reply" in page.read_text()
    missing = run_ctxmodes(tmp_path, "--export")
    assert missing.stderr.splitlines() == [
        "ctxmodes: error: --export needs the session file to export"
    ]


def test_a_reply_that_would_steer_a_terminal_is_shown_escaped_and_piped_as_it_is() -> None:
    """A hostile model's escape sequences (here: set the window title, clear the screen)
    reach a program reading the pipe as Pi writes them, and a terminal only as text."""
    import io
    from types import SimpleNamespace

    from ctxmodes.cli.run_cmd import print_last_reply
    from ctxmodes.session.models import AssistantMessage, TextContent

    text = "done\x1b]0;owned\x07\x1b[2J\rover"
    reply = AssistantMessage.model_validate(
        {
            "role": "assistant",
            "content": [TextContent(text=text)],
            "api": "scripted",
            "provider": "scripted",
            "model": "m",
            "usage": {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 1,
        }
    )
    session = SimpleNamespace(messages=[reply])

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    piped, shown = io.StringIO(), Terminal()
    print_last_reply(session, piped)
    print_last_reply(session, shown)
    assert piped.getvalue() == text + "\n"
    assert shown.getvalue() == "done\\u001b]0;owned\\u0007\\u001b[2J\\u000dover\n"


def _fitting_files(tmp_path: Path) -> list[str]:
    """Images that need each of Pi's steps, and the ``@FILE`` arguments naming them."""
    flat = Image.new("RGB", (3000, 1200), (30, 140, 90))
    flat.save(tmp_path / "wide.png")
    Image.new("RGB", (1200, 2600), (200, 200, 20)).save(tmp_path / "tall.bmp")
    exif = Image.Exif()
    exif[0x0112] = 6  # stored 1500x2100, upright 2100x1500
    for turned in ("turned.jpg", "turned.webp"):
        Image.new("RGB", (1500, 2100), (5, 5, 5)).save(tmp_path / turned, exif=exif.tobytes())
    # Within 2000 pixels but over 4.5 MiB as PNG: Pi sends it as JPEG at its own size.
    noisy = Image.frombytes("RGB", (1900, 1000), os.urandom(1900 * 1000 * 3))
    noisy.save(tmp_path / "noisy.png", compress_level=1)
    (tmp_path / "small.png").write_bytes(solid_png(3, 2, (200, 30, 30)))
    (tmp_path / "broken.png").write_bytes(_broken_png())
    names = ["wide.png", "tall.bmp", "turned.jpg", "turned.webp", "noisy.png", "small.png"]
    names.append("broken.png")
    return [f"@{name}" for name in names]


def _decoded_parts(message: dict[str, Any]) -> list[Any]:
    """A user message on the wire with each image as its type and decoded size."""
    parts: list[Any] = []
    for part in message["content"]:
        if part["type"] != "image_url":
            parts.append(part)
            continue
        header, data = part["image_url"]["url"].split(",", 1)
        with Image.open(io.BytesIO(base64.b64decode(data))) as image:
            parts.append((header, image.size, image.format))
    return parts


@pytest.mark.pi
@pytest.mark.parametrize("auto_resize", [True, False], ids=["resized", "auto-resize-off"])
def test_print_mode_fits_images_as_pi_does(tmp_path: Path, auto_resize: bool) -> None:
    """``-p @FILE...`` with images to shrink, convert, turn, re-encode and leave out: the
    user message's text (Pi's notes in each block) is Pi's, and so is each image's type and
    decoded size (the encoded bytes are Pillow's, not Photon's). Pi's ``images.autoResize``
    off, images are only converted."""
    argv = ["-p", "--model", "loop/m", *_fitting_files(tmp_path), "look"]
    if not auto_resize:
        argv.remove("@noisy.png")  # over the limit, it would be sent whole: slow, and no news
        for agent in ("pi-agent", "agent"):
            (tmp_path / agent).mkdir()
            (tmp_path / agent / "settings.json").write_text('{"images": {"autoResize": false}}')
    takes = ["text", "image"]
    runs = {}
    for name, run in (("pi", run_pi), ("ctxmodes", run_ours)):
        with WireServer([Reply(text_stream(API, "seen"))]) as server:
            done = run(tmp_path, server.base_url, argv, "", model_input=takes)
            runs[name] = (done, _user_messages(server))
    (pi, [[pi_sent]]), (ours, [[our_sent]]) = runs["pi"], runs["ctxmodes"]
    assert pi.returncode == 0, pi.stderr
    assert ours.returncode == 0, ours.stderr
    assert _decoded_parts(our_sent) == _decoded_parts(pi_sent)
    text = pi_sent["content"][0]["text"]
    broken = f'<file name="{tmp_path / "broken.png"}">'
    if auto_resize:
        assert f"{broken}{NOT_RESIZED}</file>" in text
        assert "[Image: original 3000x1200, displayed at 2000x800." in text
        assert ("data:image/jpeg;base64", (1900, 1000), "JPEG") in _decoded_parts(pi_sent)
    else:
        # Not decoded, so not found broken: attached as it is.
        assert f"{broken}</file>" in text
        assert ("data:image/png;base64", (3000, 1200), "PNG") in _decoded_parts(pi_sent)
