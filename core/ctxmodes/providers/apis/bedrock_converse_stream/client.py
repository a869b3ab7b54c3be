"""Sending a ConverseStream request as the AWS SDK for JavaScript (which Pi uses) sends it.

* Where: the model's ``baseUrl`` when it is not a standard Bedrock runtime endpoint (a
  proxy, a VPC endpoint) or no region is configured; otherwise
  ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` / ``AWS_ENDPOINT_URL``, else the region's endpoint.
  The region: the one in an inference-profile ARN, else ``AWS_REGION`` /
  ``AWS_DEFAULT_REGION``, else the endpoint's, else ``us-east-1`` (or the AWS profile's).
* How: HTTP/2 (prior knowledge on ``http://``, negotiated on TLS), as the SDK's default
  handler; HTTP/1.1 through a proxy or with ``AWS_BEDROCK_FORCE_HTTP1=1``, as Pi does.
* Who: a Bedrock API key as ``Authorization: Bearer``, else SigV4 with the AWS credential
  chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, the profile, SSO, container and
  instance roles, web identity). botocore does the SigV4 signing and finds the
  credentials: it is AWS's own implementation of both, kept in step with AWS, where a
  hand-written signer would be a security-sensitive copy. ``AWS_BEDROCK_SKIP_AUTH=1``
  signs with dummy keys for proxies that authenticate otherwise.
* Retries: the SDK's standard strategy, not Pi's setting: three attempts in all for
  throttling, 5xx answers and connection failures, each waiting a random share of
  ``2**n`` times 100 ms (500 ms when throttled, at most 20 s), each attempt announced in
  ``amz-sdk-request``.
* The answer: AWS event-stream framing, decoded by botocore's ``EventStreamBuffer`` (the
  same decoder boto3 uses, checking both CRCs), not a hand-written parser.
"""

from __future__ import annotations

import json
import platform
import random
import re
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ctxmodes.providers.apis.bedrock_converse_stream.request import setting
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import proxy_for
from ctxmodes.providers.transport.call import TERMINATED, CallContext
from ctxmodes.providers.wire import WireError

#: The SDK release Pi 0.85 ships, named in the user agent as Pi's requests name it.
SDK_VERSION: Final = "3.1048.0"
MAX_ATTEMPTS: Final = 3
DEFAULT_RETRY_BASE_MS: Final = 100
THROTTLING_RETRY_BASE_MS: Final = 500
MAX_RETRY_DELAY_MS: Final = 20_000
#: The value Pi's credential lookup gives for ambient AWS credentials (no key to send).
AUTHENTICATED: Final = "<authenticated>"
_STANDARD_ENDPOINT = re.compile(
    r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$"
)
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
THROTTLING_CODES: Final = frozenset(
    {
        "ThrottlingException",
        "ThrottledException",
        "TooManyRequestsException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "SlowDown",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
TRANSIENT_STATUSES: Final = frozenset({500, 502, 503, 504})
#: Pi's prefixes for Bedrock's modeled errors (its retry and overflow rules match them).
ERROR_PREFIXES: Final = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
DATA_RETENTION_DOCS: Final = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html"
)


class BedrockError(WireError):
    """A modeled Bedrock error (an error answer or an exception event)."""

    def __init__(
        self, name: str, message: str, status: int | None = None, request_id: str | None = None
    ) -> None:
        prefix = ERROR_PREFIXES.get(name, name)
        hint = (
            f" See {DATA_RETENTION_DOCS} for supported data retention modes."
            if re.search("data retention mode", message, re.IGNORECASE)
            else ""
        )
        super().__init__(f"{prefix}: {message}{hint}")
        self.name = name
        self.status = status
        self.request_id = request_id


@dataclass(frozen=True)
class Target:
    url: str
    region: str
    bearer: str | None
    sign: bool
    profile: str | None
    http1: bool


def _standard_region(base_url: str) -> str | None:
    host = (urllib.parse.urlsplit(base_url).hostname or "").lower()
    match = _STANDARD_ENDPOINT.match(host)
    return match.group(1) if match else None


def _profile_region(profile: str | None) -> str | None:
    import botocore.session

    session = botocore.session.Session(profile=profile)
    region = session.get_config_variable("region")
    return region if isinstance(region, str) and region else None


def resolve_target(model: ModelSpec, api_key: str | None, env: Mapping[str, str] | None) -> Target:
    """Where the request goes and how it authenticates (see the module docstring)."""
    configured = setting("AWS_REGION", env) or setting("AWS_DEFAULT_REGION", env)
    profile = (env or {}).get("AWS_PROFILE") or setting("AWS_PROFILE", None)
    ambient_profile = bool(setting("AWS_PROFILE", None))
    endpoint_region = _standard_region(model.base_url) if model.base_url else None
    explicit = endpoint_region is None or (not configured and not ambient_profile)
    arn = _ARN_REGION.match(model.id)
    if arn:
        region = arn.group(1)
    elif configured:
        region = configured
    elif endpoint_region and explicit:
        region = endpoint_region
    elif not ambient_profile:
        region = "us-east-1"
    else:
        region = _profile_region(profile) or "us-east-1"
    if explicit and model.base_url:
        endpoint = model.base_url
    else:
        endpoint = (
            setting("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", env)
            or setting("AWS_ENDPOINT_URL", env)
            or f"https://bedrock-runtime.{region}.amazonaws.com"
            + (".cn" if region.startswith("cn-") else "")
        )
    skip = setting("AWS_BEDROCK_SKIP_AUTH", env) == "1"
    key = api_key if api_key and api_key != AUTHENTICATED else None
    bearer = None if skip else key or setting("AWS_BEARER_TOKEN_BEDROCK", env)
    path = f"/model/{urllib.parse.quote(model.id, safe='')}/converse-stream"
    url = endpoint.rstrip("/") + path
    http1 = setting("AWS_BEDROCK_FORCE_HTTP1", env) == "1" or proxy_for(url) is not None
    return Target(url, region, bearer, bearer is None, profile, http1)


def user_agent() -> str:
    """The SDK's user agent, as Pi's requests carry it."""
    node = "22.19.0"
    system = f"{platform.system().lower()}#{platform.release()}"
    return (
        f"aws-sdk-js/{SDK_VERSION} ua/2.1 os/{system} lang/js md/nodejs#{node} "
        f"api/bedrock-runtime#{SDK_VERSION} m/N,E"
    )


def _credentials(target: Target, env: Mapping[str, str] | None) -> Any:
    import botocore.credentials
    import botocore.session

    if setting("AWS_BEDROCK_SKIP_AUTH", env) == "1":
        return botocore.credentials.Credentials("dummy-access-key", "dummy-secret-key")
    key_id = setting("AWS_ACCESS_KEY_ID", env)
    secret = setting("AWS_SECRET_ACCESS_KEY", env)
    scoped_profile = (env or {}).get("AWS_PROFILE")
    if key_id and secret and not scoped_profile:
        return botocore.credentials.Credentials(key_id, secret, setting("AWS_SESSION_TOKEN", env))
    credentials = botocore.session.Session(profile=target.profile).get_credentials()
    if credentials is None:
        raise WireError("Could not load credentials from any providers")
    return credentials


def _headers(
    target: Target,
    body: bytes,
    attempt: int,
    invocation: str,
    extra: Mapping[str, str | None],
    env: Mapping[str, str] | None,
) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "user-agent": user_agent(),
        "x-amz-user-agent": f"aws-sdk-js/{SDK_VERSION}",
        "amz-sdk-invocation-id": invocation,
        "amz-sdk-request": f"attempt={attempt}; max={MAX_ATTEMPTS}",
    }
    for name, value in extra.items():
        lower = name.lower()
        # SigV4 and the bearer scheme own these (Pi skips them too).
        if lower.startswith("x-amz-") or lower in ("authorization", "host") or value is None:
            continue
        headers[lower] = value
    if target.bearer is not None:
        headers["authorization"] = f"Bearer {target.bearer}"
        return headers
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=target.url, data=body, headers=headers)
    SigV4Auth(_credentials(target, env), "bedrock", target.region).add_auth(request)
    return {name.lower(): str(value) for name, value in request.headers.items()}


def _error(response: httpx.Response) -> BedrockError:
    text = response.read().decode("utf-8", "replace")
    try:
        parsed = json.loads(text) if text else {}
    except json.JSONDecodeError:
        parsed = {}
    parsed = parsed if isinstance(parsed, dict) else {}
    name = (
        response.headers.get("x-amzn-errortype", "").split(":")[0]
        or str(parsed.get("__type", "")).split("#")[-1]
        or "UnknownError"
    )
    message = parsed.get("message") or parsed.get("Message")
    request_id = response.headers.get("x-amzn-requestid")
    if not isinstance(message, str):
        body = text.strip()
        message = f"{response.status_code}: {body}" if body else name
    return BedrockError(name, message, response.status_code, request_id)


def _retry_base(error: BaseException) -> int | None:
    """The backoff base of a failure the SDK retries, or ``None`` for one it does not."""
    if isinstance(error, BedrockError):
        if error.name in THROTTLING_CODES or error.status == 429:
            return THROTTLING_RETRY_BASE_MS
        if error.status in TRANSIENT_STATUSES:
            return DEFAULT_RETRY_BASE_MS
        return None
    return DEFAULT_RETRY_BASE_MS  # a connection failure or timeout


def send(
    call: CallContext,
    target: Target,
    body: bytes,
    headers: Mapping[str, str | None],
    env: Mapping[str, str] | None,
    timeout_ms: int | None,
) -> httpx.Response:
    """POST the request until it is accepted (the SDK's retries); the body is unread.

    :raises BedrockError: the last attempt's error answer.
    :raises WireError: a connection failure after the last attempt, or the abort.
    """
    scheme = urllib.parse.urlsplit(target.url).scheme
    mode = None if target.http1 else ("prior" if scheme == "http" else "alpn")
    client = call.seam.client(timeout_ms / 1000 if timeout_ms else None, http2=mode)
    invocation = str(uuid.uuid4())
    attempt = 1
    while True:
        request = client.build_request(
            "POST",
            target.url,
            headers=_headers(target, body, attempt, invocation, headers, env),
            content=body,
        )
        if not any(name.lower() == "accept" for name in headers):
            del request.headers["accept"]  # httpx's default; the SDK sends none
        failure: BaseException
        try:
            response = client.send(request, stream=True)
        except httpx.TransportError as error:
            failure = WireError(str(error) or TERMINATED)
            failure.__cause__ = error
        else:
            if response.is_success:
                return response
            try:
                failure = _error(response)
            finally:
                response.close()
        base = _retry_base(failure)
        if call.signal.aborted or base is None or attempt >= MAX_ATTEMPTS:
            raise failure
        delay = min(MAX_RETRY_DELAY_MS, random.random() * 2 ** (attempt - 1) * base)
        if call.on_retry is not None:
            call.on_retry(attempt, delay, str(failure))
        if call.signal.wait(delay / 1000):
            raise failure
        attempt += 1


def events(response: httpx.Response) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(message type, event or exception type, payload)`` of each event-stream message.

    :raises WireError: a frame that fails its checksums or cannot be decoded.
    """
    from botocore.eventstream import EventStreamBuffer, ParserError

    buffer = EventStreamBuffer()
    for chunk in response.iter_bytes():
        buffer.add_data(chunk)
        try:
            for message in buffer:
                headers = message.headers
                kind = str(headers.get(":message-type", "event"))
                name = str(headers.get(":event-type") or headers.get(":exception-type") or "")
                payload = json.loads(message.payload) if message.payload else {}
                yield kind, name, payload if isinstance(payload, dict) else {}
        except ParserError as error:
            raise WireError(f"Invalid event stream frame: {error}") from error
