"""Google's Application Default Credentials for Vertex AI, through google-auth.

The credentials are found as Pi's google-auth-library finds them: the key file named by
``GOOGLE_APPLICATION_CREDENTIALS`` (the call's scoped environment first), else gcloud's
application-default login, else the metadata server. Their token requests go through the
call's HTTP seam (so proxies, the abort and the timeout apply) and the token is kept until
it expires.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import google.auth
import httpx
from google.auth import credentials as google_credentials
from google.auth import exceptions as google_exceptions
from google.auth import transport as google_transport

from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.options import env_value
from ctxmodes.providers.wire import StreamOptions, WireError

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
#: google-auth-library's text when no credentials are found (what Pi stores).
NO_CREDENTIALS = (
    "Could not load the default credentials. Browse to "
    "https://cloud.google.com/docs/authentication/getting-started for more information."
)
#: Token requests are short: a slow token endpoint fails the call rather than hang it.
TOKEN_TIMEOUT_S = 30.0

_lock = threading.Lock()
#: Credentials by key file (``None``: the default chain), refreshed in place.
_found: dict[str | None, google_credentials.Credentials] = {}


class _Response(google_transport.Response):
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    @property
    def data(self) -> bytes:
        return self._response.content


class HttpxRequest(google_transport.Request):
    """google-auth's transport interface over an httpx client."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **_kwargs: object,
    ) -> google_transport.Response:
        try:
            response = self._client.request(
                method,
                url,
                content=body,
                headers=dict(headers or {}),
                timeout=timeout if timeout is not None else TOKEN_TIMEOUT_S,
            )
        except httpx.HTTPError as error:
            raise google_exceptions.TransportError(str(error) or type(error).__name__) from error
        return _Response(response)


def access_headers(options: StreamOptions, call: CallContext) -> dict[str, str]:
    """``authorization`` (and ``x-goog-user-project`` for a quota project) for this call.

    :raises WireError: no credentials, or the token could not be had.
    """
    key_file = env_value(options, "GOOGLE_APPLICATION_CREDENTIALS")
    request = HttpxRequest(call.client(int(TOKEN_TIMEOUT_S * 1000)))
    try:
        with _lock:
            found = _found.get(key_file)
            if found is None:
                found = _load(key_file, request)
                _found[key_file] = found
            if not found.valid:
                found.refresh(request)
            headers: dict[str, str] = {}
            found.apply(headers)
    except google_exceptions.DefaultCredentialsError:
        raise WireError(NO_CREDENTIALS) from None
    except google_exceptions.GoogleAuthError as error:
        raise WireError(str(error)) from None
    return headers


def _load(
    key_file: str | None, request: google_transport.Request
) -> google_credentials.Credentials:
    if key_file:
        credentials, _project = google.auth.load_credentials_from_file(key_file, scopes=SCOPES)
    else:
        credentials, _project = google.auth.default(scopes=SCOPES, request=request)
    return credentials
