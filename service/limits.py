"""Rate limits (flask-limiter on the arena's Redis): registrations and new human games are limited
per client address, endpoint changes per bot owner; and how many endpoint handshakes one web
process runs at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from service.auth import sent_token
from service.context import arena
from service.errors import ApiError
from workers.store import hash_token

limiter = Limiter(key_func=get_remote_address, strategy="fixed-window", headers_enabled=True)


def register_limit() -> str:
    """The configured registration limit (read per request, so each app can have its own)."""
    return arena().config.register_limit


def play_limit() -> str:
    """The configured limit on starting human games."""
    return arena().config.play_limit


def endpoint_check_limit() -> str:
    """The configured limit on a bot owner's endpoint changes."""
    return arena().config.endpoint_check_limit


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
        raise ApiError(
            503, f"{size} endpoint checks are already in progress here: try again in a few seconds"
        )
    try:
        yield
    finally:
        slots.release()
