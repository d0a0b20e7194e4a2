"""The arena's connection to Redis, from ``REDIS_URL``.

``redis://``, ``rediss://`` (TLS; ``?ssl_ca_certs=PATH`` names the authority to check the server
against) and ``unix://`` are read by redis-py. ``redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT
…]/MASTER`` names a primary by its Sentinels: the client asks them where the primary is and asks
again after a failover. The password is the Sentinels' and the servers' alike. This is the URL
syntax of flask-limiter's storage too, so the rate limits follow the same URL (which is why its
password must need no %-escapes: flask-limiter does not undo them).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import redis
from redis.sentinel import Sentinel, SentinelManagedConnection

SENTINEL_SCHEME = "redis+sentinel"


class RedisUrlError(ValueError):
    """A ``REDIS_URL`` the arena cannot connect by."""


def connect(url: str, **options: Any) -> redis.Redis:
    """A client of the Redis ``url`` names (``options``: redis-py's connection settings)."""
    if not url.startswith(f"{SENTINEL_SCHEME}://"):
        return redis.Redis.from_url(url, **options)
    sentinels, master, password = sentinel_parts(url)
    if password:
        options["password"] = password
    # a retry policy is the primary's: a Sentinel that does not answer is passed over at once
    asked = {name: value for name, value in options.items() if name != "retry"}
    sentinel = Sentinel(sentinels, sentinel_kwargs=asked, **options)  # type: ignore[no-untyped-call]  # redis-py: unannotated
    client: redis.Redis = sentinel.master_for(master, connection_class=PrimaryConnection)  # type: ignore[no-untyped-call]
    return client


class PrimaryConnection(SentinelManagedConnection):
    """A connection to the primary the Sentinels name, which asks them again whenever it
    connects. (redis-py's reconnects in the middle of a command to the address it had, the old
    primary's after a failover, for as long as its retry policy lets it.)"""

    def connect_check_health(
        self, check_health: bool = True, retry_socket_connect: bool = True
    ) -> None:
        if retry_socket_connect:  # a reconnect: the Sentinels' way, retried
            self.connect()  # type: ignore[no-untyped-call]
            return
        super().connect_check_health(check_health=check_health, retry_socket_connect=False)


def sentinel_parts(url: str) -> tuple[list[tuple[str, int]], str, str | None]:
    """The Sentinels' addresses, the master's name and the password of a
    ``redis+sentinel://`` URL."""
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2]
    master = parts.path.strip("/")
    try:
        sentinels = [_address(host) for host in hosts.split(",")]
    except ValueError:
        sentinels = []
    if not sentinels or not master or "/" in master:
        raise RedisUrlError(
            f"{redacted(url)}: a Sentinel URL is "
            f"{SENTINEL_SCHEME}://[:PASSWORD@]HOST:PORT[,HOST:PORT…]/MASTER_NAME"
        )
    if parts.password and unquote(parts.password) != parts.password:
        raise RedisUrlError(
            f"{redacted(url)}: the password of a Sentinel URL must need no %-escapes (letters, "
            "digits, '-', '.', '_', '~'): the rate limits' storage reads it unescaped"
        )
    return sentinels, master, parts.password


def _address(host: str) -> tuple[str, int]:
    split = urlsplit(f"//{host.strip()}")
    if not split.hostname or split.port is None:
        raise ValueError(host)
    return split.hostname, split.port


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***``: fit for a log or an error message."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, hosts = parts.netloc.rpartition("@")
    name = user.partition(":")[0]
    return parts._replace(netloc=f"{name}:***@{hosts}").geturl()
