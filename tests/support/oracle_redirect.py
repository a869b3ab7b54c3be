"""Requests to a vendor's fixed host go to the oracle's canned server instead, as the oracle
redirects Pi's: the transport under test builds its real URL (an Azure resource's host, a
Vertex region's), and the server sees the same path and query."""

from __future__ import annotations

import httpx

#: The hosts the oracle redirects (its README, "Requests that pi-ai sends through fetch").
FIXED_HOSTS = frozenset(
    {
        "auth.openai.com",
        "chatgpt.com",
        "api.openai.com",
        "platform.claude.com",
        "console.anthropic.com",
        "api.anthropic.com",
        "generativelanguage.googleapis.com",
        "aiplatform.googleapis.com",
        "oauth2.googleapis.com",
        "api.mistral.ai",
    }
)
HOST_SUFFIXES = (
    ".openai.azure.com",
    ".cognitiveservices.azure.com",
    ".ai.azure.com",
    "-aiplatform.googleapis.com",
    ".amazonaws.com",
)


def redirected(host: str) -> bool:
    return host in FIXED_HOSTS or host.endswith(HOST_SUFFIXES)


class OracleRedirect(httpx.BaseTransport):
    """Sends ``https`` requests for a redirected host to ``server`` (``http://127.0.0.1:P``)."""

    def __init__(self, server: str) -> None:
        self._server = httpx.URL(server)
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "https" and redirected(request.url.host):
            request.url = request.url.copy_with(
                scheme=self._server.scheme, host=self._server.host, port=self._server.port
            )
            request.headers["host"] = f"{self._server.host}:{self._server.port}"
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()
