"""The arena's settings file, ``arena.json`` in its data directory: what ``gongzhu run`` writes
when it starts (the arena's address, its Redis, where its secrets are), so that every other
command finds the same arena instead of guessing a port.

A command reads it from ``$GONGZHU_DATA_DIR/arena.json`` (default ``data/arena.json``) when the
environment does not configure the arena itself (no ``REDIS_URL`` for the processes, no
``GONGZHU_URL`` for the client commands). With neither, the command stops and says so.
The file is created 0600: its Redis URL carries the password.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

SETTINGS_FILE = "arena.json"
DEFAULT_DATA_DIR = "data"
PRIVATE_UMASK = 0o077
"""The umask of the arena's processes: what they make in the data directory is readable and
writable by their owner only."""


class NoArenaError(LookupError):
    """No arena is configured: neither the environment nor a data directory names one."""


@dataclass(frozen=True)
class ArenaSettings:
    url: str
    """Where the web service answers, e.g. ``http://127.0.0.1:8150``."""
    bind: str
    """gunicorn's ``--bind`` (``GONGZHU_BIND``)."""
    redis_url: str
    redis_port: int
    """The port of the arena's own Redis (``GONGZHU_REDIS_PORT``)."""
    data_dir: str
    operator_token_file: str
    """The file holding the operator token (the token itself is not in this file)."""
    secret_key_file: str
    replay_key_file: str
    redis_password_file: str | None
    """The password file of the arena's own Redis; None when ``REDIS_URL`` named another."""
    allow_private_endpoints: bool

    def environment(self) -> dict[str, str]:
        """The variables of docs/OPERATIONS.md these settings give every process of the arena."""
        env = {
            "REDIS_URL": self.redis_url,
            "GONGZHU_URL": self.url,
            "GONGZHU_BIND": self.bind,
            "GONGZHU_DATA_DIR": self.data_dir,
            "GONGZHU_REDIS_PORT": str(self.redis_port),
            "GONGZHU_SECRET_KEY": _read(self.secret_key_file),
            "GONGZHU_OPERATOR_TOKEN": _read(self.operator_token_file),
            "GONGZHU_REPLAY_KEY": self.replay_key_file,
            "GONGZHU_ALLOW_PRIVATE_ENDPOINTS": "1" if self.allow_private_endpoints else "0",
        }
        if self.redis_password_file is not None:
            env["GONGZHU_REDIS_PASSWORD"] = _read(self.redis_password_file)
        return env

    def write(self, path: Path) -> None:
        """Write the settings to ``path`` (0600), replacing what an earlier run wrote."""
        write_private(path, (json.dumps(asdict(self), indent=2) + "\n").encode())


def write_private(path: Path, content: bytes) -> None:
    """Write ``content`` to ``path`` readable by its owner only (0600), atomically: a file
    holding a token or a secret is never readable by others, not even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    temporary.replace(path)


def _read(path: str) -> str:
    return Path(path).read_text().strip()


def settings_path(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("GONGZHU_DATA_DIR") or DEFAULT_DATA_DIR) / SETTINGS_FILE


def load_settings(environ: Mapping[str, str]) -> ArenaSettings:
    """The settings of the arena whose data directory ``environ`` names, or NoArenaError."""
    path = settings_path(environ)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise NoArenaError(
            f"no arena is configured: {path} does not exist (`gongzhu run` writes it). Run the "
            "arena, or set GONGZHU_DATA_DIR to its data directory, or set the variables of "
            "docs/OPERATIONS.md (REDIS_URL for the arena's processes, GONGZHU_URL for the "
            "client commands)"
        ) from None
    except (OSError, ValueError) as error:
        raise NoArenaError(f"cannot read the arena's settings {path}: {error}") from None
    return ArenaSettings(**data)


def arena_environment(environ: Mapping[str, str], *, configured_by: str) -> dict[str, str]:
    """``environ`` when it names the arena itself (it holds ``configured_by``, e.g.
    ``REDIS_URL``), else ``environ`` completed from the data directory's settings file;
    NoArenaError when there is neither."""
    if environ.get(configured_by):
        return dict(environ)
    given = {name: value for name, value in environ.items() if value}
    return {**load_settings(environ).environment(), **given}
