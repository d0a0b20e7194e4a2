"""Fixtures shared by every suite: one real redis-server for the session, append-only as the
arena runs it, on a free port in a temporary directory (each suite flushes it per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.redis_server import start_redis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = start_redis(tmp_path_factory.mktemp("redis"), fsync="everysec")
    yield server.url
    server.stop()
