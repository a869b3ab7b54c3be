"""The service's Prometheus metrics: requests, latency and errors per operation.

Each app owns its registry (no process-global state), so two services in one process, as in
tests, count apart. Labels name routes and operations only, never an account or a session.

A request is counted in plain numbers of the app's own (it is answered on the event loop, one
at a time: no lock), which become Prometheus families only when ``/metrics`` is read: the
client library's counters and histograms take a lock and look their labels up on every
update, a measurable part of a cheap call.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Hashable, Iterator
from typing import TypeVar

from prometheus_client import CONTENT_TYPE_LATEST as CONTENT_TYPE
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

__all__ = ["CONTENT_TYPE", "ServiceMetrics"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
#: The buckets' ``le`` labels, as the client library writes them.
_BUCKET_LABELS = (*(repr(bound) for bound in _LATENCY_BUCKETS), "+Inf")
REQUESTS = "ctxmodes_serve_requests"
LATENCY = "ctxmodes_serve_request_seconds"
ERRORS = "ctxmodes_serve_errors"
_K = TypeVar("_K", bound=Hashable)


class _Latency:
    """One operation's latency histogram: a count per bucket (the last one past every
    bound), their sum, and when it was first observed."""

    __slots__ = ("buckets", "created", "total")

    def __init__(self) -> None:
        self.buckets = [0] * (len(_LATENCY_BUCKETS) + 1)
        self.total = 0.0
        self.created = time.time()


def _count(counters: dict[_K, list[float]], key: _K) -> None:
    """One more for ``key``, whose count starts now if it is new."""
    counted = counters.get(key)
    if counted is None:
        counted = counters[key] = [0, time.time()]
    counted[0] += 1


class ServiceMetrics(Collector):
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        #: Per (operation, status) and per operation: the count and when it began.
        self._requests: dict[tuple[str, int], list[float]] = {}
        self._errors: dict[str, list[float]] = {}
        self._latency: dict[str, _Latency] = {}
        self.registry.register(self)

    def observe(self, operation: str, status: int, seconds: float) -> None:
        _count(self._requests, (operation, status))
        latency = self._latency.get(operation)
        if latency is None:
            latency = self._latency[operation] = _Latency()
        # A bucket's bound is inclusive, as Prometheus has it.
        latency.buckets[bisect_left(_LATENCY_BUCKETS, seconds)] += 1
        latency.total += seconds
        if status >= 500:
            _count(self._errors, operation)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            REQUESTS,
            "Requests answered, by operation and HTTP status.",
            labels=("operation", "status"),
        )
        for (operation, status), (count, created) in self._requests.items():
            requests.add_metric((operation, str(status)), count, created)
        yield requests
        latency = HistogramMetricFamily(
            LATENCY,
            "Time to answer (to the end of the stream for /responses), by operation.",
            labels=("operation",),
        )
        for operation, histogram in self._latency.items():
            cumulative, buckets = 0, []
            for label, count in zip(_BUCKET_LABELS, histogram.buckets, strict=True):
                cumulative += count
                buckets.append((label, float(cumulative)))
            latency.add_metric((operation,), buckets, histogram.total)
            latency.samples.append(
                Sample(f"{LATENCY}_created", {"operation": operation}, histogram.created)
            )
        yield latency
        errors = CounterMetricFamily(
            ERRORS,
            "Requests that failed on the service's side (5xx), by operation.",
            labels=("operation",),
        )
        for operation, (count, created) in self._errors.items():
            errors.add_metric((operation,), count, created)
        yield errors
