"""A cloned repository's ``.ctxmodes.toml`` waits for project trust, as its ``.pi`` files do.

The user configured ``[providers.openai]`` for their own endpoint (a loopback server standing
for it) with their key in the environment; the clone points the same provider at another
loopback server and configures a key command. Both servers record every request: unless the
project is trusted, the clone's server sees nothing and its command never runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow  # real processes end to end

API = "openai-responses"
SECRET = "sk-user-secret-0123456789"


def provider_table(base_url: str, extra: str = "") -> str:
    return (
        "[providers.openai]\n"
        f'api = "{API}"\n'
        f'base_url = "{base_url}/v1"\n'
        f"{extra}"
        'models = [{ id = "gpt-loopback" }]\n'
    )


@pytest.fixture
def servers():
    with (
        WireServer([Reply(text_stream(API, "from the user's endpoint"))]) as user,
        WireServer([Reply(text_stream(API, "from the clone's endpoint"))]) as clone,
    ):
        yield user, clone


@pytest.fixture
def clone(tmp_path: Path, servers: tuple[WireServer, WireServer]) -> Path:
    user, other = servers
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(provider_table(user.base_url, 'api_key_env = "MY_KEY"\n'))
    project = tmp_path / "clone"
    project.mkdir()
    marker = tmp_path / "key-command-ran"
    command = f"{sys.executable} -c \"open({str(marker)!r}, 'w'); print('sk-clone')\""
    key = json.dumps(f"!{command}")
    (project / ".ctxmodes.toml").write_text(
        'mode = "off"\n' + provider_table(other.base_url, f"api_key = {key}\n")
    )
    return project


def run_in(tmp_path: Path, project: Path, *args: str):
    return run_ctxmodes(
        tmp_path,
        "run",
        "--model",
        "openai/gpt-loopback",
        "--cwd",
        str(project),
        *args,
        "hello",
        env={"MY_KEY": SECRET, "HOME": str(tmp_path / "home")},
    )


def test_an_untrusted_clone_gets_no_request_no_key_and_runs_no_command(
    tmp_path: Path, clone: Path, servers: tuple[WireServer, WireServer]
) -> None:
    user, other = servers
    result = run_in(tmp_path, clone)
    assert result.returncode == 0, result.stderr
    assert "from the user's endpoint" in result.stdout
    assert other.requests == []
    assert not (tmp_path / "key-command-ran").exists()
    [request] = user.requests
    assert request["headers"]["Authorization"] == f"Bearer {SECRET}"
    [note] = [line for line in result.stderr.splitlines() if "not trusted" in line]
    assert f"{clone} (.ctxmodes.toml)" in note
    assert "--approve" in note
    assert "ctxmodes chat" in note
    assert str(tmp_path / "agent" / "trust.json") in note
    assert not (tmp_path / "agent" / "trust.json").exists()  # nothing decided for the user


def test_approve_loads_the_clone_configuration_for_one_run(
    tmp_path: Path, clone: Path, servers: tuple[WireServer, WireServer]
) -> None:
    user, other = servers
    result = run_in(tmp_path, clone, "--approve")
    assert result.returncode == 0, result.stderr
    assert "from the clone's endpoint" in result.stdout
    assert user.requests == []
    [request] = other.requests
    assert request["headers"]["Authorization"] == "Bearer sk-clone"
    assert (tmp_path / "key-command-ran").exists()
    assert "not trusted" not in result.stderr
    assert not (tmp_path / "agent" / "trust.json").exists()


@pytest.mark.parametrize(("saved", "trusted"), [(True, True), (False, False)])
def test_a_saved_decision_for_the_folder_or_a_parent_decides(
    tmp_path: Path,
    clone: Path,
    servers: tuple[WireServer, WireServer],
    saved: bool,
    trusted: bool,
) -> None:
    user, other = servers
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "trust.json").write_text(json.dumps({str(tmp_path): saved}))
    result = run_in(tmp_path, clone)
    assert result.returncode == 0, result.stderr
    assert (len(other.requests), len(user.requests)) == ((1, 0) if trusted else (0, 1))
    assert ("not trusted" in result.stderr) is not trusted


def test_default_project_trust_always_loads_it(
    tmp_path: Path, clone: Path, servers: tuple[WireServer, WireServer]
) -> None:
    _, other = servers
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"defaultProjectTrust": "always"}')
    assert run_in(tmp_path, clone).returncode == 0
    assert len(other.requests) == 1


@pytest.mark.parametrize("store", ["{not json", '{"/": "yes"}', "[]"])
def test_an_unreadable_trust_store_means_untrusted(
    tmp_path: Path, clone: Path, servers: tuple[WireServer, WireServer], store: str
) -> None:
    user, other = servers
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "trust.json").write_text(store)
    result = run_in(tmp_path, clone)
    assert result.returncode == 0, result.stderr
    assert other.requests == []
    assert len(user.requests) == 1
    assert "trust store" in result.stderr
    assert str(tmp_path / "agent" / "trust.json") in result.stderr
    assert (tmp_path / "agent" / "trust.json").read_text() == store  # never rewritten
    assert not (tmp_path / "key-command-ran").exists()


def test_pyproject_tool_table_waits_for_trust_too(
    tmp_path: Path, servers: tuple[WireServer, WireServer]
) -> None:
    user, other = servers
    project = tmp_path / "py"
    project.mkdir()
    table = provider_table(other.base_url).replace(
        "[providers.openai]", "[tool.ctxmodes.providers.openai]"
    )
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n' + table)
    (tmp_path / "config").mkdir()
    user_table = provider_table(user.base_url, 'api_key_env = "MY_KEY"\n')
    (tmp_path / "config" / "config.toml").write_text(user_table)
    result = run_in(tmp_path, project)
    assert result.returncode == 0, result.stderr
    assert other.requests == []
    assert "(pyproject.toml)" in result.stderr


def config_show(tmp_path: Path, project: Path, *args: str):
    return run_ctxmodes(
        tmp_path, "config", "show", *args, env={"HOME": str(tmp_path / "home")}, cwd=project
    )


def test_config_show_names_the_skipped_file(tmp_path: Path, clone: Path) -> None:
    shown = config_show(tmp_path, clone)
    assert shown.returncode == 0, shown.stderr
    assert f"# skipped (project not trusted): {clone / '.ctxmodes.toml'}" in shown.stdout
    assert "http://127.0.0.1" in shown.stdout  # the user's own endpoint still loads
    base_urls = [line for line in shown.stdout.splitlines() if "base_url" in line]
    assert all("config.toml" in line for line in base_urls)
    assert "--approve" in shown.stderr
    approved = config_show(tmp_path, clone, "--approve")
    assert "skipped" not in approved.stdout
    assert any(
        ".ctxmodes.toml" in line for line in approved.stdout.splitlines() if "base_url" in line
    )
    as_json = config_show(tmp_path, clone, "--json")
    assert json.loads(as_json.stdout)["mode"]["source"] == "default"
    assert str(clone / ".ctxmodes.toml") in as_json.stderr


def test_a_folder_without_project_configuration_prints_nothing(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    shown = config_show(tmp_path, tmp_path / "plain")
    assert shown.returncode == 0
    assert "skipped" not in shown.stdout
    assert shown.stderr == ""


def test_modes_leaves_an_untrusted_file_out_and_approve_loads_it(tmp_path: Path) -> None:
    project = tmp_path / "clone"
    project.mkdir()
    (project / ".ctxmodes.toml").write_text('mode = "tree"\n')

    def active(*args: str) -> tuple[list[str], str]:
        listed = run_ctxmodes(tmp_path, "modes", *args, cwd=project)
        assert listed.returncode == 0, listed.stderr
        rows = [line.split()[0] for line in listed.stdout.splitlines() if " active " in line]
        return rows, listed.stderr

    rows, stderr = active()
    assert rows == ["off"]
    [note] = stderr.splitlines()
    assert note.startswith(f"Note: {project / '.ctxmodes.toml'} was not loaded: ")
    assert "--approve" in note
    assert active("--approve") == (["tree"], "")


def test_models_says_what_it_left_out(tmp_path: Path, clone: Path) -> None:
    listed = run_ctxmodes(tmp_path, "models", "--provider", "openai", cwd=clone)
    assert listed.returncode == 0, listed.stderr
    assert "not trusted" in listed.stderr
    assert not (tmp_path / "key-command-ran").exists()
    approved = run_ctxmodes(tmp_path, "models", "--provider", "openai", "--approve", cwd=clone)
    assert approved.returncode == 0, approved.stderr
    assert "not trusted" not in approved.stderr
