"""The arena's data directory: its own Redis's files, the secrets it generates on first run and
the settings file the other commands find the arena by.

Running the arena again with the same directory reuses everything: the data, the Fernet key
that encrypts the bots' signing secrets, the replay signing key and the operator token.

Everything the arena keeps there is its owner's only: the bots' contacts and endpoints, live
Play hands and embargoed logs are in Redis's files, the archive and the logs, and every file
holding a secret or a token is written 0600. :meth:`DataDir.make_private` sets the umask that
keeps it so for every file and directory made from then on, by the run command and every
process it starts (Redis's own files too), and takes group's and others' permissions off what
an older version left open.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet

from arena.settings import PRIVATE_UMASK, SETTINGS_FILE, write_private
from replays.integrity import generate_key, private_key_pem

KEPT = (
    "redis", "logs", "archive", SETTINGS_FILE, "demo-bots.json", "operator-token",
    "redis-password", "secret.key", "replay-key.pem",
)  # fmt: skip
"""What the arena keeps in its data directory (``archive``: the default archive's place)."""


@dataclass(frozen=True)
class DataDir:
    path: Path

    def make_private(self) -> list[Path]:
        """The data directory (made if need be) and everything the arena keeps in it
        (:data:`KEPT`) made its owner's only, and the process's umask set so that it stays so
        (see the module's doc); the paths whose permissions were taken away, in order."""
        os.umask(PRIVATE_UMASK)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        return restrict([self.path], recursive=False) + restrict(self.path / n for n in KEPT)

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


def private_directory(path: Path) -> list[Path]:
    """``path`` (made if need be) and everything in it made its owner's only, and the umask
    set so that what this process and its children make there stays so; the paths whose
    permissions were taken away."""
    os.umask(PRIVATE_UMASK)
    path.mkdir(parents=True, exist_ok=True)
    return restrict([path])


def restrict(paths: Iterable[Path], *, recursive: bool = True) -> list[Path]:
    """Take group's and others' permissions off each of ``paths`` that exists, and off what is
    under it (unless not ``recursive``); a symbolic link is left alone, and not followed. The
    paths changed, in order."""
    changed = []
    for path in _walk(paths, recursive=recursive):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & PRIVATE_UMASK:
            continue
        path.chmod(stat.S_IMODE(mode) & ~PRIVATE_UMASK)
        changed.append(path)
    return changed


def _walk(paths: Iterable[Path], *, recursive: bool) -> Iterator[Path]:
    for path in paths:
        if not path.exists() or path.is_symlink():
            continue
        yield path
        if recursive and path.is_dir():
            for parent, directories, files in os.walk(path):
                for name in sorted(directories) + sorted(files):
                    yield Path(parent, name)
