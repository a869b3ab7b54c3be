"""``ctxmodes serve codex-home``: a Codex CLI home signed in to the service with a token read
from standard input, and refused, with nothing written, wherever it would replace something
of the user's or could not work. That the real Codex CLI runs on such a home is the service
page's recipe (``tests/docs/test_examples.py``)."""

from __future__ import annotations

import io
import json
import stat
import tomllib
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.sqlite_storage import SqliteStorage

URL = "https://127.0.0.1:8443/backend-api/codex"


@pytest.fixture
def tokens(tmp_path: Path):
    """Issues tokens of one service (for the accounts named): ``(token, account id)``."""
    storage = SqliteStorage.in_directory(tmp_path / "service")

    def issue(name: str = "alice") -> tuple[str, str]:
        issued = create_token(storage, name)
        return issued.token, issued.account.account_id

    yield issue
    storage.close()


def run(capsys, monkeypatch, stdin: str, home: Path, url: str = URL) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code, out, err = ctxmodes(capsys, "serve", "codex-home", str(home), "--url", url)
    assert out == ""  # nothing of the token reaches standard output
    return code, err


def test_a_home_signed_in_to_the_service(tmp_path, capsys, monkeypatch, tokens) -> None:
    token, account = tokens()
    home = tmp_path / "codex-home"
    monkeypatch.chdir(tmp_path)
    # A folder named from here is named whole in what is said: Codex runs from elsewhere.
    code, err = run(capsys, monkeypatch, token + "\n", Path("codex-home"), URL + "/")
    assert code == 0, err
    assert err.startswith(f"Codex home {home} signed in to {URL} as {account}; ")
    assert f"CODEX_HOME={home}" in err
    assert token not in err
    config = tomllib.loads((home / "config.toml").read_text())
    assert config == {
        "openai_base_url": URL,
        "chatgpt_base_url": "https://127.0.0.1:8443/backend-api/",
        "analytics": {"enabled": False},
        "features": {"apps": False, "plugins": False},
    }
    auth = json.loads((home / "auth.json").read_text())
    assert auth["auth_mode"] == "chatgpt"
    assert auth["tokens"] == {
        "id_token": token,
        "access_token": token,
        "refresh_token": "",
        "account_id": account,
    }
    assert auth["last_refresh"].endswith("Z")
    # The sign-in is a secret: the home and its files are the owner's alone.
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("auth.json", "config.toml"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600


def test_a_new_token_of_the_service_replaces_its_sign_in(
    tmp_path, capsys, monkeypatch, tokens
) -> None:
    home = tmp_path / "codex-home"
    first, _ = tokens()
    assert run(capsys, monkeypatch, first, home)[0] == 0
    config = (home / "config.toml").read_bytes()
    second, account = tokens("bob")
    code, err = run(capsys, monkeypatch, second, home)
    assert code == 0, err
    auth = json.loads((home / "auth.json").read_text())
    assert (auth["tokens"]["access_token"], auth["tokens"]["account_id"]) == (second, account)
    assert (home / "config.toml").read_bytes() == config


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:8443/backend-api/codex", "is not an https:// URL"),
        ("https://127.0.0.1:8443/v1", "does not end in /backend-api/codex"),
        ("https://me:secret@127.0.0.1/backend-api/codex", "without credentials"),
        ("127.0.0.1:8443/backend-api/codex", "is not an https:// URL"),
    ],
)
def test_a_url_codex_cannot_use_is_refused(tmp_path, capsys, monkeypatch, tokens, url, said):
    token, _ = tokens()
    code, err = run(capsys, monkeypatch, token, tmp_path / "codex-home", url)
    assert code == 1
    assert said in err
    assert err.count("\n") == 1  # one line
    assert not (tmp_path / "codex-home").exists()


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not a token",
        "a.b.c",
        # Shaped as a JWT, but not one the service issued.
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
    ],
)
def test_standard_input_without_a_token_of_the_service_is_refused(
    tmp_path, capsys, monkeypatch, stdin
) -> None:
    code, err = run(capsys, monkeypatch, stdin, tmp_path / "codex-home")
    assert code == 1
    assert "standard input holds no token of `ctxmodes serve token create`" in err
    assert not (tmp_path / "codex-home").exists()


def test_a_token_is_never_taken_from_a_terminal(tmp_path, capsys, monkeypatch) -> None:
    terminal = io.StringIO("")
    terminal.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr("sys.stdin", terminal)
    code, _, err = ctxmodes(capsys, "serve", "codex-home", str(tmp_path / "h"), "--url", URL)
    assert code == 1
    assert "reads the token from standard input" in err
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize(
    ("name", "held", "said"),
    [
        ("auth.json", '{"tokens": {"access_token": "a ChatGPT sign-in"}}', "another sign-in"),
        ("auth.json", "not JSON", "another sign-in"),
        ("config.toml", 'openai_base_url = "https://elsewhere/backend-api/codex"\n', "elsewhere"),
        ("config.toml", 'model = "gpt-5"\n', "points Codex elsewhere"),
        ("config.toml", "not = [toml", "cannot read"),
    ],
)
def test_what_the_home_holds_already_is_never_replaced(
    tmp_path, capsys, monkeypatch, tokens, name, held, said
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / name).write_text(held)
    token, _ = tokens()
    code, err = run(capsys, monkeypatch, token, home)
    assert code == 1
    assert said in err
    assert err.count("\n") == 1  # one line
    assert (home / name).read_text() == held
    assert [path.name for path in home.iterdir()] == [name]  # nothing else written either


@pytest.mark.parametrize("failing", ["config.toml", "auth.json"])
def test_a_home_that_cannot_be_written_is_left_as_it_was_found(
    tmp_path, capsys, monkeypatch, tokens, failing
) -> None:
    from ctxmodes_remote.service import codex_home

    written = codex_home.write_owner_only

    def full_disk(path: Path, data: bytes) -> None:
        if path.name == failing:
            raise OSError(28, "No space left on device")
        written(path, data)

    monkeypatch.setattr(codex_home, "write_owner_only", full_disk)
    token, _ = tokens()
    home = tmp_path / "homes" / "codex-home"
    code, err = run(capsys, monkeypatch, token, home)
    assert (code, err) == (
        1,
        f"ctxmodes: error: cannot write the Codex home {home}: No space left on device\n",
    )
    # Neither a half-made home nor the folders made for it are left behind.
    assert not (tmp_path / "homes").exists()
    monkeypatch.setattr(codex_home, "write_owner_only", written)
    assert run(capsys, monkeypatch, token, home)[0] == 0
