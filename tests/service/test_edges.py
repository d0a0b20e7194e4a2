"""Every numeric input at its edges, and whose address the rate limits count: a bound moved by
one, or a limit keyed on a header the client writes, fails here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from flask.testing import FlaskClient

from service import Config, create_app, limits
from tests.service.service_support import operator, register

# (field path, lowest valid, highest valid) of a tournament's numbers
TOURNAMENT_BOUNDS = [
    (("time_control", "decision_ms"), 50, 60_000),
    (("time_control", "bank_ms"), 0, 600_000),
    (("time_control", "fault_limit"), 1, 1000),
    (("format", "matches_per_table"), 1, 100),
    (("format", "hands"), 1, 1000),
]


def _tournament(bot_id: str, path: tuple[str, str], value: Any) -> dict[str, Any]:
    section, field = path
    return {"name": "edges", "participants": [bot_id], section: {field: value}}


@pytest.mark.parametrize(("path", "low", "high"), TOURNAMENT_BOUNDS)
def test_a_tournaments_numbers_are_taken_at_their_bounds_and_refused_beyond(
    client: FlaskClient, bot_url: str, path: tuple[str, str], low: int, high: int
) -> None:
    bot_id = register(client, bot_url)["bot"]["id"]
    for value in (low, high):
        made = client.post(
            "/api/tournaments", json=_tournament(bot_id, path, value), headers=operator()
        )
        assert made.status_code == 201, (value, made.json)
        assert made.json[path[0]][path[1]] == value
    for value in (low - 1, high + 1, -(10**6), 10**12):
        refused = client.post(
            "/api/tournaments", json=_tournament(bot_id, path, value), headers=operator()
        )
        assert refused.status_code == 422, (value, refused.json)
        assert (
            refused.json["error"] == "invalid" and f"{path[0]}.{path[1]}" in refused.json["errors"]
        )


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("page=0", 422),
        ("page=1", 200),
        ("page=1000000", 200),
        ("page=1000001", 422),
        ("per_page=0", 422),
        ("per_page=1", 200),
        ("per_page=100", 200),
        ("per_page=101", 422),
    ],
)
def test_pages_are_taken_at_their_bounds_and_refused_beyond(
    client: FlaskClient, query: str, status: int
) -> None:
    for path in ("/api/tournaments", "/api/matches", "/api/ladder", "/api/bots"):
        answer = client.get(f"{path}?{query}")
        assert answer.status_code == status, (path, query, answer.json)


def _games_from(client: FlaskClient, addresses: list[str], forwarded: str | None) -> list[int]:
    statuses = []
    for address in addresses:
        headers = {"X-Forwarded-For": forwarded} if forwarded else {}
        response = client.post(
            "/api/play",
            json={"opponents": ["house:easy"] * 3, "rules": {"fixed_hands": 1}},
            headers=headers,
            environ_base={"REMOTE_ADDR": address},
        )
        statuses.append(response.status_code)
    return statuses


def test_without_trusted_proxies_the_limit_counts_the_connecting_address(config: Config) -> None:
    """A client that writes its own X-Forwarded-For gets no new allowance from it."""
    client = create_app(dataclasses.replace(config, play_limit="2 per minute")).test_client()
    statuses = []
    for n in range(3):
        statuses += _games_from(client, ["203.0.113.7"], forwarded=f"198.51.100.{n}")
    assert statuses == [201, 201, 429]
    assert _games_from(client, ["203.0.113.8"], forwarded=None) == [201]  # another client


def test_behind_a_trusted_proxy_the_limit_counts_the_forwarded_client(config: Config) -> None:
    behind = dataclasses.replace(config, play_limit="2 per minute", trust_proxy_headers=1)
    client = create_app(behind).test_client()
    proxy = "10.0.0.1"
    first = _games_from(client, [proxy, proxy, proxy], forwarded="198.51.100.1")
    assert first == [201, 201, 429]
    assert _games_from(client, [proxy], forwarded="198.51.100.2") == [201]


def test_a_limited_answer_says_how_much_is_left_and_a_refusal_when_to_retry(
    config: Config,
) -> None:
    client = create_app(dataclasses.replace(config, play_limit="2 per minute")).test_client()
    game = {"opponents": ["house:easy"] * 3, "rules": {"fixed_hands": 1}}
    first, second, refused = (client.post("/api/play", json=game) for _ in range(3))
    assert first.headers["X-RateLimit-Limit"] == "2"
    assert [first.headers["X-RateLimit-Remaining"], second.headers["X-RateLimit-Remaining"]] == [
        "1",
        "0",
    ]
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 60


def test_a_client_over_a_limit_is_held_only_in_an_event_driven_process(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hold before a 429 costs a greenlet under gevent; a thread-per-request server would
    give it a thread, so there the 429 is answered at once."""
    held: list[float] = []
    monkeypatch.setattr(limits.time, "sleep", held.append)
    client = create_app(dataclasses.replace(config, play_limit="1 per minute")).test_client()
    statuses = _games_from(client, ["203.0.113.9"] * 2, forwarded=None)
    assert statuses == [201, 429] and held == []  # not cooperative here
    monkeypatch.setattr(limits, "cooperative", lambda: True)
    assert _games_from(client, ["203.0.113.9"], forwarded=None) == [429]
    assert held == [config.breach_hold_s] == [1.0]
