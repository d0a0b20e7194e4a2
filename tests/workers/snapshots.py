"""A Redis database and a directory saved once and put back before each test: a module's tests
share one costly setup (a tournament played with slow bots), each starting from the state it
left, whatever the tests before it changed."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import redis


@dataclass(frozen=True)
class Snapshot:
    redis_url: str
    keys: list[tuple[bytes, int, bytes]]
    """Each key, its time to live in ms (0: none) and its value as ``DUMP`` serialised it."""
    directory: Path
    saved: Path
    """A copy of ``directory`` as it was."""

    @classmethod
    def take(cls, redis_url: str, directory: Path, saved: Path) -> Snapshot:
        """The database at ``redis_url`` and ``directory`` (copied to ``saved``) as they are."""
        client = redis.Redis.from_url(redis_url)
        keys = []
        for key in client.scan_iter(count=1000):
            value, ttl_ms = client.dump(key), client.pttl(key)
            if value is not None:  # not expired meanwhile
                keys.append((key, max(ttl_ms, 0), value))
        if directory.exists():
            shutil.copytree(directory, saved)
        return cls(redis_url, keys, directory, saved)

    def restore(self) -> None:
        """The database and the directory as they were taken, and nothing else."""
        client = redis.Redis.from_url(self.redis_url)
        client.flushdb()
        with client.pipeline(transaction=False) as pipeline:
            for key, ttl_ms, value in self.keys:
                pipeline.restore(key, ttl_ms, value)
            pipeline.execute()
        shutil.rmtree(self.directory, ignore_errors=True)
        if self.saved.exists():
            shutil.copytree(self.saved, self.directory)
