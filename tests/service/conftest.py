"""Fixtures of the service tests: a real redis-server of their own (append-only, as the arena
runs it), flushed before each test; the app on it; bot servers on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from cryptography.fernet import Fernet
from flask import Flask
from flask.testing import FlaskClient

from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from replays.integrity import generate_key, private_key_pem
from service import Config, create_app
from tests.bot_sdk.bot_sdk_support import running
from tests.service.service_support import OPERATOR


@pytest.fixture
def redis_url(redis_server: str) -> str:
    redis.Redis.from_url(redis_server).flushdb()
    return redis_server


@pytest.fixture(scope="session")
def secret_key() -> str:
    return Fernet.generate_key().decode()


@pytest.fixture(scope="session")
def replay_key_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "replay.pem"
    path.write_bytes(private_key_pem(generate_key()))
    return path


@pytest.fixture
def config(redis_url: str, secret_key: str, replay_key_path: Path, tmp_path: Path) -> Config:
    return Config(
        archive=str(tmp_path / "archive"),
        redis_url=redis_url,
        secret_key=secret_key,
        operator_token=OPERATOR,
        allow_private_endpoints=True,
        register_limit="5 per minute",
        play_limit="20 per minute",
        replay_key_path=replay_key_path,
        handshake_timeout_s=1.0,
    )


@pytest.fixture
def app(config: Config) -> Flask:
    return create_app(config)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def store(config: Config) -> Store:
    return Store.from_config(config)


@pytest.fixture(scope="session")
def bot_url() -> Iterator[str]:
    """A healthy bot (the SDK's lowest-card example), not checking signatures."""
    with running(make_app(LowestCard, None, verify_signatures=False)) as url:
        yield url
