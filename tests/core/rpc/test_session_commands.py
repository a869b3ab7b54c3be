"""Pi's RPC mode, the session file: ``ctxmodes --mode rpc`` and the real ``pi --mode rpc``
get the same commands on the same session file (each its own copy) or the same loopback
model, and answer alike: entries and tree as Pi's JSON, forks and clones written as Pi
writes them, switching, naming, exporting and the last reply's text."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.long_sessions import write_chain
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.rpc import session_commands
from ctxmodes.rpc.framing import OutputLines
from ctxmodes.rpc.protocol import RpcCommandError, RpcContext
from ctxmodes.rpc.session_tree import tree_json
from ctxmodes.sdk.model_cycling import model_cycler
from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.testing.clock import SimulatedClock

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
Script = Callable[[RpcProcess, Path], Any]
#: ctxmodes records the context-management mode of a session in a custom entry of its own,
#: ahead of its first records; Pi has no such entry.
MODE_RECORD = "ctxmodes-mode"


def _both(
    tmp_path: Path,
    script: Script,
    *,
    replies: tuple[Reply, ...] = (),
    argv: Callable[[Path], list[str]] = lambda where: [],
) -> tuple[Any, Any]:
    """What ``script(process, where)`` found with Pi, then with ctxmodes, each started in a
    directory ``where`` of its own with ``argv(where)``."""
    found = []
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        with (
            WireServer(list(replies)) as server,
            start(where, server.base_url, argv(where)) as process,
        ):
            found.append(script(process, where))
            assert process.close() == 0, process.stderr()
    return found[0], found[1]


def _text(body: str) -> Reply:
    return Reply(text_stream(API, body))


def _ordered(value: Any) -> str:
    """``value`` as JSON text, keys in their order: equal only with the same key order."""
    return json.dumps(value)


def _user(text: str, timestamp: int) -> JsonObject:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def _assistant(text: str, timestamp: int) -> JsonObject:
    usage = {"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 7}
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": API,
        "provider": "loop",
        "model": "m",
        "usage": {**usage, "cost": cost},
        "stopReason": "stop",
        "timestamp": timestamp,
    }


def _branched_session(path: Path, project: Path, *, chain: int = 0) -> None:
    """A session file of ``project`` with what a tree can hold: two branches from one
    prompt, labels (one cleared), a branch summary, a compaction, a name, a prompt that is
    only an image; then ``chain`` more prompts and replies on the active branch."""
    clock = SimulatedClock(step_ms=1000)
    manager = SessionManager.create(project, path.parent, identity=clock.identity())
    manager.append_model_change("loop", "m")
    manager.append_thinking_level_change("off")
    first = manager.append_message(_user("first question", 1))
    manager.append_message(_assistant("first answer", 2))
    abandoned = manager.append_message(_user("the branch left", 3))
    manager.append_message(_assistant("left answer", 4))
    manager.append_label(first, "start")
    manager.append_label(abandoned, "old")
    manager.append_label(abandoned, None)
    manager.branch_with_summary(first, "what the other branch did")
    kept = manager.append_message(_user("second question", 5))
    manager.append_message(_assistant("second answer", 6))
    manager.append_session_info("a named session")
    image = {"type": "image", "data": "R0lGODlhAQABAAAAACw=", "mimeType": "image/gif"}
    manager.append_message({"role": "user", "content": [image], "timestamp": 7})
    manager.append_message(_assistant("an image", 8))
    manager.append_compaction("the summary so far", kept, 1234)
    manager.append_label(kept, "kept")
    for turn in range(chain):
        manager.append_message(_user(f"more {turn}", 10 + 2 * turn))
        manager.append_message(_assistant(f"reply {turn}", 11 + 2 * turn))
    created = manager.session_file
    manager.close()
    assert created is not None
    created.rename(path)


def _resuming(source: Path) -> Callable[[Path], list[str]]:
    """Arguments that start a program on its own copy of ``source``."""

    def argv(where: Path) -> list[str]:
        copy = where / "session.jsonl"
        shutil.copy(source, copy)
        return ["--session", str(copy)]

    return argv


@pytest.mark.pi
def test_entries_and_tree_are_pis_for_the_same_session_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    source = tmp_path / "source.jsonl"
    _branched_session(source, project)
    ids = [json.loads(line)["id"] for line in source.read_text().splitlines()[1:]]

    def script(process: RpcProcess, where: Path) -> list[JsonObject]:
        requests = [
            {"type": "get_entries"},
            {"type": "get_entries", "since": ids[4]},
            {"type": "get_entries", "since": ids[-1]},
            {"type": "get_tree"},
            {"type": "get_fork_messages"},
            {"type": "get_last_assistant_text"},
            # Pi quotes the cursor as JavaScript writes it.
            {"type": "get_entries", "since": "nothing-like-it"},
            {"type": "get_entries", "since": None},
            {"type": "get_entries", "since": 5.0},
            {"type": "get_entries", "since": [1, None, "a"]},
            {"type": "get_entries", "since": {"id": ids[0]}},
        ]
        return [process.request(request) for request in requests]

    theirs, ours = _both(tmp_path, script, argv=_resuming(source))
    assert theirs[0]["data"]["leafId"] == ids[-1]
    assert [entry["id"] for entry in theirs[0]["data"]["entries"]] == ids
    assert theirs[3]["data"]["tree"][0]["children"][0]["children"][0]["label"] == "start"
    assert theirs[6]["error"] == "Entry not found: nothing-like-it"
    for mine, pis in zip(ours, theirs, strict=True):
        assert _ordered(mine) == _ordered(pis)


@pytest.mark.pi
def test_a_long_session_is_one_deep_tree_as_pis(tmp_path: Path) -> None:
    # Each entry nests its children two JSON levels deeper: some 640 levels here, past
    # orjson's limit (255), within what the test's own JSON reader parses.
    project = tmp_path / "project"
    project.mkdir()
    source = tmp_path / "source.jsonl"
    _branched_session(source, project, chain=150)

    def script(process: RpcProcess, where: Path) -> JsonObject:
        return process.request({"type": "get_tree"})

    theirs, ours = _both(tmp_path, script, argv=_resuming(source))
    assert theirs["success"] is True
    assert _ordered(ours) == _ordered(theirs)


def test_a_tree_deeper_than_any_encoder_recursion_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    write_chain(path, 20_000)
    with SessionManager.open(path, read_only=True) as manager:
        entries = manager.get_entries_json()
        written = tree_json(manager.get_tree(), entries)
    # A chain: each node the only child of the one before.
    opened = b"".join(b'{"entry":' + codec.dumps(entry) + b',"children":[' for entry in entries)
    assert written == b"[" + opened + b"]}" * len(entries) + b"]"


def _prompted(process: RpcProcess, text: str) -> None:
    process.send({"type": "prompt", "message": text})
    process.wait_for_event("agent_settled")


def _pis_session(tmp_path: Path, prompts: list[str]) -> Path:
    """A session file of ``tmp_path/project`` that the real Pi wrote, answering each prompt
    with ``answer to <prompt>``."""
    project = tmp_path / "project"
    project.mkdir()
    replies = [_text(f"answer to {prompt}") for prompt in prompts]
    with WireServer(replies) as server, pi_rpc(project, server.base_url) as process:
        for prompt in prompts:
            _prompted(process, prompt)
        assert process.close() == 0
    [made] = (project / "pi-agent" / "sessions").rglob("*.jsonl")
    return made


def _lines(path: Path) -> list[JsonObject]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _new_file(where: Path, known: set[Path]) -> Path:
    """The one session file in ``where`` not in ``known`` (which it joins)."""
    [made] = set(where.glob("*.jsonl")) - known
    known.add(made)
    return made


@pytest.mark.pi
def test_forks_and_clones_are_written_as_pis(tmp_path: Path) -> None:
    source = _pis_session(tmp_path, ["q1", "q2"])
    messages = [entry for entry in _lines(source)[1:] if entry["type"] == "message"]
    first_reply, second_prompt = (entry["id"] for entry in messages[1:3])

    def script(process: RpcProcess, where: Path) -> JsonObject:
        copy = where / "session.jsonl"
        known = {copy}
        found: JsonObject = {
            "fork messages": process.request({"type": "get_fork_messages"}),
            "refused": [
                process.request({"type": "fork", "entryId": entry_id})
                for entry_id in ("nothing-like-it", first_reply, 5)
            ],
            "fork": process.request({"type": "fork", "entryId": second_prompt}),
        }
        found["fork file"] = _new_file(where, known)
        found["fork entries"] = process.request({"type": "get_entries"})
        found["clone"] = process.request({"type": "clone"})
        found["clone file"] = _new_file(where, known)
        found["clone entries"] = process.request({"type": "get_entries"})
        return found

    theirs, ours = _both(tmp_path, script, argv=_resuming(source))
    assert theirs["fork"]["data"] == {"text": "q2", "cancelled": False}
    assert theirs["refused"][0]["error"] == "Invalid entry ID for forking"
    for key in ("fork messages", "refused", "fork", "clone", "fork entries", "clone entries"):
        assert _ordered(ours[key]) == _ordered(theirs[key]), key
    copied = source.read_text().splitlines()[1:]
    for found in (theirs, ours):
        fork, clone = found["fork file"], found["clone file"]
        headers = {"fork": _lines(fork)[0], "clone": _lines(clone)[0]}
        assert headers["fork"]["parentSession"] == str(fork.parent / "session.jsonl")
        assert headers["clone"]["parentSession"] == str(fork)
        # Before the second prompt: the first exchange and the records before it.
        cut = [json.loads(line)["id"] for line in copied].index(second_prompt)
        assert fork.read_text().splitlines()[1:] == copied[:cut]
        assert clone.read_text().splitlines()[1:] == fork.read_text().splitlines()[1:]
    for kind in ("fork file", "clone file"):
        assert _lines(ours[kind])[0].keys() == _lines(theirs[kind])[0].keys()


def _shape(entry: JsonObject) -> tuple[Any, ...]:
    """An entry without what a new one gets afresh (id, parent, time): its type and what it
    records."""
    message = entry.get("message", {})
    content = message.get("content") or [{}]
    return (
        entry["type"],
        entry.get("provider"),
        entry.get("modelId"),
        entry.get("thinkingLevel"),
        message.get("role"),
        content[0].get("text"),
    )


def _shapes(entries: list[JsonObject] | JsonObject) -> list[tuple[Any, ...]]:
    """The shapes of ``entries`` (or of a ``get_entries`` response's), ctxmodes' mode
    record left out."""
    if isinstance(entries, dict):
        entries = entries["data"]["entries"]
    return [_shape(entry) for entry in entries if entry.get("customType") != MODE_RECORD]


@pytest.mark.pi
def test_a_fork_before_the_first_prompt_starts_over_as_pis(tmp_path: Path) -> None:
    source = _pis_session(tmp_path, ["q1"])
    first_prompt = next(entry["id"] for entry in _lines(source)[1:] if entry["type"] == "message")

    def script(process: RpcProcess, where: Path) -> JsonObject:
        fork = process.request({"type": "fork", "entryId": first_prompt})
        entries = process.request({"type": "get_entries"})["data"]["entries"]
        _prompted(process, "q2")
        [made] = set(where.glob("*.jsonl")) - {where / "session.jsonl"}
        return {"fork": fork, "entries": entries, "file": _lines(made)}

    theirs, ours = _both(tmp_path, script, replies=(_text("again"),), argv=_resuming(source))
    assert _ordered(ours["fork"]) == _ordered(theirs["fork"])
    copied = _lines(source)[1:3]  # the model and level Pi recorded before the first prompt
    # A session without messages starts as a new one: the model and level recorded again.
    started = [("model_change", "loop", "m", None, None, None)]
    started.append(("thinking_level_change", None, None, "off", None, None))
    assert [_shape(entry) for entry in theirs["entries"]] == [_shape(e) for e in copied] + started
    for found in (theirs, ours):
        recorded = [entry for entry in found["file"][1:] if entry.get("customType") != MODE_RECORD]
        assert recorded[:2] == copied
        assert [_shape(entry) for entry in recorded[2:]] == [
            *started,
            ("message", None, None, None, "user", "q2"),
            ("message", None, None, None, "assistant", "again"),
        ]
    assert _shapes(ours["entries"]) == _shapes(theirs["entries"])


@pytest.mark.pi
def test_switching_sessions_answers_as_pi(tmp_path: Path) -> None:
    other = _pis_session(tmp_path, ["in another project"])
    gone = tmp_path / "gone"
    gone.mkdir()
    orphan = tmp_path / "orphan.jsonl"
    _branched_session(orphan, gone)
    gone.rmdir()

    def script(process: RpcProcess, where: Path) -> JsonObject:
        found: JsonObject = {
            "other": process.request({"type": "switch_session", "sessionPath": str(other)}),
            "other entries": process.request({"type": "get_entries"}),
            "orphan": process.request({"type": "switch_session", "sessionPath": str(orphan)}),
            "missing": process.request({"type": "switch_session", "sessionPath": "new/s.jsonl"}),
            "missing entries": process.request({"type": "get_entries"}),
        }
        _prompted(process, "first in the new file")
        found["written"] = _lines(where / "new" / "s.jsonl")
        found["directory"] = process.request({"type": "switch_session", "sessionPath": "new"})
        found["no path"] = process.request({"type": "switch_session"})
        return found

    theirs, ours = _both(tmp_path, script, replies=(_text("noted"),))
    for key in ("other", "other entries", "missing"):
        assert _ordered(ours[key]) == _ordered(theirs[key]), key
    assert theirs["other"]["data"] == {"cancelled": False}
    assert theirs["other entries"]["data"]["entries"] == _lines(other)[1:]
    # The current working directory named is the project of the session switched from.
    assert (
        theirs["orphan"]["error"]
        == ours["orphan"]["error"]
        == (
            f"Stored session working directory does not exist: {gone}\n"
            f"Session file: {orphan}\n"
            f"Current working directory: {tmp_path / 'project'}"
        )
    )
    # Where no file is, a new session starts, written there with its first reply.
    assert _shapes(ours["missing entries"]) == _shapes(theirs["missing entries"])
    for found, where in ((theirs, tmp_path / "pi"), (ours, tmp_path / "ours")):
        assert found["written"][0]["cwd"] == str(where)
        assert found["directory"]["success"] is False
        assert found["no path"]["success"] is False
    # Pi fails on a directory and without a path as Node does (EISDIR, a TypeError).
    assert (
        ours["directory"]["error"]
        == f"{tmp_path / 'ours' / 'new'} is a directory, not a session file"
    )
    assert ours["no path"]["error"] == 'switch_session needs a string "sessionPath"'


@pytest.mark.pi
@pytest.mark.parametrize("trusted", [True, False], ids=["approved", "not approved"])
def test_a_session_of_another_project_takes_its_settings_as_in_pi(
    tmp_path: Path, trusted: bool
) -> None:
    """Pi rebuilds its runtime for the directory of the session switched to: that project's
    ``.pi/settings.json`` (trusted for the run with ``--approve``) sets the delivery modes
    ``get_state`` reports; without trust it stays out, as Pi's does."""
    other = _pis_session(tmp_path, ["in another project"])
    settings = {"steeringMode": "all", "followUpMode": "all"}
    (tmp_path / "project" / ".pi").mkdir()
    (tmp_path / "project" / ".pi" / "settings.json").write_text(json.dumps(settings))

    def script(process: RpcProcess, where: Path) -> JsonObject:
        switched = process.request({"type": "switch_session", "sessionPath": str(other)})
        assert switched["data"] == {"cancelled": False}, switched
        state = process.request({"type": "get_state"})["data"]
        return {key: state[key] for key in ("steeringMode", "followUpMode")}

    argv = ["--approve"] if trusted else ["--no-approve"]
    theirs, ours = _both(tmp_path, script, argv=lambda where: argv)
    assert ours == theirs
    assert (theirs == settings) is trusted


@pytest.mark.pi
@pytest.mark.parametrize(
    "argv", [[], ["--no-builtin-tools"], ["--tools", "bash,read"]], ids=["", "-nbt", "--tools"]
)
def test_a_new_session_starts_with_the_settings_read_again_as_in_pi(
    tmp_path: Path, argv: list[str]
) -> None:
    """Pi rebuilds its runtime for every session that replaces another, settings read
    again: settings changed during the run reach ``new_session``'s session, its tools
    (``defaultTools``, under the command line's tool flags) and ``cycle_model``'s scope
    (``enabledModels``) included."""
    changed = {"defaultTools": ["grep", "read"], "enabledModels": ["loop/m3", "loop/m"]}
    more_models = [{"id": "m2"}, {"id": "m3"}]
    found = {}
    for start, name, agent in ((pi_rpc, "pi", "pi-agent"), (our_rpc, "ours", "agent")):
        where = tmp_path / name
        where.mkdir()
        replies = [_text("one"), _text("two")]
        with (
            WireServer(replies) as server,
            start(where, server.base_url, argv, more_models=more_models) as process,
        ):
            _prompted(process, "one")
            (where / agent / "settings.json").write_text(json.dumps(changed))
            process.request({"type": "new_session"})
            _prompted(process, "two")
            cycled = [process.request({"type": "cycle_model"})["data"] for _ in range(2)]
            # (Each side's model names its own server's address.)
            cycled = [(data["model"]["id"], data["isScoped"]) for data in cycled]
            assert process.close() == 0, process.stderr()
            tools = [
                [tool["function"]["name"] for tool in json.loads(request["body"]).get("tools", [])]
                for request in server.requests
            ]
        found[name] = {"tools": tools, "cycled": cycled}
    # ctxmodes' notebook, which Pi has not, comes after Pi's tools.
    found["ours"]["tools"] = [
        [name for name in tools if name != "notebook"] for tools in found["ours"]["tools"]
    ]
    assert found["ours"] == found["pi"]
    if not argv:
        assert found["pi"]["tools"] == [["read", "bash", "edit", "write"], ["grep", "read"]]
    assert found["pi"]["cycled"] == [("m3", True), ("m", True)]


def test_another_project_s_settings_that_cannot_be_read_are_said_and_the_run_s_stay(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text('{"steeringMode": 7}')
    other = tmp_path / "other.jsonl"
    _branched_session(other, project)
    where = tmp_path / "ours"
    where.mkdir()
    with WireServer([]) as server, our_rpc(where, server.base_url, ["--approve"]) as process:
        switched = process.request({"type": "switch_session", "sessionPath": str(other)})
        state = process.request({"type": "get_state"})["data"]
        assert process.close() == 0
        stderr = process.stderr()
    assert switched["data"] == {"cancelled": False}
    assert state["steeringMode"] == "one-at-a-time"
    assert f"Warning: settings of {project} not loaded: " in stderr


@pytest.mark.pi
def test_naming_the_session_is_pis_session_info(tmp_path: Path) -> None:
    def script(process: RpcProcess, where: Path) -> JsonObject:
        found: JsonObject = {
            "blank": process.request({"type": "set_session_name", "name": " \t\n "}),
            "named": process.request({"type": "set_session_name", "name": "  release prep\n"}),
        }
        found["event"] = process.lines[-2]
        _prompted(process, "go")
        found["entries"] = process.request({"type": "get_entries"})["data"]["entries"]
        [made] = where.rglob("*.jsonl")
        found["line"] = next(line for line in _lines(made) if line["type"] == "session_info")
        found["no name"] = process.request({"type": "set_session_name"})
        return found

    theirs, ours = _both(tmp_path, script, replies=(_text("done"),))
    assert theirs["blank"]["error"] == "Session name cannot be empty"
    assert theirs["event"] == {"type": "session_info_changed", "name": "release prep"}
    for key in ("blank", "named", "event"):
        assert _ordered(ours[key]) == _ordered(theirs[key]), key
    lines = {}
    for name, found in (("pi", theirs), ("ours", ours)):
        # Its id, parent and time are the session's own.
        line = found["line"]
        assert line["parentId"] == found["entries"][found["entries"].index(line) - 1]["id"]
        lines[name] = {**line, "id": "<id>", "parentId": "<parent>", "timestamp": "<time>"}
        assert found["no name"]["success"] is False
    assert _ordered(lines["ours"]) == _ordered(lines["pi"])
    assert ours["no name"]["error"] == 'set_session_name needs a string "name"'


@pytest.mark.pi
def test_naming_during_a_reply_names_the_session_as_in_pi(tmp_path: Path) -> None:
    def script(process: RpcProcess, server: WireServer) -> list[JsonObject]:
        process.send({"type": "prompt", "message": "take your time"})
        process.wait_for_event("message_update")
        named = process.request({"type": "set_session_name", "name": "mid-reply"})
        server.release.set()
        process.wait_for_event("agent_settled")
        told = [line for line in process.lines if line["type"] == "session_info_changed"]
        return [named, *told, process.request({"type": "get_state"})["data"]]

    found = []
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        slow = Reply(text_stream(API, "a slow answer"), behaviour="pause", cut_after=2)
        with WireServer([slow]) as server, start(where, server.base_url) as process:
            found.append(script(process, server))
            assert process.close() == 0
    (named, told, state), (pi_named, pi_told, pi_state) = found[1], found[0]
    assert named == pi_named
    assert named["success"] is True
    assert told == pi_told == {"type": "session_info_changed", "name": "mid-reply"}
    assert state["sessionName"] == pi_state["sessionName"] == "mid-reply"
    # Pi appends the name between the reply's entries; ctxmodes, whose run holds the
    # session file, once the reply is over.
    entries = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    assert [entry["type"] for entry in entries][-2:] == ["message", "session_info"]


@pytest.mark.pi
def test_exports_go_where_pis_go(tmp_path: Path) -> None:
    home = Path.home()

    def script(process: RpcProcess, where: Path) -> JsonObject:
        found: JsonObject = {"early": process.request({"type": "export_html"})}
        _prompted(process, "summarise the plan")
        [session] = where.rglob("20*.jsonl")
        found["default name"] = f"pi-session-{session.stem}.html"
        found["default"] = process.request({"type": "export_html"})
        found["relative"] = process.request({"type": "export_html", "outputPath": "page.html"})
        found["home"] = process.request({"type": "export_html", "outputPath": "~/export.html"})
        found["home page"] = (home / "export.html").read_text()
        missing = str(where / "no-such-dir" / "page.html")
        found["missing dir"] = process.request({"type": "export_html", "outputPath": missing})
        found["over the session"] = process.request(
            {"type": "export_html", "outputPath": str(session)}
        )
        return found

    theirs, ours = _both(tmp_path, script, replies=(_text("the plan, summarised"),))
    assert theirs["early"]["error"] == "Nothing to export yet - start a conversation first"
    assert _ordered(ours["early"]) == _ordered(theirs["early"])
    for found, where in ((theirs, tmp_path / "pi"), (ours, tmp_path / "ours")):
        # Relative paths are answered as given, and written from the working directory.
        assert found["default"]["data"] == {"path": found["default name"]}
        assert found["relative"]["data"] == {"path": "page.html"}
        assert found["home"]["data"] == {"path": str(home / "export.html")}
        for page in (where / found["default name"], where / "page.html"):
            assert page.read_text().lower().startswith("<!doctype html>")
        assert found["home page"].lower().startswith("<!doctype html>")
        assert found["missing dir"]["success"] is False
    assert "summarise the plan" in (tmp_path / "ours" / "page.html").read_text()
    assert ours["missing dir"]["error"].startswith(f"cannot write {tmp_path / 'ours'}")
    # Pi writes the page over the session file; ctxmodes keeps the session.
    assert theirs["over the session"]["success"] is True
    assert ours["over the session"]["error"] == "Refusing to overwrite the session file"


@pytest.mark.pi
def test_a_session_kept_in_memory_has_nothing_to_export(tmp_path: Path) -> None:
    def script(process: RpcProcess, where: Path) -> JsonObject:
        _prompted(process, "hello")
        return process.request({"type": "export_html"})

    theirs, ours = _both(tmp_path, script, replies=(_text("hi"),), argv=lambda w: ["--no-session"])
    assert theirs["error"] == "Cannot export in-memory session to HTML"
    assert _ordered(ours) == _ordered(theirs)


@pytest.mark.pi
def test_the_last_reply_text_is_pis(tmp_path: Path) -> None:
    def script(process: RpcProcess, where: Path) -> list[JsonObject]:
        found = [process.request({"type": "get_last_assistant_text"})]
        for prompt in ("spaced", "blank"):
            _prompted(process, prompt)
            found.append(process.request({"type": "get_last_assistant_text"}))
        return found

    replies = (_text("  \n the answer, trimmed \t\n"), _text(" \n "))
    theirs, ours = _both(tmp_path, script, replies=replies)
    # Pi answers {text: undefined}, written as {}, without a reply or with a blank one.
    assert [response["data"] for response in theirs] == [{}, {"text": "the answer, trimmed"}, {}]
    assert _ordered(ours) == _ordered(theirs)


@pytest.mark.pi
def test_a_session_kept_in_memory_forks_and_clones_in_memory(tmp_path: Path) -> None:
    def script(process: RpcProcess, where: Path) -> JsonObject:
        for prompt in ("q1", "q2"):
            _prompted(process, prompt)
        forkable = process.request({"type": "get_fork_messages"})["data"]["messages"]
        found: JsonObject = {
            "fork": process.request({"type": "fork", "entryId": forkable[1]["entryId"]}),
            "forked": process.request({"type": "get_entries"}),
            "clone": process.request({"type": "clone"}),
            "cloned": process.request({"type": "get_entries"}),
        }
        found["files"] = list(where.rglob("*.jsonl"))
        return found

    replies = (_text("a1"), _text("a2"))
    theirs, ours = _both(tmp_path, script, replies=replies, argv=lambda w: ["--no-session"])
    assert theirs["fork"]["data"] == {"text": "q2", "cancelled": False}
    for key in ("fork", "clone"):
        assert _ordered(ours[key]) == _ordered(theirs[key])
    for key in ("forked", "cloned"):
        assert _shapes(ours[key]) == _shapes(theirs[key])
    assert theirs["files"] == ours["files"] == []


def test_a_clone_needs_an_entry_at_the_leaf(tmp_path: Path) -> None:
    # Pi's RPC mode cannot move the leaf before the first entry; a program's navigation can.
    with make_agent(tmp_path, [{"text": "ok"}]) as agent:
        agent.prompt("hi")
        session_file = agent.session_file
        agent.session_manager.reset_leaf()
        rpc = RpcContext(agent, OutputLines(io.BytesIO()), model_cycler(agent, [])[0])
        with pytest.raises(RpcCommandError) as refused:
            session_commands.clone(rpc, {"type": "clone"})
        assert str(refused.value) == "Cannot clone session: no current entry selected"
        assert agent.session_file == session_file
