"""ctxmodes' own Codex transport (``openai-codex-responses``) against a real ``ctxmodes serve``:
a configured provider whose base URL is the service, its token the service's, TLS trusted
through ``SSL_CERT_FILE``. The model behind the service is the scripted one."""

import json

import pytest
from support.serve_process import ServeProcess, create_token, ctxmodes_run_against

pytestmark = pytest.mark.slow


def test_a_codex_transport_model_runs_through_the_service(tmp_path, tls):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"model": "probe-model", "responses": [{"text": "served answer"}]})
    )
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    try:
        run, _ = ctxmodes_run_against(
            service, token, "probe-model", tmp_path / "run", "--mode", "off", "say hi"
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
