"""A bounded load run against one or more running services: concurrent sessions mixing
notes writes, reads and searches and ``/responses`` streams, with every answer checked.

Used by the load test and the load benchmark, and usable against a deployment. Each session
belongs to one of the given accounts and talks to one of the given service addresses (as a
load balancer would place it); when its service stops answering it moves on to the next one.
Every result is opened with the session's own account key and must be the session's own
data: anything else counts as an isolation failure. Acknowledged writes are remembered, and
:func:`verify_writes` reads each one back afterwards.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import aiohttp

from ctxmodes_remote.service.crypto import CiphertextError, KeyRing

ENCRYPTED = {"x-openai-encrypted-tool-arguments": "true"}
FILES_PER_SESSION = 5


@dataclass(frozen=True, slots=True)
class LoadAccount:
    token: str
    account_id: str


@dataclass
class WriteLog:
    acknowledged: str | None = None
    unanswered: list[str] = field(default_factory=list)

    def accepts(self, content: str | None) -> bool:
        return content == self.acknowledged or content in self.unanswered


@dataclass
class LoadReport:
    duration_s: float = 0.0
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    isolation_failures: int = 0
    #: ``(account, session, path)`` → the last acknowledged text and the texts sent after
    #: it without an answer: afterwards the file must hold one of them.
    writes: dict[tuple[str, str, str], WriteLog] = field(default_factory=dict)

    def record(self, kind: str, started: float) -> None:
        self.latencies_ms.setdefault(kind, []).append((time.perf_counter() - started) * 1000)

    @property
    def operations(self) -> int:
        return sum(len(values) for values in self.latencies_ms.values())


class _Session:
    def __init__(
        self,
        number: int,
        account: LoadAccount,
        bases: Sequence[str],
        keyring: KeyRing,
        http: aiohttp.ClientSession,
        report: LoadReport,
    ) -> None:
        self.number = number
        self.account = account
        self.bases = list(bases)
        self.base_index = number % len(bases)
        self.keyring = keyring
        self.http = http
        self.report = report
        self.session_id = f"load-{account.account_id}-{number}"
        self.context = {"session_id": self.session_id, "current_agent_name": "/root"}
        self.headers = {"Authorization": f"Bearer {account.token}"}
        self.marker = f"{account.account_id}/{self.session_id}/"

    @property
    def base(self) -> str:
        return self.bases[self.base_index]

    def _seal(self, text: str) -> str:
        return self.keyring.encrypt(self.account.account_id, text.encode())

    def _open(self, answer: object) -> dict[str, object] | None:
        if not isinstance(answer, dict) or not isinstance(answer.get("encrypted_output"), str):
            return None
        try:
            value = json.loads(
                self.keyring.decrypt(self.account.account_id, answer["encrypted_output"])
            )
        except CiphertextError:
            self.report.isolation_failures += 1
            return None
        return value if isinstance(value, dict) else None

    async def _alpha(self, path: str, body: dict[str, object], encrypted: bool) -> object:
        headers = {**self.headers, **(ENCRYPTED if encrypted else {})}
        async with self.http.post(
            f"{self.base}/alpha/{path}", json={**body, "context": self.context}, headers=headers
        ) as reply:
            if reply.status != 200:
                raise _Failed(f"{path} {reply.status}")
            return await reply.json()

    async def write(self, step: int) -> None:
        path = f"f{step % FILES_PER_SESSION}.md"
        text = f"{self.marker}{step}"
        key = (self.account.account_id, self.session_id, path)
        log = self.report.writes.setdefault(key, WriteLog())
        log.unanswered.append(text)
        answer = await self._alpha(
            "notes/v2/write_file", {"path": path, "text": self._seal(text)}, True
        )
        if self._open(answer) is not None:
            log.acknowledged = text
            log.unanswered.clear()

    async def read(self, step: int) -> None:
        path = f"f{step % FILES_PER_SESSION}.md"
        result = self._open(await self._alpha("notes/v2/read_file", {"path": path}, False))
        file = result.get("file") if result else None
        if isinstance(file, dict) and not str(file.get("content", "")).startswith(self.marker):
            self.report.isolation_failures += 1

    async def search(self, step: int) -> None:
        result = self._open(
            await self._alpha("notes/v2/search_contents", {"query": self._seal("/")}, True)
        )
        files = result.get("files") if result else None
        for found in files if isinstance(files, list) else []:
            for match in found.get("matches", []):
                if not str(match.get("line", "")).startswith(self.marker):
                    self.report.isolation_failures += 1

    async def respond(self, step: int) -> None:
        metadata = {
            "session_id": self.session_id,
            "agent_name": "/root",
            "context_window_id": f"w-{self.session_id}",
        }
        body = {
            "input": [
                {
                    "type": "message",
                    "id": f"msg_{self.number}_{step}",
                    "role": "user",
                    "content": [{"type": "input_text", "text": f"{self.marker}turn {step}"}],
                }
            ]
        }
        headers = {**self.headers, "x-codex-turn-metadata": json.dumps(metadata)}
        async with self.http.post(f"{self.base}/responses", json=body, headers=headers) as reply:
            if reply.status != 200:
                raise _Failed(f"responses {reply.status}")
            text = await reply.text()
        if '"type":"response.completed"' not in text:
            raise _Failed("responses ended without response.completed")

    async def run(self, deadline: float) -> None:
        operations: tuple[tuple[str, Callable[[int], Awaitable[None]]], ...] = (
            ("notes.write_file", self.write),
            ("notes.read_file", self.read),
            ("notes.search_contents", self.search),
            ("responses", self.respond),
        )
        step = 0
        while time.perf_counter() < deadline:
            kind, operation = operations[step % len(operations)]
            started = time.perf_counter()
            try:
                await operation(step)
                self.report.record(kind, started)
            except (TimeoutError, aiohttp.ClientError, OSError, _Failed) as error:
                self.report.errors[f"{kind}: {type(error).__name__}"] += 1
                # As a load balancer would: the next attempt goes to the next service.
                self.base_index = (self.base_index + 1) % len(self.bases)
            step += 1


class _Failed(Exception):
    pass


async def run_load(
    bases: Sequence[str],
    accounts: Sequence[LoadAccount],
    keyring: KeyRing,
    *,
    sessions: int,
    duration_s: float,
    ssl_context: ssl.SSLContext | None = None,
    halfway: Callable[[], Awaitable[None]] | None = None,
) -> LoadReport:
    """Run ``sessions`` concurrent sessions for ``duration_s`` seconds; ``halfway`` (a fault
    to inject, say) is awaited once half the time has passed."""
    report = LoadReport()
    connector = aiohttp.TCPConnector(limit=0, ssl=ssl_context if ssl_context else False)
    timeout = aiohttp.ClientTimeout(total=35)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        start = time.perf_counter()
        deadline = start + duration_s
        runners = [
            _Session(n, accounts[n % len(accounts)], bases, keyring, http, report).run(deadline)
            for n in range(sessions)
        ]

        async def fault() -> None:
            if halfway is not None:
                await asyncio.sleep(duration_s / 2)
                await halfway()

        await asyncio.gather(*runners, fault())
        report.duration_s = time.perf_counter() - start
    return report


async def verify_writes(
    base: str,
    accounts: Sequence[LoadAccount],
    keyring: KeyRing,
    report: LoadReport,
    *,
    ssl_context: ssl.SSLContext | None = None,
) -> list[str]:
    """Read every acknowledged write back; the problems found (empty when none is lost)."""
    tokens = {account.account_id: account.token for account in accounts}
    problems: list[str] = []
    connector = aiohttp.TCPConnector(ssl=ssl_context if ssl_context else False)
    async with aiohttp.ClientSession(connector=connector) as http:
        for (account_id, session_id, path), log in report.writes.items():
            body = {
                "path": path,
                "context": {"session_id": session_id, "current_agent_name": "/root"},
            }
            headers = {"Authorization": f"Bearer {tokens[account_id]}"}
            async with http.post(
                f"{base}/alpha/notes/v2/read_file", json=body, headers=headers
            ) as r:
                answer = await r.json()
            file = json.loads(keyring.decrypt(account_id, answer["encrypted_output"]))["file"]
            content = file["content"] if file else None
            if not log.accepts(content):
                problems.append(f"{session_id}/{path}: {content!r}, acknowledged {log}")
    return problems


def summary(report: LoadReport) -> str:
    lines = [
        f"{report.operations} operations in {report.duration_s:.1f} s "
        f"({report.operations / max(report.duration_s, 1e-9):.0f}/s), "
        f"{sum(report.errors.values())} errors, {report.isolation_failures} isolation failures"
    ]
    for kind, values in sorted(report.latencies_ms.items()):
        ordered = sorted(values)
        p50 = ordered[len(ordered) // 2]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        lines.append(f"  {kind:24} {len(values):7} ok   p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
    for kind, count in sorted(report.errors.items()):
        lines.append(f"  error {kind}: {count}")
    return "\n".join(lines)
