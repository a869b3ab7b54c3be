"""Gemini's error texts as ``@google/genai`` makes them (what Pi stores as errorMessage): the
JSON of a JSON error body, any other body wrapped in an error object with the status."""

from __future__ import annotations

import httpx

from ctxmodes.providers.apis.google.call import status_message


def test_a_json_error_body_is_its_json_text() -> None:
    body = '{\n  "error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}\n}'
    response = httpx.Response(400, headers={"content-type": "application/json; charset=UTF-8"})
    assert status_message(response, body) == (
        '{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}'
    )


def test_a_proxy_page_is_wrapped_with_the_status_and_its_reason() -> None:
    response = httpx.Response(502, headers={"content-type": "text/html"})
    assert status_message(response, "<html>Bad gateway</html>") == (
        '{"error":{"message":"<html>Bad gateway</html>","code":502,"status":"Bad Gateway"}}'
    )
