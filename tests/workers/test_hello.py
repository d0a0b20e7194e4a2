"""The ``hello`` before each match: every HTTP seat gets it with the match's id, seat, rules and
time control; the version a bot answers and the hello's timing are logged in its seat; a bot
that refuses it still plays, and the refusal is in the log's ``extra``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import ExitStack
from typing import Any

import pytest

from arena.config import Config
from arena.store import Store
from bot_sdk.protocol import Status, encode, hello_answer
from replays.log import Connection
from replays.schema import validate
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.conftest import environment
from tests.workers.test_worker_tournaments import _logs, _start
from tests.workers.workers_support import StartResponse, lowest_card
from workers.jobs import run_match, run_tournament


class Greeted:
    """A WSGI bot that plays the lowest card and answers ``hello`` with ``hello_status``,
    keeping every hello it was sent."""

    def __init__(self, hello_status: str) -> None:
        self.hello_status = hello_status
        self.hellos: list[dict[str, Any]] = []

    def __call__(self, environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        request = json.loads(environ["wsgi.input"].read(size))
        if request["type"] == "hello":
            self.hellos.append(request)
            start(self.hello_status, [("Content-Type", "application/json")])
            return [encode(hello_answer("greeted", "2.5"))]
        if request["type"] == "decision":
            start("200 OK", [("Content-Type", "application/json")])
            return [lowest_card(request)]
        start("204 No Content", [])
        return [b""]


def test_every_http_seat_is_greeted_before_its_match_and_a_refusal_is_logged(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    friendly, refusing = Greeted("200 OK"), Greeted("403 Forbidden")
    with ExitStack() as stack:
        ids = {}
        for name, app in (("friendly", friendly), ("refusing", refusing)):
            url = stack.enter_context(running(app))
            bot, _ = store.create_bot(
                name=name, endpoint=url, description="", contact="t@example.com", version="1",
                secret="s3cret",
            )  # fmt: skip
            ids[name] = bot.id
        tournament_id = _start(config, store, [ids["friendly"], ids["refusing"]])  # + 2 house
        run_tournament(tournament_id)
        matches = store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items
        assert len(matches) == 4
        for match in matches:
            run_match(match.id)
        logs = _logs(config, store, tournament_id)
    assert len(friendly.hellos) == len(refusing.hellos) == 4  # once per match
    for log in logs.values():
        validate(log.to_json())  # the replay schema accepts what was added
        seats = {s.bot_id: s for s in log.seats}
        hello = next(h for h in friendly.hellos if h["match_id"] == log.match_id)
        assert hello["seat"] == seats[ids["friendly"]].seat
        assert hello["rules"] == log.rules.to_json()  # the match's: fixed_hands=1 included
        assert hello["rules"]["fixed_hands"] == 1
        assert (hello["time_limit_ms"], hello["time_bank_ms"]) == (1000, 5000)
        assert seats[ids["friendly"]].version == "2.5"  # what it answered
        assert seats[ids["refusing"]].version == "1"  # what it registered with
        refused_seat = str(seats[ids["refusing"]].seat)
        assert list(log.extra["hello"]) == [refused_seat]
        assert "HTTP 403" in log.extra["hello"][refused_seat]
        played = [d.status for h in log.hands for d in h.decisions if d.seat == int(refused_seat)]
        assert Status.OK in played  # it was asked and answered all the same
        for bot_id in ids.values():  # each hello timed, first of the match, on a new connection
            timing = seats[bot_id].hello
            assert timing is not None and timing.connection is Connection.NEW
            assert timing.sent_us is not None and timing.received_us is not None
            asked = [d.timing for h in log.hands for d in h.decisions if d.timing is not None]
            assert 0 <= timing.sent_us <= timing.received_us <= min(t.sent_us or 0 for t in asked)
        assert {s.hello for s in log.seats if s.kind == "house"} == {None}
