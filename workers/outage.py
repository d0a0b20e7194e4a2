"""How a worker rides out a Redis outage (a restart, its data loading, a failover): every
command its processes send, the worker's heartbeats, the work horse's bookkeeping and the
matches' own reads and writes, waits for Redis and is sent again with back-off, for up to
:func:`ride_out_s`. A match that does not need Redis meanwhile (its bots answer over HTTP) goes
on as if nothing happened, and one that ends records its result once Redis answers.

A command that has waited that long raises the last connection error: the worker's loop ends,
its horse is stopped and its matches are played again (:mod:`workers.cli`). The bound stays
below the abandoned-job grace, so that a worker that waited renews its jobs' heartbeats before
any other worker's sweep could take them for abandoned and play them a second time.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from arena.config import Config
from arena.redis_client import connect

T = TypeVar("T")
BACKOFF_S = (0.05, 1.0)
"""A command is sent again after twice the first figure, doubling up to the second."""
CONNECT_TIMEOUT_S = 5.0
"""How long one attempt to connect may take (a host that does not answer at all)."""


def ride_out_s(config: Config) -> float:
    """How long a worker waits for Redis before it gives up: half the abandoned-job grace
    (``GONGZHU_ABANDONED_AFTER_S``, 30 s by default)."""
    return config.abandoned_after_s / 2


def connect_riding_out(config: Config) -> redis.Redis:
    """A client of the arena's Redis whose every command rides out an outage (see the module's
    doc)."""
    retry = RideOut(ride_out_s(config))
    return connect(config.redis_url, retry=retry, socket_connect_timeout=CONNECT_TIMEOUT_S)


class RideOut(Retry):
    """redis-py's retry policy bounded by time rather than by a count of tries: a command that
    meets a lost connection or a Redis still loading its data is sent again (after 0.1 s, then
    twice as long each time up to 1 s) until Redis answers, or until ``seconds`` have passed
    since its first failure; then the last error is raised. (redis-py retries connecting inside
    each try of a command with the same policy: that inner clock starts later and stops at most
    one back-off after the command's own, so a command gives up within ``seconds`` plus 1 s.)"""

    def __init__(self, seconds: float) -> None:
        errors = (redis.ConnectionError, redis.TimeoutError, socket.timeout)
        super().__init__(ExponentialBackoff(cap=BACKOFF_S[1], base=BACKOFF_S[0]), -1, errors)
        self.seconds = seconds

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        failures, deadline = 0, None
        while True:
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable is not None and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                now = time.monotonic()
                if deadline is None:
                    deadline = now + self.seconds
                if now >= deadline:
                    raise
                time.sleep(min(self._backoff.compute(failures), deadline - now))
