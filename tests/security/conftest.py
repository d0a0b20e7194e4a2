"""Fixtures of the security tests: a real redis-server (append-only, as the arena runs it),
flushed before each test, and the app on it with the private-address guard ON (the development
switch off), as in production."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import redis
from flask import Flask

from service import Config, create_app
from tests.workers.conftest import arena_config
from workers.store import Store

OPERATOR = "operator-token-for-security-tests"


@pytest.fixture
def config(redis_server: str, tmp_path: Path) -> Config:
    redis.Redis.from_url(redis_server).flushdb()
    return replace(
        arena_config(redis_server, tmp_path),
        operator_token=OPERATOR,
        allow_private_endpoints=False,
        register_limit="1000 per minute",
        play_limit="1000 per minute",
        handshake_timeout_s=1.0,
    )


@pytest.fixture
def app(config: Config) -> Flask:
    return create_app(config)


@pytest.fixture
def store(config: Config) -> Store:
    return Store.from_url(config.redis_url, config.secret_key)
