"""Every rate-limited route answers ``503`` in the one error shape, with ``Retry-After``, while
Redis is away: stopped, still loading its data (a real redis-server answering ``LOADING``), or
gone in the middle of the request, after the rate limiter counted it and before it reads the
limit back for the response's headers. Never a ``500``."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from arena.records import Transport
from arena.redis_server import start_redis
from arena.store import Store
from service import Config, create_app
from tests.service.redis_outage import loading_redis, mentions, outage_proxy

LIMITED = "LIMITS"
"""What the rate limiter's keys in Redis start with."""
UNAVAILABLE = {
    "status": 503,
    "error": "unavailable",
    "message": "the arena's database is unreachable: try again in a few seconds",
}

Call = tuple[str, str, dict[str, object] | None, str]
"""A rate-limited route: method, path, body, and whose token it sends (``push``, ``pull``,
or nobody: ``""``)."""
ROUTES: list[Call] = [
    ("POST", "/api/bots", {"name": "n", "endpoint": "http://127.0.0.1:9/", "contact": "a@b.c"}, ""),
    ("PATCH", "/api/bots/{push}", {"endpoint": "http://127.0.0.1:9/b"}, "push"),
    ("POST", "/api/bots/{push}/verify-endpoint", None, "push"),
    ("POST", "/api/bots/{push}/doctor", None, "push"),
    ("GET", "/api/bots/{pull}/stream", None, "pull"),
    ("POST", "/api/gauntlets", {"candidate": "{push}", "baseline": "house:normal"}, "push"),
    (
        "POST",
        "/api/disputes",
        {"match_id": "m", "hand": 1, "decision": 1, "statement": "."},
        "push",
    ),
    ("POST", "/api/play", {"opponents": ["house:easy"] * 3}, ""),
    ("POST", "/api/matches/m_x/verify", None, ""),
    ("GET", "/api/matches/m_x/replay", None, ""),
    ("GET", "/matches/m_x", None, ""),
    ("GET", "/api/matches/m_x/divergence?bot=bot_x", None, ""),
    ("GET", "/matches/m_x/divergence?bot=bot_x", None, ""),
    ("GET", "/api/bots/bot_x/head-to-head", None, ""),
    ("GET", "/api/play/g_x/hint", None, ""),
]


def _bots(store: Store) -> dict[str, tuple[str, str]]:
    """A push bot and a pull bot: name -> (id, token)."""
    made = {}
    for kind in Transport:
        bot, token = store.create_bot(
            name=f"{kind.value}-bot",
            endpoint="http://127.0.0.1:9/" if kind is Transport.PUSH else "",
            description="",
            contact="a@b.c",
            version="1",
            secret="s",
            transport=kind,
        )
        made[kind.value] = (bot.id, token)
    return made


def _ask(client: FlaskClient, call: Call, bots: dict[str, tuple[str, str]]) -> TestResponse:
    method, path, body, whose = call
    ids = {name: bot_id for name, (bot_id, _) in bots.items()}
    headers = {"Authorization": f"Bearer {bots[whose][1]}"} if whose else {}
    if body is not None:
        body = {k: v.format(**ids) if isinstance(v, str) else v for k, v in body.items()}
    return client.open(path.format(**ids), method=method, json=body, headers=headers)


def _assert_unavailable(answer: TestResponse, call: Call) -> None:
    assert answer.status_code == 503, (call, answer.status_code, answer.get_json())
    assert answer.get_json() == UNAVAILABLE, call
    assert answer.headers["Retry-After"] == "5", call


@pytest.mark.parametrize("mode", ["down", "loading"])
@pytest.mark.parametrize("call", ROUTES, ids=[f"{m} {p}" for m, p, *_ in ROUTES])
def test_redis_gone_after_the_limit_is_counted_is_a_503(
    call: Call, mode: str, config: Config, store: Store
) -> None:
    """Redis stops (or restarts and loads) right after the rate limiter counted the request:
    the route's own reads fail (a ``503``), and so does the limiter's read of the limit for the
    response's headers, which must leave the ``503`` as it is."""
    bots = _bots(store)
    upstream = urlsplit(config.redis_url).port
    assert upstream is not None
    with outage_proxy(upstream, mode, mentions(LIMITED.encode())) as proxy:
        client = create_app(dataclasses.replace(config, redis_url=proxy.url)).test_client()
        answer = _ask(client, call, bots)
        assert proxy.gone.is_set(), "the limiter never counted the request"
    _assert_unavailable(answer, call)


def test_a_429_whose_limit_cannot_be_read_back_stays_a_429(config: Config) -> None:
    """Over the limit, and Redis gone before the limit's reset could be read for the headers:
    still the ``429``, with a ``Retry-After`` (the limit's whole window)."""
    upstream = urlsplit(config.redis_url).port
    assert upstream is not None
    limited = dataclasses.replace(config, verify_limit="1 per minute")
    counted = mentions(LIMITED.encode())
    answered: list[bytes] = []

    def second_count(args: list[bytes], reply: bytes) -> bool:
        """The second request's count (the first request's is followed by its headers' read)."""
        if counted(args, reply):
            answered.append(args[0])
        return answered.count(b"EVALSHA") == 2

    with outage_proxy(upstream, "down", second_count) as proxy:
        client = create_app(dataclasses.replace(limited, redis_url=proxy.url)).test_client()
        assert client.post("/api/matches/m_x/verify").status_code == 404
        refused = client.post("/api/matches/m_x/verify")
        assert proxy.gone.is_set()
    assert refused.status_code == 429, refused.get_json()
    assert refused.get_json()["error"] == "rate_limited"
    assert refused.headers["Retry-After"] == "60"


def test_a_route_done_before_redis_went_away_keeps_its_answer(config: Config) -> None:
    """The route did its work with Redis there; Redis went away before the limit was read back
    for the headers: the route's answer, without the limit's headers (a ``503`` would have a
    client send a registration the arena has already made)."""
    upstream = urlsplit(config.redis_url).port
    assert upstream is not None
    counted = mentions(LIMITED.encode())
    seen: list[bytes] = []

    def read_back(args: list[bytes], reply: bytes) -> bool:
        """The registration's writes, after its count."""
        if counted(args, reply):
            seen.append(b"count")
        return bool(seen) and args[0].upper() == b"EXEC"

    body = {"name": "made", "endpoint": "http://127.0.0.1:9/", "contact": "a@b.c"}
    with outage_proxy(upstream, "down", read_back) as proxy:
        client = create_app(dataclasses.replace(config, redis_url=proxy.url)).test_client()
        made = client.post("/api/bots", json=body)
        assert proxy.gone.is_set()
    assert made.status_code == 201, made.get_json()
    assert "X-RateLimit-Remaining" not in made.headers
    assert [b.name for b in Store.from_config(config).list_bots(page=1, per_page=9).items] == [
        "made"
    ]


@pytest.mark.parametrize("call", ROUTES, ids=[f"{m} {p}" for m, p, *_ in ROUTES])
def test_a_stopped_redis_is_a_503(call: Call, config: Config, tmp_path: Path) -> None:
    server = start_redis(tmp_path / "redis")
    here = dataclasses.replace(config, redis_url=server.url)
    bots = _bots(Store.from_config(here))
    client = create_app(here).test_client()
    server.kill()
    _assert_unavailable(_ask(client, call, bots), call)


def test_a_redis_loading_its_data_is_a_503_until_it_is_loaded(
    config: Config, tmp_path: Path
) -> None:
    """A real redis-server started on its data answers ``LOADING`` until it has read it all
    back: the routes limited per address are a ``503`` meanwhile (as the proxy's ``LOADING``
    is, above, for every route), and answer once it is loaded. (While it loads, it answers
    only between batches of keys: each request takes a few of its round trips.)"""
    no_bots: dict[str, tuple[str, str]] = {}
    per_address = [call for call in ROUTES if call[1] in ("/api/bots", "/api/play", "/matches/m_x")]
    with loading_redis(tmp_path / "redis", keys=30_000) as url:
        client = create_app(dataclasses.replace(config, redis_url=url)).test_client()
        for call in per_address:
            _assert_unavailable(_ask(client, call, no_bots), call)
        deadline = time.monotonic() + 30
        while (answer := _ask(client, per_address[0], no_bots)).status_code == 503:
            assert time.monotonic() < deadline, "still refused once Redis should have loaded"
            time.sleep(0.1)
    assert answer.status_code == 201, answer.get_json()


def test_each_app_counts_its_requests_in_its_own_redis(config: Config, tmp_path: Path) -> None:
    """Two apps in one process, each on its own Redis (a test's, or an app made again with
    other settings): the routes' limits are declared once, yet each app counts in its own Redis,
    and one whose Redis is gone costs the other nothing."""
    first = create_app(config).test_client()
    server = start_redis(tmp_path / "redis")
    second = create_app(dataclasses.replace(config, redis_url=server.url)).test_client()
    server.kill()
    assert first.get("/api/bots/bot_x/head-to-head").status_code == 404
    _assert_unavailable(second.get("/api/bots/bot_x/head-to-head"), ROUTES[-2])
    counted = Store.from_config(config).redis.keys(f"{LIMITED}*")
    assert counted, "the first app counted nowhere in its own Redis"
