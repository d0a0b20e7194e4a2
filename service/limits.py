"""Rate limits (flask-limiter on the arena's Redis): registrations, new human games, log
verifications and the expensive public reads are limited per client address, endpoint changes
per bot owner; a client over a limit is held before its ``429``; the limit's headers, which
never turn an answer into a ``500`` when Redis goes away; and how many endpoint handshakes one
web process runs at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, Response, current_app, has_app_context, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address
from gevent import monkey
from limits.storage import Storage
from limits.strategies import RateLimiter

from arena.errors import UNAVAILABLE
from arena.store import hash_token
from service.auth import is_operator, sent_token
from service.context import arena
from service.smorest import abort


def hold_breach(limit: RequestLimit) -> None:
    """Hold a client over a limit for ``breach_hold_s`` before its ``429``, when the web process
    is event-driven. A flood that does not back off would otherwise be answered as fast as it
    asks, and a ``429`` costs about what a stored answer does: held, each of its connections
    sends one request a second, and waiting costs a greenlet, not the CPU. A thread-per-request
    server would give a thread to each held request, so there it answers at once."""
    if cooperative():
        time.sleep(arena().config.breach_hold_s)


def cooperative() -> bool:
    """Whether this process runs on gevent's event loop (the Procfile's web workers)."""
    return bool(monkey.is_module_patched("time"))


class AppLimiter(Limiter):
    """flask-limiter's ``Limiter``, counting in the Redis of the app that serves the request.

    A ``Limiter`` keeps one storage, that of the last app it was given (``init_app``), while the
    routes' limits are declared once, on this module's limiter, when the blueprints are
    imported: a process with two apps (a test's, or an app made again after a settings change)
    would count the first one's requests in the second one's Redis, and answer them 503 once
    that Redis is gone. Each app keeps its own storage and strategy here."""

    _SLOT = "gongzhu.limits"
    _last: tuple[Storage | None, RateLimiter | None]
    """The storage and strategy of the app given last, for use outside a request."""

    @property
    def _storage(self) -> Storage | None:
        return self._own()[0]

    @_storage.setter
    def _storage(self, storage: Storage | None) -> None:
        self._last = (storage, None)

    @property
    def _limiter(self) -> RateLimiter | None:
        return self._own()[1]

    @_limiter.setter
    def _limiter(self, limiter: RateLimiter | None) -> None:
        self._last = (self._last[0], limiter)

    def _own(self) -> tuple[Storage | None, RateLimiter | None]:
        if has_app_context() and self._SLOT in current_app.extensions:
            own: tuple[Storage | None, RateLimiter | None] = current_app.extensions[self._SLOT]
            return own
        return self._last

    def init_app(self, app: Flask) -> None:
        super().init_app(app)
        app.extensions[self._SLOT] = self._last


limiter = AppLimiter(
    key_func=get_remote_address,
    strategy="fixed-window",
    headers_enabled=False,  # written by limit_headers
    on_breach=hold_breach,
)


def init_limits(app: Flask) -> None:
    """The limiter on ``app``, and the limit's headers on each limited answer."""
    limiter.init_app(app)
    app.after_request(limit_headers)


def limit_headers(response: Response) -> Response:
    """The request's limit in its answer: ``X-RateLimit-Limit``, ``-Remaining`` and ``-Reset``
    (a Unix time), and on a ``429`` ``Retry-After``, read back from Redis after the route.

    When Redis has gone meanwhile the answer stands as the route made it, without them
    (flask-limiter's own headers raised, and made a ``500`` of it): a ``503`` stays a ``503``
    (the route met Redis gone), a ``429`` gets its limit's whole window as ``Retry-After``, and
    an answer the route completed is not taken back (a client would send its registration
    again)."""
    current = limiter.current_limit
    if current is None:
        return response
    try:
        reset_at, remaining = current.reset_at, current.remaining
    except UNAVAILABLE:
        if response.status_code == 429:
            response.headers["Retry-After"] = str(current.limit.get_expiry())
        return response
    response.headers["X-RateLimit-Limit"] = str(current.limit.amount)
    response.headers["X-RateLimit-Remaining"] = str(remaining)
    response.headers["X-RateLimit-Reset"] = str(reset_at)
    if response.status_code == 429:
        response.headers["Retry-After"] = str(max(1, int(reset_at - time.time())))
    return response


def register_limit() -> str:
    """The configured registration limit (read per request, so each app can have its own)."""
    return arena().config.register_limit


def play_limit() -> str:
    """The configured limit on starting human games."""
    return arena().config.play_limit


def verify_limit() -> str:
    """The configured limit on verifications of a match's log."""
    return arena().config.verify_limit


def read_limit() -> str:
    """The configured limit on a client address's expensive public reads (empty: none)."""
    return arena().config.read_limit


def too_many_reads() -> str:
    """The message of the expensive reads' ``429``."""
    return (
        f"too many replays, divergences, head-to-heads and hints from this address (at most "
        f"{read_limit()}, counted together): try again in the seconds Retry-After says"
    )


expensive_read = limiter.shared_limit(
    read_limit, scope="expensive-reads", exempt_when=is_operator, error_message=too_many_reads
)
"""The per-address limit of the public reads that cost the arena most (a replay and its page,
a divergence and its page, head-to-head, a hint), one count for all of them: a client flooding
them cannot take the web processes from everyone else (``python -m benchmarks.flood``)."""
EXPENSIVE_READS = (
    "too many replays, divergences, head-to-heads and hints from this address (one count for "
    "them all, GONGZHU_READ_LIMIT): wait Retry-After seconds"
)
"""The ``429`` of :data:`expensive_read`, as the OpenAPI describes it."""


def endpoint_check_limit() -> str:
    """The configured limit on a bot owner's endpoint changes."""
    return arena().config.endpoint_check_limit


def stream_connect_limit() -> str:
    """The configured limit on a pull bot's stream connections."""
    return arena().config.stream_connect_limit


def gauntlet_limit() -> str:
    """The configured limit on the gauntlets a bot's owner starts."""
    return arena().config.gauntlet_limit


def dispute_limit() -> str:
    """The configured limit on the disputes a bot's owner files."""
    return arena().config.dispute_limit


def owner_key() -> str:
    """Whose request it is: the bearer token's hash (never the token), else the address."""
    token = sent_token()
    return get_remote_address() if token is None else "owner:" + hash_token(token)


def changes_no_endpoint() -> bool:
    """A PATCH that does not change the endpoint costs no handshake: not counted."""
    body = request.get_json(silent=True)
    return not (isinstance(body, dict) and "endpoint" in body)


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()
HANDSHAKE_WAIT_S = 0.5
"""How long a request waits for a free handshake slot before it is answered 503."""


@contextmanager
def handshake_slot() -> Iterator[None]:
    """One of the process's ``handshakes_at_once`` slots for an endpoint handshake, or a 503:
    a flood of slow endpoints cannot pile up handshakes in the web process."""
    size = arena().config.handshakes_at_once
    with _SLOTS_LOCK:
        slots = _SLOTS.setdefault(size, threading.BoundedSemaphore(size))
    if not slots.acquire(timeout=HANDSHAKE_WAIT_S):
        abort(
            503,
            message=f"{size} endpoint checks are already in progress here: try again in a few "
            "seconds",
        )
    try:
        yield
    finally:
        slots.release()
