"""``ctxmodes serve`` as a real process, and the real Codex CLI configured against it.

* :class:`ServeProcess` starts ``ctxmodes serve --port 0`` and reads the address it prints;
  it stops only the process it started, by its handle; :func:`upstream_endpoint` configures
  a model served over HTTP for it to front.
* :func:`codex_binary` finds the pinned Codex CLI (``make codex-cli`` installs it into
  ``<repo>/.codex-cli``; ``$CODEX_BIN`` overrides), :func:`write_codex_home` writes a private
  ``CODEX_HOME`` that points the built-in ``openai`` provider at the service, with the
  service's token as the ChatGPT access token, and :func:`codex_environment` builds Codex's
  environment from scratch (nothing of the user's own home or config is read).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxmodes_remote.service.codex_home import account_of, sign_in
from support.pi_oracle import REPO

CTXMODES = Path(sys.executable).with_name("ctxmodes")
#: The line ``ctxmodes serve`` prints once it listens, and its base URL.
LISTENING = re.compile(r"listening on (\S+)")


def ctxmodes(
    *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``ctxmodes ARGS``; ``env`` is added to this process's environment."""
    return subprocess.run(
        [str(CTXMODES), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
        env={**os.environ, **env} if env else None,
    )


def create_token(data: Path, name: str, *extra: str) -> str:
    return ctxmodes("serve", "token", "create", name, "--data", str(data), *extra).stdout.strip()


class ServeProcess:
    def __init__(self, upstream: str, data: Path, tls: object, log: Path, *extra: str) -> None:
        self.log = log
        self.ca: Path = tls.ca  # type: ignore[attr-defined]
        self._log_file = log.open("w")
        self.process = subprocess.Popen(
            [
                str(CTXMODES),
                "serve",
                "--upstream",
                upstream,
                "--data",
                str(data),
                "--port",
                "0",
                "--tls-cert",
                str(tls.cert),  # type: ignore[attr-defined]
                "--tls-key",
                str(tls.key),  # type: ignore[attr-defined]
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = LISTENING.search(line)
        if found is None:
            self.stop()
            raise AssertionError(f"ctxmodes serve did not start: {line!r} {log.read_text()}")
        self.base = found.group(1)
        self.origin = self.base.removesuffix("/backend-api/codex")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        code = self.process.wait(30)
        self._log_file.close()
        return code

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(30)
        self._log_file.close()


def upstream_endpoint(
    config_dir: Path,
    api: str,
    base_url: str,
    model: str = "m",
    api_key_env: str | None = None,
    *,
    reasoning: bool = False,
) -> str:
    """Writes ``config_dir/config.toml`` with one ``[providers.gateway]`` endpoint (``api``
    at ``base_url``, serving ``model``, a thinking model if ``reasoning``, its key in
    ``api_key_env`` if given), as a team configures the model ``ctxmodes serve`` fronts;
    point ``CTXMODES_CONFIG_DIR`` at ``config_dir``. Returns the ``--upstream``."""
    config_dir.mkdir(parents=True, exist_ok=True)
    key = f'api_key_env = "{api_key_env}"\n' if api_key_env else ""
    thinks = ", reasoning = true" if reasoning else ""
    (config_dir / "config.toml").write_text(
        "[providers.gateway]\n"
        f'api = "{api}"\n'
        f'base_url = "{base_url}"\n'
        f"{key}"
        f'models = [{{ id = "{model}", context_window = 272000, max_tokens = 8192{thinks} }}]\n'
    )
    return f"gateway/{model}"


def scripted_call(
    name: str, arguments: dict[str, Any], namespace: str | None = None
) -> dict[str, Any]:
    """One step of a ``scripted:`` upstream: a single function call, in ``namespace``."""
    step: dict[str, Any] = {"name": name, "arguments": arguments}
    if namespace:
        step["namespace"] = namespace
    return {"tool_calls": [step]}


def ctxmodes_run_against(
    service: ServeProcess,
    token: str,
    model: str,
    root: Path,
    *args: str,
    reasoning: bool = False,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``ctxmodes run ARGS`` as a real process with the model ``svc/<model>`` (a thinking
    model if ``reasoning``): a provider on the Codex transport whose base URL is ``service``,
    its key ``token`` (from the environment), the service's CA trusted through
    ``SSL_CERT_FILE``, every setting and home under ``root``.

    :returns: the finished process and its Pi agent directory (where the session is).
    """
    work = root / "work"
    work.mkdir(parents=True)
    thinks = ", reasoning = true" if reasoning else ""
    (work / ".ctxmodes.toml").write_text(
        "[providers.svc]\n"
        'api = "openai-codex-responses"\n'
        f'base_url = "{service.base}"\n'
        'api_key_env = "SERVE_TOKEN"\n'
        f'models = [{{ id = "{model}", context_window = 272000, max_tokens = 8192{thinks} }}]\n'
    )
    agent_dir = root / "pi"
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "CODEX_HOME": str(root / "codex"),
        "CTXMODES_CONFIG_DIR": str(root / "config"),
        "SSL_CERT_FILE": str(service.ca),
        "SERVE_TOKEN": token,
    }
    run = subprocess.run(
        [str(CTXMODES), "run", "--approve", "--model", f"svc/{model}", *args],
        cwd=work,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return run, agent_dir


def codex_binary() -> Path | None:
    configured = os.environ.get("CODEX_BIN")
    candidate = Path(configured) if configured else REPO / ".codex-cli/node_modules/.bin/codex"
    return candidate if candidate.exists() else None


def write_codex_home(home: Path, service: ServeProcess, token: str, model: str) -> None:
    home.mkdir(parents=True)
    (home / "auth.json").write_bytes(sign_in(token, account_of(token), datetime.now(UTC)))
    (home / "auth.json").chmod(0o600)
    config = [
        f'model = "{model}"',
        'model_provider = "openai"',
        f'openai_base_url = "{service.base}"',
        f'chatgpt_base_url = "{service.origin}/backend-api/"',
        "check_for_update_on_startup = false",
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        'model_reasoning_effort = "low"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[features]",
        "apps = false",
        "plugins = false",
        "memories = false",
    ]
    (home / "config.toml").write_text("\n".join(config) + "\n")


def codex_environment(home: Path, ca: Path) -> dict[str, str]:
    # A proxy nobody listens on: any attempt to leave loopback fails at once.
    refused = "http://127.0.0.1:9"
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home.parent),
        "TERM": "dumb",
        "CODEX_HOME": str(home),
        "CODEX_CA_CERTIFICATE": str(ca),
        "HTTPS_PROXY": refused,
        "HTTP_PROXY": refused,
        "ALL_PROXY": refused,
        "NO_PROXY": "127.0.0.1,localhost",
    }
