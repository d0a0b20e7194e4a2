"""The arena's configuration: one object, read from the environment in exactly one place.

When the environment does not name the arena's Redis (``REDIS_URL``), the settings file that
``gongzhu run`` wrote in the data directory does (:mod:`arena.settings`); with neither, there
is no arena to run against and :meth:`Config.from_environment` says so: it never guesses.

The service and the workers both receive a :class:`Config` (the app factory takes one); nothing
else reads ``os.environ``. docs/OPERATIONS.md lists every variable with its default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from arena.settings import NoArenaError, arena_environment

DEFAULT_QUEUE = "arena"
DEFAULT_REGISTER_LIMIT = "10 per hour"
DEFAULT_PLAY_LIMIT = "60 per hour"
DEFAULT_SECRET_GRACE_S = 3600


class ConfigError(ValueError):
    """A configuration value that cannot be used, named with the variable that holds it."""


@dataclass(frozen=True)
class Config:
    redis_url: str = ""
    """Where the arena's data lives (``REDIS_URL``). Must run with append-only persistence."""
    secret_key: str = ""
    """A Fernet key (``GONGZHU_SECRET_KEY``) that encrypts the bots' signing secrets at rest."""
    operator_token: str = ""
    """The bearer token of the operator endpoints (``GONGZHU_OPERATOR_TOKEN``); empty: off."""
    allow_private_endpoints: bool = False
    """Accept bot endpoints on private, loopback or link-local addresses (development only)."""
    register_limit: str = DEFAULT_REGISTER_LIMIT
    """Registrations allowed per client address (flask-limiter syntax)."""
    play_limit: str = DEFAULT_PLAY_LIMIT
    """Human games a client address may start on the Play page (flask-limiter syntax)."""
    replay_key_path: Path | None = None
    """The arena's Ed25519 private key (PEM) that seals match logs."""
    queue_name: str = DEFAULT_QUEUE
    """The RQ queue tournament jobs go to."""
    secret_grace_s: int = DEFAULT_SECRET_GRACE_S
    """How long a rotated-out signing secret still signs requests (in-flight matches)."""
    handshake_timeout_s: float = 5.0
    """The whole time a registration's ``hello`` may take."""
    endpoint_check_limit: str = "10 per minute"
    """Endpoint changes (each a handshake) a bot's owner may make (flask-limiter syntax)."""
    verify_limit: str = "60 per minute"
    """Verifications of a match's log (``POST /api/matches/{id}/verify``) a client address may
    ask for (flask-limiter syntax); the operator is not limited."""
    breach_hold_s: float = 1.0
    """How long a client over a rate limit waits for its ``429`` when the web process is
    event-driven (gevent): a flood that does not back off then costs the arena a sleeping
    greenlet per connection, not the CPU. 0: answer at once."""
    handshakes_at_once: int = 8
    """Endpoint handshakes (registrations and endpoint changes) one web process runs at once;
    beyond that a request is answered 503 at once rather than wait."""
    trust_proxy_headers: int = 0
    """How many reverse proxies in front of the service set ``X-Forwarded-For``."""
    worker_ttl_s: int = 45
    """An idle worker's heartbeat lifetime; it also wakes up every ``worker_ttl_s - 15`` s."""
    job_heartbeat_s: int = 15
    """How often a busy worker renews its job's heartbeat (rq's job monitoring interval)."""
    abandoned_after_s: int = 60
    """A job whose heartbeat is this much overdue is abandoned (its worker died)."""
    maintenance_interval_s: int = 30
    """How often a worker sweeps the registries, retrying abandoned jobs."""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration in ``environ`` (default: this process's environment), completed
        from the data directory's settings file when it has no ``REDIS_URL``."""
        try:
            env = arena_environment(
                os.environ if environ is None else environ, configured_by="REDIS_URL"
            )
        except NoArenaError as error:
            raise ConfigError(str(error)) from None
        key_path = env.get("GONGZHU_REPLAY_KEY", "")
        return cls(
            redis_url=env["REDIS_URL"],
            secret_key=env.get("GONGZHU_SECRET_KEY", ""),
            operator_token=env.get("GONGZHU_OPERATOR_TOKEN", ""),
            allow_private_endpoints=_flag(env, "GONGZHU_ALLOW_PRIVATE_ENDPOINTS"),
            register_limit=env.get("GONGZHU_REGISTER_LIMIT", DEFAULT_REGISTER_LIMIT),
            play_limit=env.get("GONGZHU_PLAY_LIMIT", DEFAULT_PLAY_LIMIT),
            replay_key_path=Path(key_path) if key_path else None,
            queue_name=env.get("GONGZHU_QUEUE", DEFAULT_QUEUE),
            secret_grace_s=_number(env, "GONGZHU_SECRET_GRACE_S", DEFAULT_SECRET_GRACE_S),
            handshake_timeout_s=float(_number(env, "GONGZHU_HANDSHAKE_TIMEOUT_S", 5)),
            endpoint_check_limit=env.get("GONGZHU_ENDPOINT_CHECK_LIMIT", "10 per minute"),
            verify_limit=env.get("GONGZHU_VERIFY_LIMIT", "60 per minute"),
            breach_hold_s=_seconds(env, "GONGZHU_BREACH_HOLD_S", 1.0),
            handshakes_at_once=_number(env, "GONGZHU_HANDSHAKES_AT_ONCE", 8),
            trust_proxy_headers=_number(env, "GONGZHU_TRUSTED_PROXIES", 0),
            worker_ttl_s=_number(env, "GONGZHU_WORKER_TTL_S", 45),
            job_heartbeat_s=_number(env, "GONGZHU_JOB_HEARTBEAT_S", 15),
            abandoned_after_s=_number(env, "GONGZHU_ABANDONED_AFTER_S", 60),
            maintenance_interval_s=_number(env, "GONGZHU_MAINTENANCE_INTERVAL_S", 30),
        )


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in {"", "0", "false", "no", "off"}:
        return False
    if value in {"1", "true", "yes", "on"}:
        return True
    raise ConfigError(f"{name} must be 1/true/yes/on or 0/false/no/off, not {value!r}")


def _number(env: Mapping[str, str], name: str, default: int) -> int:
    value = env.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit():
        raise ConfigError(f"{name} must be a whole number ≥ 0, not {value!r}")
    return int(value)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = env.get(name, "").strip()
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 60:
        raise ConfigError(f"{name} must be a number of seconds from 0 to 60, not {value!r}")
    return seconds
