"""The service's Prometheus metrics: requests, latency and errors per operation.

Each app owns its registry (no process-global state), so two services in one process, as in
tests, count apart. Labels name routes and operations only, never an account or a session.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["CONTENT_TYPE", "ServiceMetrics"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class ServiceMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ctxmodes_serve_requests",
            "Requests answered, by operation and HTTP status.",
            ("operation", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "ctxmodes_serve_request_seconds",
            "Time to answer (to the end of the stream for /responses), by operation.",
            ("operation",),
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "ctxmodes_serve_errors",
            "Requests that failed on the service's side (5xx), by operation.",
            ("operation",),
            registry=self.registry,
        )

        # The children of each label set, found once: labels are route and operation names
        # and statuses only, so these stay small, and a request skips the label lookup.
        self._counted: dict[tuple[str, int], Counter] = {}
        self._timed: dict[str, Histogram] = {}

    def observe(self, operation: str, status: int, seconds: float) -> None:
        counted = self._counted.get((operation, status))
        if counted is None:
            counted = self._counted[(operation, status)] = self.requests.labels(
                operation, str(status)
            )
        counted.inc()
        timed = self._timed.get(operation)
        if timed is None:
            timed = self._timed[operation] = self.latency.labels(operation)
        timed.observe(seconds)
        if status >= 500:
            self.errors.labels(operation).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
