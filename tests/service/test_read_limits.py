"""The public reads that cost the arena most (a replay and its page, a divergence and its page,
head-to-head, a hint) are limited per client address, one count for them all
(``GONGZHU_READ_LIMIT``): over it a client is answered ``429`` in the error shape with
``Retry-After``, while another address is still served; the operator is not limited, and an
empty setting limits nobody. (What the limit buys under a flood: ``python -m benchmarks.flood``,
docs/BENCHMARKS.md.)"""

from __future__ import annotations

import dataclasses

import pytest
from flask.testing import FlaskClient

from service import Config, create_app
from tests.service.service_support import operator

EXPENSIVE = [
    "/api/matches/m_x/replay",
    "/matches/m_x",
    "/api/matches/m_x/divergence?bot=bot_x",
    "/matches/m_x/divergence?bot=bot_x",
    "/api/bots/bot_x/head-to-head",
    "/api/play/g_x/hint",
]
"""Each route (none of them finds anything here: a 404 is counted as any answer is)."""
ONE = {"REMOTE_ADDR": "198.51.100.1"}
OTHER = {"REMOTE_ADDR": "198.51.100.2"}


def _client(config: Config, limit: str) -> FlaskClient:
    return create_app(dataclasses.replace(config, read_limit=limit)).test_client()


@pytest.mark.parametrize("path", EXPENSIVE)
def test_each_expensive_read_is_limited_per_address(config: Config, path: str) -> None:
    client = _client(config, "2 per minute")
    first, second, refused = (client.get(path, environ_base=ONE) for _ in range(3))
    assert first.status_code == second.status_code == 404, first.get_json()
    assert refused.status_code == 429
    assert refused.get_json() == {
        "status": 429,
        "error": "rate_limited",
        "message": "too many replays, divergences, head-to-heads and hints from this address "
        "(at most 2 per minute, counted together): try again in the seconds Retry-After says",
    }
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert client.get(path, environ_base=OTHER).status_code == 404  # another address: served


def test_the_expensive_reads_share_one_count(config: Config) -> None:
    client = _client(config, f"{len(EXPENSIVE)} per minute")
    assert [client.get(p, environ_base=ONE).status_code for p in EXPENSIVE] == [404] * 6
    assert [client.get(p, environ_base=ONE).status_code for p in EXPENSIVE] == [429] * 6
    assert client.get("/api/matches/m_x", environ_base=ONE).status_code == 404  # cheap: not
    assert client.get(EXPENSIVE[0], environ_base=OTHER).status_code == 404


def test_the_operator_and_an_empty_setting_are_not_limited(config: Config) -> None:
    limited = _client(config, "1 per minute")
    for _ in range(3):
        assert limited.get(EXPENSIVE[0], headers=operator(), environ_base=ONE).status_code == 404
    unlimited = _client(config, "")
    assert {unlimited.get(EXPENSIVE[0], environ_base=ONE).status_code for _ in range(5)} == {404}


def test_the_api_documents_the_429(client: FlaskClient) -> None:
    paths = client.get("/api/openapi.json").get_json()["paths"]
    for path in ("/api/matches/{match_id}/replay", "/api/matches/{match_id}/divergence",
                 "/api/bots/{bot_id}/head-to-head", "/api/play/{game_id}/hint"):  # fmt: skip
        refused = paths[path]["get"]["responses"]["429"]
        assert "GONGZHU_READ_LIMIT" in refused["description"], path
