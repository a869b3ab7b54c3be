"""Retries of a request that was not accepted (pi-ai's ``retryProviderRequest``), and the
waits servers ask for.

pi-ai turns off the vendor SDKs' own retries and repeats a failed request itself, up to
``maxRetries`` times: on a connection error, 408, 409, 429 or 5xx (``x-should-retry``
decides when present), waiting what the server asks (``retry-after-ms``, ``retry-after``) —
failing at once when that is more than ``maxRetryDelayMs`` — else an exponential backoff
with jitter. The wait ends early when the call is aborted.
"""

from __future__ import annotations

import contextlib
import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping

import httpx

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.http import proxy_for
from ctxmodes.providers.wire import WireError

#: When no ``maxRetryDelayMs`` is given, a server asking for a longer wait fails at once.
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
#: The SDKs' message for a request that hit its timeout.
TIMED_OUT = "Request timed out."
#: The error pi-ai raises when the signal fired during a request or a retry wait.
REQUEST_ABORTED = "Request aborted"

#: An error answer (its body already read, as text) → the SDK's error message for it.
StatusMessage = Callable[[httpx.Response, str], str]
RetryListener = Callable[[int, float, str], None]


class RetryableError(WireError):
    """A failure the SDK-level retry may repeat: a status error or a connection error."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = dict(headers or {})
        self.body = body


def _should_retry(status: int | None, headers: Mapping[str, str]) -> bool:
    flag = headers.get("x-should-retry")
    if flag == "true":
        return True
    if flag == "false":
        return False
    if status is None:
        return True
    return status in (408, 409, 429) or status >= 500


def retry_delay_ms(
    headers: Mapping[str, str],
    retry_index: int,
    max_delay_ms: int | None,
    message: str,
    *,
    now_ms: Callable[[], float],
    jitter: Callable[[], float] = random.random,
) -> float:
    """The wait before the next attempt: the server's ``retry-after(-ms)``, else backoff.

    :raises WireError: the server asked for more than ``max_delay_ms`` (0 means no cap).
    """
    cap = DEFAULT_MAX_RETRY_DELAY_MS if max_delay_ms is None else max_delay_ms
    requested: float | None = None
    if headers.get("retry-after-ms"):
        requested = _float(headers["retry-after-ms"])
    if requested is None and headers.get("retry-after"):
        value = headers["retry-after"]
        seconds = _float(value)
        if seconds is not None:
            requested = seconds * 1000
        else:
            try:
                requested = email.utils.parsedate_to_datetime(value).timestamp() * 1000 - now_ms()
            except (TypeError, ValueError):
                requested = None
    if requested is not None:
        if cap > 0 and requested > cap:
            raise WireError(
                f"Server requested {math.ceil(requested / 1000)}s retry delay "
                f"(max: {math.ceil(cap / 1000)}s). {message}"
            )
        return float(requested)
    backoff: float = min(0.5 * 2**retry_index, 8) * 1000 * (1 - jitter() * 0.25)
    return backoff


def _float(text: str) -> float | None:
    try:
        return float(text.strip().split()[0])
    except (ValueError, IndexError):
        return None


def open_stream(
    client: httpx.Client,
    request: httpx.Request,
    signal: AbortSignal,
    *,
    status_message: StatusMessage,
    max_retries: int | None,
    max_retry_delay_ms: int | None,
    on_retry: RetryListener | None = None,
    server_delays: bool = True,
    connection_error: str = "Connection error.",
    retry_connection_errors: bool = True,
) -> httpx.Response:
    """Send ``request`` until it is accepted, retrying as pi-ai does; the body is unread.

    :param server_delays: the SDK's error carries the answer's headers, so ``Retry-After``
        and ``x-should-retry`` count (not so for ``@google/genai``).
    :param connection_error: the SDK's text for a request that got no answer, which pi-ai
        retries only when ``retry_connection_errors``.
    :raises RetryableError: the last attempt failed (status errors carry the SDK's message,
        ``status_message(response, body)``; the caller formats it).
    :raises WireError: aborted (``Request aborted``) or a retry wait over the cap.
    """
    retries = max_retries or 0
    remaining = retries
    while True:
        try:
            return _send_once(client, request, signal, status_message, connection_error)
        except RetryableError as error:
            if signal.aborted:
                raise WireError(REQUEST_ABORTED) from error
            headers = error.headers if server_delays else {}
            if (
                remaining <= 0
                or not _should_retry(error.status, headers)
                or (error.status is None and not retry_connection_errors)
            ):
                raise
            retry_index = retries - remaining
            remaining -= 1
            delay = retry_delay_ms(
                headers,
                retry_index,
                max_retry_delay_ms,
                str(error),
                now_ms=lambda: time.time() * 1000,
            )
            if on_retry is not None:
                on_retry(retry_index + 1, delay, str(error))
            if signal.wait(max(0.0, delay) / 1000):
                raise WireError(REQUEST_ABORTED) from error


def _send_once(
    client: httpx.Client,
    request: httpx.Request,
    signal: AbortSignal,
    message: StatusMessage,
    connection_error: str,
) -> httpx.Response:
    if signal.aborted:
        raise RetryableError(REQUEST_ABORTED)
    try:
        response = client.send(request, stream=True)
    except httpx.TimeoutException as error:
        raise RetryableError(TIMED_OUT) from error
    except httpx.TransportError as error:
        text = unreachable_message(str(request.url), error, connection_error)
        if is_refused(error):
            raise WireError(text) from error
        raise RetryableError(text) from error
    if response.is_success:
        return response
    try:
        body = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        body = ""
    finally:
        response.close()
    status = response.status_code
    raise RetryableError(message(response, body), status, response.headers, body)


def unreachable_message(url: str, error: BaseException, words: str) -> str:
    """What a request that got no answer failed with: a refused connection names the
    address (or the proxy) that refused it; any other failure the SDK's ``words`` (Pi's
    retry patterns match them), then the address and the cause."""
    if is_refused(error):
        return refused_message(url)
    return f"{words.removesuffix('.')}: could not reach {url} ({error})."


def refused_message(url: str) -> str:
    proxy = proxy_for(url)
    if proxy is not None:
        return (
            f"Could not connect to the proxy {proxy} for {url}: connection refused "
            "(check HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY)"
        )
    return f"Could not connect to {url}: connection refused (is the server running?)"


def is_refused(error: BaseException) -> bool:
    """Nothing listens there (a local server that is not running, a proxy that is not):
    retrying cannot help."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def server_wait_ms(headers: Mapping[str, str]) -> float | None:
    """The wait an answer asks for: ``retry-after-ms``, else ``retry-after`` (seconds or an
    HTTP date); ``None`` when it names none. ``headers`` has lower-case names."""
    if headers.get("retry-after-ms"):
        with contextlib.suppress(ValueError):
            return max(0.0, float(headers["retry-after-ms"]))
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value) * 1000)
    try:
        moment = email.utils.parsedate_to_datetime(value).timestamp() * 1000
    except (TypeError, ValueError):
        return None
    return max(0.0, moment - time.time() * 1000)


def requested_wait(error: BaseException) -> float | None:
    # The status error is the failure itself or what caused it (the SDK-level retry's).
    seen: BaseException | None = error
    while seen is not None:
        headers = getattr(seen, "headers", None)
        if isinstance(headers, Mapping):
            return server_wait_ms(headers)
        seen = seen.__cause__
    return None


def failed_status(error: BaseException) -> int | None:
    seen: BaseException | None = error
    while seen is not None:
        status = getattr(seen, "status", None)
        if isinstance(status, int):
            return status
        seen = seen.__cause__
    return None
