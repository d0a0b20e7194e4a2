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

    def replay_key(self) -> Ed25519PrivateKey:
        """The key the workers seal logs with (see :meth:`Store.replay_key`)."""
        return self.store.replay_key(self.config.replay_key_path)


def install(app: Flask, arena: Arena) -> None:
    app.extensions[EXTENSION] = arena


def arena() -> Arena:
    found: Arena = current_app.extensions[EXTENSION]
    return found


def store() -> Store:
    return arena().store
