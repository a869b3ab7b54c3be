"""Pi's ``--fork`` and ``--api-key``, judged by the real Pi: a fork copies a session into a
new one of the working directory, which both continue alike, and the source stays as it
was; a key given for the run is the one the model's provider receives, over the configured
one, and reaches neither the output nor the trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import run_ctxmodes
from support.pi_print import API, run_ours, run_pi
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow  # each test runs ctxmodes (and Pi) as processes, end to end


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _added(fork: Path, source: Path) -> list[tuple[str, str | None, str | None]]:
    """What a run added to ``fork`` after the copy of ``source``: each entry's type, role
    and text."""

    def shape(entry: dict[str, Any]) -> tuple[str, str | None, str | None]:
        message = entry.get("message", {})
        content = message.get("content") or [{}]
        return entry["type"], message.get("role"), content[0].get("text")

    return [shape(entry) for entry in _entries(fork)[len(_entries(source)) :]]


@pytest.mark.pi
def test_a_fork_copies_the_session_and_goes_on_as_pi_s_does(tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    answers = ["first answer", "pi's fork answer", "our fork answer", "continued"]
    with WireServer([Reply(text_stream(API, text)) for text in answers]) as server:
        made = run_ours(tmp_path, server.base_url, ["-p", "--model", "loop/m", "hi"], env=env)
        assert made.returncode == 0, made.stderr
        [source] = agent.rglob("*.jsonl")
        before = source.read_bytes()
        prefix = _entries(source)[0]["id"][:13]
        argv = ["-p", "--model", "loop/m", "--fork", prefix, "go on"]
        by_pi = run_pi(tmp_path, server.base_url, argv)
        assert by_pi.returncode == 0, by_pi.stderr
        [pi_fork] = set(agent.rglob("*.jsonl")) - {source}
        ours = run_ours(tmp_path, server.base_url, argv, env=env)
        assert (ours.returncode, ours.stdout) == (0, "our fork answer\n"), ours.stderr
        [our_fork] = set(agent.rglob("*.jsonl")) - {source, pi_fork}
        # Pi goes on in the fork ctxmodes made.
        again = ["-p", "--model", "loop/m", "--session", str(our_fork), "and then"]
        continued = run_pi(tmp_path, server.base_url, again)
    assert continued.returncode == 0, continued.stderr
    assert continued.stdout == "continued\n"
    assert source.read_bytes() == before
    copied = source.read_text().splitlines()[1:]
    forks = {"pi": pi_fork, "ctxmodes": our_fork}
    headers = {name: _entries(fork)[0] for name, fork in forks.items()}
    for name, fork in forks.items():
        assert fork.read_text().splitlines()[1 : len(copied) + 1] == copied, name
        assert headers[name]["parentSession"] == str(source)
        assert headers[name]["id"] != _entries(source)[0]["id"]
        assert fork.parent == source.parent
    assert headers["pi"].keys() == headers["ctxmodes"].keys()
    assert _added(pi_fork, source)[:1] == _added(our_fork, source)[:1]
    assert [shape[:2] for shape in _added(our_fork, source)][:2] == [
        ("message", "user"),
        ("message", "assistant"),
    ]
    assert _added(our_fork, source)[-2][2] == "and then"


@pytest.mark.pi
def test_a_fork_takes_a_session_id_no_session_has_as_pi_s_does(tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    with WireServer([Reply(text_stream(API, text)) for text in ("one", "two")]) as server:
        made = run_ours(tmp_path, server.base_url, ["-p", "--model", "loop/m", "hi"], env=env)
        assert made.returncode == 0, made.stderr
        [source] = agent.rglob("*.jsonl")
        taken = _entries(source)[0]["id"]
        argv = ["-p", "--model", "loop/m", "--fork", str(source), "--session-id"]
        refused = {
            "pi": run_pi(tmp_path, server.base_url, [*argv, taken, "x"]),
            "ctxmodes": run_ours(tmp_path, server.base_url, [*argv, taken, "x"], env=env),
        }
        named = run_ours(tmp_path, server.base_url, [*argv, "fork-1", "go on"], env=env)
    message = f"Session already exists with id '{taken}'"
    assert refused["pi"].returncode == 1
    assert message in refused["pi"].stderr
    assert refused["ctxmodes"].returncode == 1
    assert refused["ctxmodes"].stderr.splitlines() == [f"ctxmodes: error: {message}"]
    assert named.returncode == 0, named.stderr
    [fork] = agent.rglob("*_fork-1.jsonl")
    assert _entries(fork)[0]["id"] == "fork-1"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["-p", "--fork", "nothing-like-it", "hi"],
         "ctxmodes: error: no session matches 'nothing-like-it': give a session id (or its "
         "beginning) or the path of a .jsonl file"),
        (["-p", "--fork", "missing.jsonl", "hi"],
         "ctxmodes: error: Cannot fork: source session file is empty or invalid: {tmp}/"
         "missing.jsonl"),
        (["-c", "run", "--fork", "x.jsonl", "hi"],
         "ctxmodes: error: --fork cannot be combined with --continue"),
        (["-p", "--api-key", "sk-x", "--model", "scripted:s.json", "hi"],
         "ctxmodes: error: --api-key is for a provider's model (PROVIDER/MODEL), not "
         "'scripted:s.json'"),
        (["-p", "--api-key", " ", "--model", "loop/m", "hi"],
         "ctxmodes: error: --api-key requires a non-empty value"),
    ],
)  # fmt: skip
def test_a_fork_or_key_that_cannot_be_used_is_one_line_and_writes_nothing(
    tmp_path: Path, argv: list[str], error: str
) -> None:
    result = run_ctxmodes(tmp_path, *argv)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [error.format(tmp=tmp_path)]
    assert not list(tmp_path.rglob("*.jsonl"))


def test_a_key_needs_the_model_it_is_for_given_not_configured_as_in_pi(tmp_path: Path) -> None:
    result = run_ctxmodes(
        tmp_path, "-p", "--api-key", "sk-x", "hi", env={"CTXMODES_MODEL": "loop/m"}
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "ctxmodes: error: --api-key requires a model to be specified via --model or --models"
    ]


@pytest.mark.pi
@pytest.mark.parametrize("configured", ["sk-loop", None])
def test_the_run_s_key_is_what_the_provider_receives_as_with_pi(
    tmp_path: Path, configured: str | None
) -> None:
    """Over a configured key, or where there is none; the key appears in no output and in
    no trace of the run."""
    key = "sk-run-only-7f3a9c"
    trace = tmp_path / "trace.jsonl"
    argv = ["-p", "--model", "loop/m", "--api-key", key, "hi"]
    received = {}
    for name, run in (("pi", run_pi), ("ctxmodes", run_ours)):
        with WireServer([Reply(text_stream(API, "answer"))]) as server:
            extra = ["--trace", str(trace)] if name == "ctxmodes" else []
            result = run(tmp_path, server.base_url, [*extra, *argv], api_key=configured)
            assert (result.returncode, result.stdout) == (0, "answer\n"), result.stderr
            [request] = server.requests
            headers = {name.lower(): value for name, value in request["headers"].items()}
            received[name] = headers["authorization"]
            if name == "ctxmodes":
                assert key not in result.stderr
                assert key not in trace.read_text()
                assert not any(key in path.read_text() for path in tmp_path.rglob("*.jsonl"))
    assert received["ctxmodes"] == received["pi"] == f"Bearer {key}"


def test_pis_http_proxy_carries_the_model_s_requests(tmp_path: Path) -> None:
    """Pi's global ``httpProxy``: the model's request goes to the proxy, addressed to the
    model's own endpoint (a name the machine cannot resolve: only the proxy can reach it)."""
    agent = tmp_path / "agent"
    agent.mkdir()
    with WireServer([Reply(text_stream(API, "through the proxy"))]) as proxy:
        (agent / "settings.json").write_text(json.dumps({"httpProxy": proxy.base_url}))
        result = run_ours(tmp_path, "http://model.invalid", ["-p", "--model", "loop/m", "hi"])
    assert (result.returncode, result.stdout) == (0, "through the proxy\n"), result.stderr
    [request] = proxy.requests
    assert request["path"] == "http://model.invalid/v1/chat/completions"
