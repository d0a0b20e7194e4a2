"""Fixtures of the security tests: a real redis-server (append-only, as the arena runs it),
flushed before each test, and the app on it with the private-address guard ON (the development
switch off), as in production."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import redis
from flask import Flask

from arena.store import Store
from bot_sdk.protocol import BotInfo
from service import Config, create_app
from tests.workers.conftest import arena_config

OPERATOR = "operator-token-for-security-tests"
PUBLIC_ADDRESS = "93.184.216.34"


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
    return Store.from_config(config)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every host resolves to one public address and every handshake succeeds: registration's
    success path is fuzzed too, and nothing leaves the machine."""

    monkeypatch.setattr("arena.endpoints.resolve_host", lambda host, port: [PUBLIC_ADDRESS])
    monkeypatch.setattr("arena.bots.handshake", lambda *args, **kwargs: BotInfo("fuzzed", "1.0"))
    yield
