"""Vertex AI with Application Default Credentials, over real loopback sockets: the token
comes from the credentials file's token endpoint through google-auth, is sent as a bearer
token with the quota project, is kept until it expires, and the request goes to the
project's regional endpoint (redirected to the loopback server, as the oracle redirects
Pi's)."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from support.provider_cases import RedirectingTransport
from support.wire_server import Reply, WireServer

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import stream_function
from ctxmodes.providers.apis.google_vertex import request_url
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions

ANSWER = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"OK"}],"role":"model"},'
    b'"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,'
    b'"candidatesTokenCount":1,"totalTokenCount":4},"responseId":"resp-1"}\r\n\r\n'
)
TOKEN = json.dumps({"access_token": "ya29.loopback", "expires_in": 3600, "token_type": "Bearer"})
MODEL = ModelSpec.model_validate(
    {
        "id": "gemini-2.5-flash",
        "api": "google-vertex",
        "provider": "google-vertex",
        "baseUrl": "https://{location}-aiplatform.googleapis.com",
        "reasoning": True,
        "contextWindow": 1048576,
        "maxTokens": 65536,
    }
)


def _credentials(tmp_path: Path, token_uri: str) -> Path:
    path = tmp_path / "adc.json"
    path.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "client-id.apps.googleusercontent.com",
                "client_secret": "client-secret",
                "refresh_token": "1//refresh-loopback",
                "quota_project_id": "quota-project",
                "token_uri": token_uri,
            }
        )
    )
    return path


def _ask(server: WireServer, credentials: Path, text: str) -> dict[str, object]:
    seam = HttpSeam(transport=RedirectingTransport(server.base_url))
    options = StreamOptions(
        env={
            "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
            "GOOGLE_CLOUD_PROJECT": "oracle-project",
            "GOOGLE_CLOUD_LOCATION": "us-central1",
        }
    )
    context = PiContext(None, [{"role": "user", "content": text, "timestamp": 1}])
    call = CallContext(seam=seam, signal=AbortController().signal)
    try:
        return stream_function("google-vertex")(MODEL, context, options, call)
    finally:
        seam.close()


def test_adc_token_authorises_the_regional_endpoint_and_is_kept(tmp_path):
    replies = [
        Reply([TOKEN.encode()], headers={"content-type": "application/json"}),
        Reply([ANSWER]),
        Reply([ANSWER]),
    ]
    with WireServer(replies) as server:
        credentials = _credentials(tmp_path, f"{server.base_url}/token")
        first = _ask(server, credentials, "Reply with OK")
        second = _ask(server, credentials, "Again")
    assert first["stopReason"] == "stop", first.get("errorMessage")
    assert first["content"] == [{"type": "text", "text": "OK"}]
    assert second["stopReason"] == "stop", second.get("errorMessage")
    token_request, model_request, again = server.requests
    form = urllib.parse.parse_qs(token_request["body"].decode())
    assert token_request["path"] == "/token"
    assert form["grant_type"] == ["refresh_token"]
    assert form["refresh_token"] == ["1//refresh-loopback"]
    assert model_request["path"] == (
        "/v1/projects/oracle-project/locations/us-central1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    headers = {name.lower(): value for name, value in model_request["headers"].items()}
    assert headers["authorization"] == "Bearer ya29.loopback"
    assert headers["x-goog-user-project"] == "quota-project"
    assert "x-goog-api-key" not in headers
    assert again["path"] == model_request["path"]  # the token was kept: no second refresh


def test_a_refused_refresh_is_the_message_and_nothing_is_sent(tmp_path):
    refused = json.dumps({"error": "invalid_grant", "error_description": "Token has been expired"})
    replies = [Reply([refused.encode()], status=400, headers={"content-type": "application/json"})]
    with WireServer(replies) as server:
        credentials = _credentials(tmp_path, f"{server.base_url}/token")
        message = _ask(server, credentials, "Reply with OK")
    assert message["stopReason"] == "error"
    assert "invalid_grant" in str(message["errorMessage"])
    assert [request["path"] for request in server.requests] == ["/token"]


@pytest.mark.slow  # google-auth looks for credentials everywhere, the metadata server too
def test_no_credentials_is_pis_message(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # nothing listens: not on GCE
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    with WireServer([]) as server:
        seam = HttpSeam(transport=RedirectingTransport(server.base_url))
        options = StreamOptions(
            env={"GOOGLE_CLOUD_PROJECT": "oracle-project", "GOOGLE_CLOUD_LOCATION": "global"}
        )
        context = PiContext(None, [{"role": "user", "content": "hi", "timestamp": 1}])
        call = CallContext(seam=seam, signal=AbortController().signal)
        message = stream_function("google-vertex")(MODEL, context, options, call)
        seam.close()
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Could not load the default credentials.")
    assert server.requests == []


def test_the_endpoint_follows_the_location_as_google_genai_builds_it():
    path = "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    project = "projects/p/locations"
    assert request_url(MODEL, ("p", "us-central1")) == (
        f"https://us-central1-aiplatform.googleapis.com/v1/{project}/us-central1/{path}"
    )
    assert request_url(MODEL, ("p", "global")) == (
        f"https://aiplatform.googleapis.com/v1/{project}/global/{path}"
    )
    assert request_url(MODEL, ("p", "eu")) == (
        f"https://aiplatform.eu.rep.googleapis.com/v1/{project}/eu/{path}"
    )
    assert request_url(MODEL, None) == f"https://aiplatform.googleapis.com/v1/{path}"
    proxy = MODEL.model_copy(update={"base_url": "https://proxy.example/vertex"})
    assert request_url(proxy, ("p", "us-central1")) == f"https://proxy.example/vertex/v1/{path}"
    versioned = MODEL.model_copy(update={"base_url": "https://proxy.example/v1beta1/x"})
    assert request_url(versioned, None) == f"https://proxy.example/v1beta1/x/{path}"
    tuned = MODEL.model_copy(update={"id": "projects/p/locations/l/endpoints/7"})
    assert request_url(tuned, None).startswith(
        "https://aiplatform.googleapis.com/v1/projects/p/locations/l/endpoints/7:"
    )
