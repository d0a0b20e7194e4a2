"""The arena's data directory: its own Redis's files, and the secrets it generates on first run.

Running the arena again with the same directory reuses everything: the data, the Fernet key
that encrypts the bots' signing secrets, the replay signing key and the operator token.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet

from replays.integrity import generate_key, private_key_pem


def _private_file(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(content)


@dataclass(frozen=True)
class DataDir:
    path: Path

    @property
    def redis_dir(self) -> Path:
        return self.path / "redis"

    @property
    def log_dir(self) -> Path:
        return self.path / "logs"

    def secret_key(self) -> str:
        """The Fernet key (``GONGZHU_SECRET_KEY``), made on first use."""
        return self._kept("secret.key", Fernet.generate_key).decode()

    def redis_password(self) -> str:
        """The password of the arena's own Redis, made on first use: no other local user can
        read or rewrite the arena's data through it."""
        return self._kept("redis-password", lambda: secrets.token_urlsafe(32).encode()).decode()

    def operator_token(self) -> str:
        return self._kept("operator-token", lambda: secrets.token_urlsafe(24).encode()).decode()

    def replay_key_path(self) -> Path:
        """The Ed25519 key that seals match logs (``GONGZHU_REPLAY_KEY``), made on first use."""
        self._kept("replay-key.pem", lambda: private_key_pem(generate_key()))
        return self.path / "replay-key.pem"

    def _kept(self, name: str, make: Callable[[], bytes]) -> bytes:
        path = self.path / name
        if not path.exists():
            _private_file(path, make())
        return path.read_bytes().strip()

    def environment(self, redis_url: str, *, allow_private_endpoints: bool) -> dict[str, str]:
        """The variables every process of the arena needs (see docs/OPERATIONS.md)."""
        return {
            "REDIS_URL": redis_url,
            "GONGZHU_SECRET_KEY": self.secret_key(),
            "GONGZHU_OPERATOR_TOKEN": self.operator_token(),
            "GONGZHU_REPLAY_KEY": str(self.replay_key_path()),
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1" if allow_private_endpoints else "0",
        }
