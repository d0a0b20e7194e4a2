"""The divergence API: a match's seat against the other rotations of its deal (refused while
the deal is embargoed, as its replay is), and a bot's costliest divergences."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena import divergences
from arena.divergence_index import deal_logs
from arena.records import TournamentStatus
from arena.store import Store
from referee import DECK, CardSet
from service import Config
from tests.replays.divergence_support import Deal, concealed
from tests.service.service_support import operator


@pytest.fixture
def deal(config: Config, store: Store) -> Deal:
    return Deal(config, store, ["low", "house:easy", "high", "house:normal"])


def _cards_in(value: Any) -> set[str]:
    """Every card name anywhere in a JSON value."""
    text = json.dumps(value)
    return {name for name in DECK.names() if f'"{name}"' in text}


def test_a_divergence_is_refused_while_its_deal_is_embargoed_as_the_replay_is(
    deal: Deal, client: FlaskClient
) -> None:
    deal.record(deal.logs[:3])
    first = deal.logs[0].match_id
    refused = client.get(f"/api/matches/{first}/divergence?bot={deal.high}")
    replay = client.get(f"/api/matches/{first}/replay")
    assert refused.status_code == replay.status_code == 409
    assert refused.json == replay.json and refused.json["error"] == "embargoed"
    assert client.get(f"/api/bots/{deal.high}/divergences").json["total"] == 0
    page = client.get(f"/matches/{first}/divergence?bot={deal.high}")
    assert page.status_code == 409 and b'id="embargoed"' in page.data
    assert b"data-card" not in page.data
    deal.record(deal.logs[3:])
    assert client.get(f"/api/matches/{first}/divergence?bot={deal.high}").status_code == 200


def test_the_divergence_shows_the_lines_their_points_and_the_seats_own_view(
    deal: Deal, client: FlaskClient
) -> None:
    deal.record(deal.logs)
    log = deal.logs[1]
    seat = deal.seat_of(log, deal.high)
    answer = client.get(f"/api/matches/{log.match_id}/divergence?bot={deal.high}")
    assert answer.status_code == 200, answer.json
    body = answer.json
    assert (body["match_id"], body["tournament_id"], body["deal_label"]) == (
        log.match_id, deal.tid, "t1:d1",
    )  # fmt: skip
    assert body["seat"] == seat and body["lines"][body["bot"]]["participant"] == deal.high
    lines = {line["match_id"]: line for line in body["lines"]}
    assert set(lines) == {other.match_id for other in deal.logs}
    for other in deal.logs:
        points = [hand.result.seats[seat].score for hand in other.hands]
        assert lines[other.match_id]["points"] == points
        assert lines[other.match_id]["total"] == sum(points)
    point = body["divergence"]
    assert point["kind"] == "play" and point["rows"][-1]["step"] == point["step"]
    view = point["view"]
    assert view["seat"] == seat and view["decision"]["kind"] == "play"
    hidden = concealed(log, seat, point["hand"], point["decision"])
    assert hidden, "the other seats held no card the seat could not see"
    assert _cards_in(body) & set(hidden.names()) == set()
    assert view["hand"] and not CardSet.parse(" ".join(view["hand"])) & hidden

    listed = client.get(f"/api/bots/{deal.high}/divergences?per_page=2").json
    assert listed["total"] == 4 and listed["per_page"] == 2 and len(listed["items"]) == 2
    every = client.get(f"/api/bots/{deal.high}/divergences").json["items"]
    assert [d["cost"] for d in every] == sorted((d["cost"] for d in every), reverse=True)
    mine = next(d for d in every if d["match_id"] == log.match_id)
    assert (mine["seat"], mine["hand"], mine["step"], mine["decision"]) == (
        seat, point["hand"], point["step"], point["decision"],
    )  # fmt: skip
    assert mine["cost"] == body["cost"] and mine["lines"] == 4


@pytest.mark.parametrize(
    ("query", "status", "field"),
    [
        ("", 422, "bot"),
        ("?bot=bot_000000000000", 422, "bot"),
        ("?bot={high}&seat=9", 422, "seat"),
        ("?bot={high}&seat={other}", 422, "seat"),
    ],
)
def test_bad_questions_get_the_error_shape_saying_what_to_fix(
    deal: Deal, client: FlaskClient, query: str, status: int, field: str
) -> None:
    deal.record(deal.logs)
    log = deal.logs[0]
    other = (deal.seat_of(log, deal.high) + 1) % 4
    answer = client.get(
        f"/api/matches/{log.match_id}/divergence" + query.format(high=deal.high, other=other)
    )
    assert answer.status_code == status and answer.json["status"] == status
    assert field in answer.json["errors"] and answer.json["message"]


def test_unknown_matches_and_bots_are_404_and_a_lone_match_has_nothing_to_compare(
    deal: Deal, client: FlaskClient, store: Store
) -> None:
    assert client.get("/api/matches/nope/divergence?bot=x").status_code == 404
    assert client.get("/api/bots/bot_000000000000/divergences").json["error"] == "not_found"
    assert client.get("/api/bots/house:easy/divergences").json["total"] == 0
    store.move_tournament(
        deal.tid, TournamentStatus.CANCELLED, allowed_from=[TournamentStatus.RUNNING]
    )
    deal.record(deal.logs[:1])
    lone = client.get(f"/api/matches/{deal.logs[0].match_id}/divergence?bot={deal.high}")
    assert lone.status_code == 409 and "nothing to compare" in lone.json["message"]


def test_a_comparison_is_made_once_and_again_when_its_rotations_change(
    deal: Deal, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process keeps the comparisons it made (reading the deal's logs is most of their
    cost), by the rotations compared: a rotation recorded since makes another."""
    read = []
    monkeypatch.setattr(divergences, "deal_logs", lambda *a: read.append(a) or deal_logs(*a))
    deal.record(deal.logs[:2])
    asked = f"/api/matches/{deal.logs[0].match_id}/divergence?bot={deal.high}"
    two = client.get(asked, headers=operator())  # the deal is embargoed: the operator asks
    assert len(two.json["lines"]) == 2 and client.get(asked, headers=operator()).json == two.json
    assert len(read) == 1
    deal.record(deal.logs[2:])
    four = client.get(asked).json
    assert len(four["lines"]) == 4 and len(read) == 2
    assert [client.get(asked).json for _ in range(3)] == [four] * 3 and len(read) == 2
