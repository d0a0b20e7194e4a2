"""Rate limits (flask-limiter on the arena's Redis): registrations and new human games are limited
per client address."""

from __future__ import annotations

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from service.context import arena

limiter = Limiter(key_func=get_remote_address, strategy="fixed-window", headers_enabled=True)


def register_limit() -> str:
    """The configured registration limit (read per request, so each app can have its own)."""
    return arena().config.register_limit


def play_limit() -> str:
    """The configured limit on starting human games."""
    return arena().config.play_limit
