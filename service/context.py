"""What a request handler reaches through the app: the configuration and the store."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from flask import Flask, current_app

from workers.config import Config
from workers.store import Store

EXTENSION = "gongzhu"


@dataclass(frozen=True)
class Arena:
    config: Config
    store: Store
    configured_key: Ed25519PrivateKey | None
    """The key that seals match logs, from ``GONGZHU_REPLAY_KEY`` (None when not set)."""

    def replay_key(self) -> Ed25519PrivateKey:
        """The key the workers seal logs with: the configured one, else the one kept in Redis."""
        return self.configured_key or self.store.replay_key()


def install(app: Flask, arena: Arena) -> None:
    app.extensions[EXTENSION] = arena


def arena() -> Arena:
    found: Arena = current_app.extensions[EXTENSION]
    return found


def store() -> Store:
    return arena().store
