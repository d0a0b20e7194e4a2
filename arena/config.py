"""The arena's configuration: one object, read from the environment in exactly one place.

When the environment does not name the arena's Redis (``REDIS_URL``), the settings file that
``gongzhu run`` wrote in the data directory does (:mod:`arena.settings`); with neither, there
is no arena to run against and :meth:`Config.from_environment` says so: it never guesses.

The service and the workers both receive a :class:`Config` (the app factory takes one): every
setting of the arena's processes is read here, and declared once, with its variable and default
(:func:`setting`). docs/OPERATIONS.md lists every variable with its default. (The ``gongzhu``
command reads a few variables of its own: where the data directory is, the port and password of
the arena's own Redis.)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TypeVar

from arena.redis_client import SENTINEL_SCHEME, RedisUrlError, sentinel_parts
from arena.settings import NoArenaError, arena_environment

T = TypeVar("T")
N = TypeVar("N", int, float)


def _text(env: Mapping[str, str], name: str, default: str) -> str:
    return env.get(name, default)


def _path(env: Mapping[str, str], name: str, default: Path | None) -> Path | None:
    value = env.get(name, "")
    return Path(value) if value else default


def _redis_url(env: Mapping[str, str], name: str, default: str) -> str:
    """A URL :func:`arena.redis_client.connect` can connect by (checked now, not at first use)."""
    url = env.get(name, default)
    if url.startswith(f"{SENTINEL_SCHEME}://"):
        try:
            sentinel_parts(url)
        except RedisUrlError as error:
            raise ConfigError(f"{name}: {error}") from None
    return url


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"0", "false", "no", "off"}:
        return False
    if value in {"1", "true", "yes", "on"}:
        return True
    raise ConfigError(f"{name} must be 1/true/yes/on or 0/false/no/off, not {value!r}")


def _number(env: Mapping[str, str], name: str, default: N) -> N:
    value = env.get(name, "").strip()
    if not value:
        return default
    if not value.isdigit():
        raise ConfigError(f"{name} must be a whole number ≥ 0, not {value!r}")
    return type(default)(int(value))


def _decimal(unit: str, most: float) -> Callable[[Mapping[str, str], str, float], float]:
    """A reader of a number of ``unit`` from 0 to ``most``."""

    def read(env: Mapping[str, str], name: str, default: float) -> float:
        value = env.get(name, "").strip()
        if not value:
            return default
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0 <= number <= most:
            raise ConfigError(
                f"{name} must be a number of {unit} from 0 to {most:g}, not {value!r}"
            )
        return number

    return read


_seconds = _decimal("seconds", 60)
_milliseconds = _decimal("milliseconds", 1000)


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    number = _number(env, name, default)
    if number < 1:
        raise ConfigError(f"{name} must be at least 1, not {number}")
    return number


def _heartbeat(env: Mapping[str, str], name: str, default: float) -> float:
    seconds = _seconds(env, name, default)
    if seconds < 0.1:
        raise ConfigError(f"{name} must be at least 0.1 seconds, not {seconds:g}")
    return seconds


def _house(env: Mapping[str, str], name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = env.get(name, "").strip()
    if not value:
        return default
    levels = [level.strip().lower() for level in value.split(",") if level.strip()]
    known = ("easy", "normal", "hard")
    unknown = [level for level in levels if level not in known]
    if unknown:
        raise ConfigError(f"{name} lists levels of {', '.join(known)}, not {', '.join(unknown)}")
    chosen = {*levels, "normal"}  # the rating scale's anchor
    return tuple(f"house:{level}" for level in known if level in chosen)


def _archive(env: Mapping[str, str], name: str, default: str) -> str:
    """``GONGZHU_ARCHIVE``, else ``archive`` in the data directory ``GONGZHU_DATA_DIR`` names."""
    data_dir = env.get("GONGZHU_DATA_DIR")
    return env.get(name) or (str(Path(data_dir) / "archive") if data_dir else default)


class ConfigError(ValueError):
    """A configuration value that cannot be used, named with the variable that holds it."""


def setting(variable: str, default: T, read: Callable[[Mapping[str, str], str, T], T]) -> T:
    """A configuration field, read from ``variable`` by ``read``; ``default`` when unset. Each
    setting's variable and default are declared here once; ``read(environment, variable,
    default)`` turns the variable's text into the value, or raises :class:`ConfigError`."""
    found: T = field(default=default, metadata={"variable": variable, "read": read})
    return found


@dataclass(frozen=True)
class Config:
    redis_url: str = setting("REDIS_URL", "", _redis_url)
    """Where the arena's data lives. Must run with append-only persistence."""
    secret_key: str = setting("GONGZHU_SECRET_KEY", "", _text)
    """A Fernet key that encrypts the bots' signing secrets at rest."""
    operator_token: str = setting("GONGZHU_OPERATOR_TOKEN", "", _text)
    """The bearer token of the operator endpoints; empty: off."""
    allow_private_endpoints: bool = setting("GONGZHU_ALLOW_PRIVATE_ENDPOINTS", False, _flag)
    """Accept bot endpoints on private, loopback or link-local addresses (development only)."""
    register_limit: str = setting("GONGZHU_REGISTER_LIMIT", "10 per hour", _text)
    """Registrations allowed per client address (flask-limiter syntax)."""
    play_limit: str = setting("GONGZHU_PLAY_LIMIT", "60 per hour", _text)
    """Human games a client address may start on the Play page (flask-limiter syntax)."""
    replay_key_path: Path | None = setting("GONGZHU_REPLAY_KEY", None, _path)
    """The arena's Ed25519 private key (PEM) that seals match logs."""
    queue_name: str = setting("GONGZHU_QUEUE", "arena", _text)
    """The RQ queue tournament jobs go to."""
    secret_grace_s: int = setting("GONGZHU_SECRET_GRACE_S", 3600, _number)
    """How long a rotated-out signing secret still signs requests (in-flight matches)."""
    handshake_timeout_s: float = setting("GONGZHU_HANDSHAKE_TIMEOUT_S", 5.0, _number)
    """The whole time a registration's ``hello`` may take (whole seconds)."""
    endpoint_check_limit: str = setting("GONGZHU_ENDPOINT_CHECK_LIMIT", "10 per minute", _text)
    """Endpoint changes (each a handshake) a bot's owner may make (flask-limiter syntax)."""
    verify_limit: str = setting("GONGZHU_VERIFY_LIMIT", "60 per minute", _text)
    """Verifications of a match's log (``POST /api/matches/{id}/verify``) a client address may
    ask for (flask-limiter syntax); the operator is not limited."""
    read_limit: str = setting("GONGZHU_READ_LIMIT", "60 per minute", _text)
    """The public reads that cost the arena most (a replay and its page, a divergence and its
    page, head-to-head, a hint) a client address may make, counted together (flask-limiter
    syntax; empty: no limit); the operator is not limited."""
    breach_hold_s: float = setting("GONGZHU_BREACH_HOLD_S", 1.0, _seconds)
    """How long a client over a rate limit waits for its ``429`` when the web process is
    event-driven (gevent): a flood that does not back off then costs the arena a sleeping
    greenlet per connection, not the CPU. 0: answer at once."""
    handshakes_at_once: int = setting("GONGZHU_HANDSHAKES_AT_ONCE", 8, _number)
    """Endpoint handshakes (registrations and endpoint changes) one web process runs at once;
    beyond that a request is answered 503 at once rather than wait."""
    trust_proxy_headers: int = setting("GONGZHU_TRUSTED_PROXIES", 0, _number)
    """How many reverse proxies in front of the service set ``X-Forwarded-For``."""
    worker_ttl_s: int = setting("GONGZHU_WORKER_TTL_S", 45, _number)
    """An idle worker's heartbeat lifetime; it also wakes up every ``worker_ttl_s - 15`` s."""
    job_heartbeat_s: int = setting("GONGZHU_JOB_HEARTBEAT_S", 15, _number)
    """How often a busy worker renews its job's heartbeat (rq's job monitoring interval)."""
    abandoned_after_s: int = setting("GONGZHU_ABANDONED_AFTER_S", 60, _number)
    """A job whose heartbeat is this much overdue is abandoned (its worker died)."""
    maintenance_interval_s: int = setting("GONGZHU_MAINTENANCE_INTERVAL_S", 30, _number)
    """How often a worker sweeps the registries, retrying abandoned jobs."""
    matches_per_worker: int = setting("GONGZHU_MATCHES_PER_WORKER", 64, _count)
    """How many jobs (matches, mostly) one worker process plays at once, each in a thread of
    its work horse (:mod:`workers.stable`); 1: one at a time, in a horse of its own."""
    admission_lateness_ms: float = setting("GONGZHU_ADMISSION_LATENESS_MS", 10.0, _milliseconds)
    """With a match in flight, a worker takes no other while its threads wake up later than this
    (the median of its last five wake-ups, :mod:`workers.admission`); 0: no such limit."""
    stream_heartbeat_s: float = setting("GONGZHU_STREAM_HEARTBEAT_S", 10.0, _heartbeat)
    """How often a pull bot's idle stream gets a keep-alive line; a stream not refreshed for
    three heartbeats no longer counts its bot as connected."""
    stream_connect_limit: str = setting("GONGZHU_STREAM_CONNECT_LIMIT", "30 per minute", _text)
    """Stream connections a pull bot may open (flask-limiter syntax): a client that reconnects
    in a tight loop is answered 429."""

    ladder_interval_s: int = setting("GONGZHU_LADDER_INTERVAL_S", 60, _number)
    """How often the ladder's matchmaker runs a round (the ``cron`` process queues it); 0: the
    ladder does not run itself (rated tournaments still move it)."""
    ladder_tables: int = setting("GONGZHU_LADDER_TABLES", 4, _number)
    """The most new tables one matchmaking round seats."""
    ladder_hands: int = setting("GONGZHU_LADDER_HANDS", 4, _number)
    """Hands in each ladder match (each of a table's four rotations); 0: to the rules' end."""
    ladder_house: tuple[str, ...] = setting(
        "GONGZHU_LADDER_HOUSE", ("house:easy", "house:normal", "house:hard"), _house
    )
    """The house bots in the ladder (levels, comma-separated): always members, with no limit
    on their tables. ``normal`` is the rating scale's anchor and is always in."""

    gauntlet_sweep_s: int = setting("GONGZHU_GAUNTLET_SWEEP_S", 30, _number)
    """How often the ``cron`` process moves every live gauntlet on (a worker that died between
    recording a match and planning the next is caught up then); 0: never."""
    gauntlets_per_bot: int = setting("GONGZHU_GAUNTLETS_PER_BOT", 2, _number)
    """The most gauntlets a bot's owner may have live at once (the operator is not limited)."""
    gauntlet_limit: str = setting("GONGZHU_GAUNTLET_LIMIT", "20 per day", _text)
    """Gauntlets a bot's owner may start (flask-limiter syntax); the operator is not limited."""
    # -- the archive of sealed logs (arena/archive.py) --
    archive: str = setting("GONGZHU_ARCHIVE", "data/archive", _archive)
    """Where sealed match logs are kept: a directory, or ``s3://bucket/prefix``; by default
    ``archive`` in the data directory (``$GONGZHU_DATA_DIR/archive``)."""
    s3_endpoint: str = setting("GONGZHU_S3_ENDPOINT", "", _text)
    """The S3-compatible server of an ``s3://`` archive (MinIO, …); empty: AWS S3."""
    replay_cache_s: int = setting("GONGZHU_REPLAY_CACHE_S", 600, _number)
    """How long a log read from the archive stays in Redis for the next viewer (0: never)."""
    archive_sweep_s: int = setting("GONGZHU_ARCHIVE_SWEEP_S", 3600, _number)
    """How often the cron process removes blobs no match references, and the temporary files
    of writes cut short (0: never)."""
    archive_hold_mb: int = setting("GONGZHU_ARCHIVE_HOLD_MB", 64, _number)
    """The most the logs the archive could not take may hold in Redis until it takes them, in
    MiB (0: none; a match whose log cannot be archived then fails its run)."""
    recovery_s: int = setting("GONGZHU_RECOVERY_S", 15, _number)
    """How often the cron process moves the logs held in Redis into the archive and queues
    again the matches an outage failed (0: never)."""
    heal_after_s: int = setting("GONGZHU_HEAL_AFTER_S", 60, _number)
    """How long a match an outage failed waits before it is queued again, doubled before each
    next time (:data:`arena.healing.ATTEMPTS` times at most)."""

    # -- disputes (docs/DISPUTES.md) --
    dispute_limit: str = setting("GONGZHU_DISPUTE_LIMIT", "10 per day", _text)
    """Disputes a bot's owner may file (flask-limiter syntax)."""

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
        return cls(
            **{
                f.name: f.metadata["read"](env, f.metadata["variable"], f.default)
                for f in fields(cls)
            }
        )
