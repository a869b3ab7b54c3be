"""Where credentials are kept: Pi's ``auth.json``, ctxmodes' own file, the Codex CLI's.

Pi keeps credentials in ``$PI_CODING_AGENT_DIR/auth.json`` (default ``~/.pi/agent``), one
entry per provider: ``{"type": "api_key", "key": …}`` or ``{"type": "oauth", "access": …,
"refresh": …, "expires": <ms>}``. The Codex CLI keeps its ChatGPT tokens in
``$CODEX_HOME/auth.json`` (default ``~/.codex``) under ``tokens.access_token``. Keys are
read on every request and never logged; an unreadable or corrupt file is an error that
names the file, never a silent fallback, and is never rewritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxmodes.errors import CtxmodesError


class CredentialError(CtxmodesError):
    """A credential file exists but cannot be used."""


def pi_agent_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    configured = env.get("PI_CODING_AGENT_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def codex_home(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".codex"


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CredentialError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CredentialError(f"{path} is not valid JSON (line {error.lineno})") from None
    if not isinstance(data, dict):
        raise CredentialError(f"{path} does not hold a JSON object")
    return data


def ctxmodes_credentials_path(environ: Mapping[str, str] | None = None) -> Path:
    """ctxmodes' own credential file (``ctxmodes login``), beside its configuration."""
    env = os.environ if environ is None else environ
    override = env.get("CTXMODES_CONFIG_DIR")
    if override:
        return Path(override) / "auth.json"
    import platformdirs

    return platformdirs.user_config_path("ctxmodes") / "auth.json"


def codex_cli_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The ChatGPT access token the Codex CLI stored (read only: the Codex CLI refreshes
    its own tokens, and spending its refresh token here would log it out).

    :raises CredentialError: the file exists but is corrupt.
    """
    tokens = (_read_json(codex_home(environ) / "auth.json") or {}).get("tokens")
    if isinstance(tokens, dict) and isinstance(tokens.get("access_token"), str):
        token: str = tokens["access_token"]
        return token
    return None
