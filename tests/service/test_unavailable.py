"""While Redis is down every API route and every page answers ``503`` in the one error shape
(never a ``500``), ``/ready`` says so, and all answer again when Redis is back."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from arena.redis_server import start_redis
from service import Config, create_app
from tests.service.service_support import operator

READS = [
    "/api/bots",
    "/api/bots/bot_x/rating-history",
    "/api/tournaments",
    "/api/tournaments/t_x",
    "/api/tournaments/t_x/standings",
    "/api/matches",
    "/api/matches/m_x",
    "/api/ladder",
    "/api/schedules",
    "/",
    "/play",
    "/tournaments/t_x",
    "/matches/m_x",
    "/bots/bot_x",
]
WRITES = [
    ("/api/bots", {"name": "n", "endpoint": "http://127.0.0.1:9/", "contact": "a@b.c"}),
    ("/api/tournaments", {"name": "cup", "participants": ["bot_x"]}),
    ("/api/tournaments/t_x/start", None),
    ("/api/tournaments/t_x/requeue-failed", None),
]


@pytest.mark.parametrize("down", [True, False], ids=["redis down", "redis back"])
def test_every_route_answers_503_in_the_error_shape_while_redis_is_down(
    down: bool, config: Config, tmp_path: Path
) -> None:
    server = start_redis(tmp_path / "redis")
    app = create_app(dataclasses.replace(config, redis_url=server.url))
    client = app.test_client()
    if down:
        server.kill()
    try:
        for path in READS:
            answer = client.get(path, headers=operator())
            if not down:
                assert answer.status_code in {200, 404}, path
                continue
            assert answer.status_code == 503, path
            assert answer.get_json()["error"] == "unavailable", path
            assert answer.headers["Retry-After"] == "5"
        for path, body in WRITES:
            answer = client.post(path, json=body, headers=operator())
            assert (answer.status_code == 503) is down, path
            if down:
                assert answer.get_json() == {
                    "status": 503,
                    "error": "unavailable",
                    "message": "the arena's database is unreachable: try again in a few seconds",
                }
        ready = client.get("/ready")
        assert ready.status_code == (503 if down else 200)
        assert ready.get_json()["redis"] is not down
    finally:
        server.stop()
