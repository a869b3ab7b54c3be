"""ctxmodes' own Codex transport (``openai-codex-responses``) against a real ``ctxmodes serve``:
a configured provider whose base URL is the service, its token the service's, TLS trusted
through ``SSL_CERT_FILE``. The model behind the service is the scripted one."""

import json
import os
import subprocess

import pytest
from support.serve_process import CTXMODES, ServeProcess, create_token

pytestmark = pytest.mark.slow


def test_a_codex_transport_model_runs_through_the_service(tmp_path, tls):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"model": "probe-model", "responses": [{"text": "served answer"}]})
    )
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".ctxmodes.toml").write_text(
        "[providers.svc]\n"
        'api = "openai-codex-responses"\n'
        f'base_url = "{service.base}"\n'
        f'api_key = "{token}"\n'
        'models = [{ id = "probe-model", context_window = 272000, max_tokens = 8192 }]\n'
    )
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "config"),
        "SSL_CERT_FILE": str(tls.ca),
    }
    try:
        run = subprocess.run(
            [str(CTXMODES), "run", "--mode", "off", "--model", "svc/probe-model", "say hi"],
            cwd=work,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        assert service.stop() == 0
    assert run.returncode == 0, run.stderr
    assert "served answer" in run.stdout
    entries = [json.loads(line) for line in service.log.read_text().splitlines()]
    assert {"method": "POST", "path": "/backend-api/codex/responses", "status": 200}.items() <= (
        next(e for e in entries if e.get("path", "").endswith("/responses")).items()
    )
    assert [e for e in entries if e["level"] == "error"] == []
