"""The arena's data directory: its own Redis's files, the secrets it generates on first run and
the settings file the other commands find the arena by.

Running the arena again with the same directory reuses everything: the data, the Fernet key
that encrypts the bots' signing secrets, the replay signing key and the operator token. Every
file holding a secret or a token is readable by its owner only (0600).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet

from arena.settings import SETTINGS_FILE, write_private
from replays.integrity import generate_key, private_key_pem


@dataclass(frozen=True)
class DataDir:
    path: Path

    @property
    def redis_dir(self) -> Path:
        return self.path / "redis"

    @property
    def log_dir(self) -> Path:
        return self.path / "logs"

    @property
    def settings_path(self) -> Path:
        """The settings file the other commands find the arena by (:mod:`arena.settings`)."""
        return self.path / SETTINGS_FILE

    @property
    def demo_bots_path(self) -> Path:
        """The demo bots' ids and management tokens."""
        return self.path / "demo-bots.json"

    def secret_key_path(self) -> Path:
        """The Fernet key (``GONGZHU_SECRET_KEY``), made on first use."""
        return self._kept("secret.key", Fernet.generate_key)

    def redis_password_path(self) -> Path:
        """The password of the arena's own Redis, made on first use: no other local user can
        read or rewrite the arena's data through it."""
        return self._kept("redis-password", lambda: secrets.token_urlsafe(32).encode())

    def operator_token_path(self) -> Path:
        """The bearer token of the operator endpoints (``GONGZHU_OPERATOR_TOKEN``)."""
        return self._kept("operator-token", lambda: secrets.token_urlsafe(24).encode())

    def replay_key_path(self) -> Path:
        """The Ed25519 key that seals match logs (``GONGZHU_REPLAY_KEY``), made on first use."""
        return self._kept("replay-key.pem", lambda: private_key_pem(generate_key()))

    def _kept(self, name: str, make: Callable[[], bytes]) -> Path:
        path = self.path / name
        if not path.exists():
            write_private(path, make())
        return path
