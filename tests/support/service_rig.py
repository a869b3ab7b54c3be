"""A running ``ctxmodes serve`` for tests: TLS material made per run, the service on a
loopback port the OS chooses (in this process, on a thread of its own, or as a real
``ctxmodes serve`` process), and a small HTTPS client that speaks its wire."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import ssl
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider

CODEX_PATH = "/backend-api/codex"


@dataclass(frozen=True)
class TlsFiles:
    ca: Path
    cert: Path
    key: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.cert), str(self.key))
        return context


def make_tls(directory: Path) -> TlsFiles:
    """A private CA and a certificate for 127.0.0.1 and localhost signed by it."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ctxmodes test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[dict[str, Any]]:
        """The SSE events of a ``/responses`` answer, in order."""
        found = []
        for block in self.body.decode().split("\n\n"):
            data = [line[6:] for line in block.splitlines() if line.startswith("data: ")]
            if data:
                found.append(json.loads("\n".join(data)))
        return found


class ServiceClient:
    """HTTPS requests to one service, as one account."""

    def __init__(self, base: str, tls: TlsFiles, token: str | None) -> None:
        self.base = base
        self._context = tls.client_context()
        self.token = token

    def as_token(self, token: str | None) -> ServiceClient:
        clone = ServiceClient.__new__(ServiceClient)
        clone.base, clone._context, clone.token = self.base, self._context, token
        return clone

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        all_headers = dict(headers or {})
        if self.token is not None:
            all_headers.setdefault("Authorization", f"Bearer {self.token}")
        request = urllib.request.Request(
            self.base + path, data=body, headers=all_headers, method=method
        )
        try:
            with urllib.request.urlopen(request, context=self._context, timeout=60) as answer:
                return Reply(answer.status, dict(answer.headers), answer.read())
        except urllib.error.HTTPError as error:
            return Reply(error.code, dict(error.headers), error.read())

    def post_json(self, path: str, value: Any, headers: dict[str, str] | None = None) -> Reply:
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        return self.request("POST", path, json.dumps(value).encode(), all_headers)


class InProcessService:
    """The service app on 127.0.0.1 (OS-chosen port, TLS), its loop on a thread: the event
    loop ``ctxmodes serve`` runs on."""

    def __init__(self, engine: Any, provider: Any, tls: TlsFiles, **options: Any) -> None:
        from aiohttp import web

        from ctxmodes_remote.service.app import ServiceApp
        from ctxmodes_remote.service.server import loop_factory

        self.engine = engine
        self._loop = loop_factory()()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._runner = ServiceApp(engine, provider, **options).runner()

        async def start() -> int:
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=tls.server_context())
            await site.start()
            return int(self._runner.addresses[0][1])

        self.port = asyncio.run_coroutine_threadsafe(start(), self._loop).result(30)
        self.base = f"https://127.0.0.1:{self.port}{CODEX_PATH}"

    def close(self) -> None:
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


# -- the service with a scripted upstream, as the tests drive it ------------------------------

ENCRYPTED = {"x-openai-encrypted-tool-arguments": "true"}
ENCRYPTED_OPERATIONS = {
    ("history", "search_contents"),
    ("notes", "search_contents"),
    ("notes", "append_to_file"),
    ("notes", "write_file"),
}


class RecordingProvider(ScriptedProvider):
    """The scripted model, keeping every request it was sent (what the upstream saw)."""

    def __init__(self, script):
        super().__init__(script)
        self.requests = []

    def stream(self, request, signal):
        self.requests.append(request)
        return super().stream(request, signal)


def turn_headers(session_id, window_id, agent="/root"):
    metadata = {
        "session_id": session_id,
        "thread_id": session_id,
        "agent_name": agent,
        "context_window_id": window_id,
        "window_id": f"{session_id}:0",
        "request_kind": "turn",
        "history_ingest_requested": True,
    }
    return {"x-codex-turn-metadata": json.dumps(metadata), "Accept": "text/event-stream"}


class Service:
    """One running service and what a test needs around it."""

    def __init__(
        self, tmp_path, tls, responses, *, master_keys=None, storage=None, provider=None, **options
    ):
        from ctxmodes_remote.service.accounts import create_token
        from ctxmodes_remote.service.crypto import KeyRing
        from ctxmodes_remote.service.engine import ServiceEngine
        from ctxmodes_remote.service.sqlite_storage import SqliteStorage

        self.tmp_path = tmp_path
        self.tls = tls
        self.storage = storage or SqliteStorage.in_directory(tmp_path / "data")
        self.keyring = KeyRing(master_keys or [b"k" * 32])
        self.engine = ServiceEngine(self.storage, self.keyring)
        self.provider = provider or RecordingProvider(
            Script.model_validate({"responses": responses})
        )
        issued = create_token(self.storage, "alice")
        self.alice = issued.account
        other = create_token(self.storage, "bob")
        self.bob = other.account
        self.server = InProcessService(self.engine, self.provider, tls, **options)
        self.client = ServiceClient(self.server.base, tls, issued.token)
        self.bob_client = self.client.as_token(other.token)

    def seal(self, account, text):
        return self.keyring.encrypt(account.account_id, text.encode())

    def alpha(self, family, operation, arguments, *, session="s1", agent="/root", client=None):
        """POST an alpha operation as Codex does (encrypting the four encrypted fields with
        the caller's key, as the model's own ciphertext would be)."""
        client = client or self.client
        account = self.alice if client is self.client else self.bob
        body = dict(arguments)
        headers = {}
        if (family, operation) in ENCRYPTED_OPERATIONS:
            headers = ENCRYPTED
            for field in ("query", "text"):
                if isinstance(body.get(field), str):
                    body[field] = self.seal(account, body[field])
        body["context"] = {"session_id": session, "current_agent_name": agent}
        return client.post_json(f"/alpha/{family}/v2/{operation}", body, headers)

    def opened(self, reply, account=None):
        """The plaintext result inside an ``encrypted_output`` answer."""
        assert reply.status == 200, reply.body
        answer = reply.json()
        assert set(answer) == {"encrypted_output"}
        assert answer["encrypted_output"].startswith("gAAAAA")
        plaintext = self.keyring.decrypt(
            (account or self.alice).account_id, answer["encrypted_output"]
        )
        return json.loads(plaintext)

    def call(self, family, operation, arguments, **kwargs):
        return self.opened(self.alpha(family, operation, arguments, **kwargs))

    def responses(self, body, headers, client=None):
        return (client or self.client).post_json("/responses", body, headers)

    def close(self):
        self.server.close()
