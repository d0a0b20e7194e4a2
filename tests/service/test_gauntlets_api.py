"""Gauntlets through the API: who may start one and with which bots, the question's bounds,
the limits, reading and cancelling (tests/workers/test_gauntlets.py plays them)."""

from __future__ import annotations

import dataclasses

from flask import Flask
from flask.testing import FlaskClient

from service import Config, create_app
from tests.service.service_support import bearer, operator, register


def test_an_owner_starts_reads_and_cancels_a_gauntlet(client: FlaskClient, bot_url: str) -> None:
    made = register(client, bot_url, "candidate")
    bot, auth = made["bot"], bearer(made["token"])
    body = {"candidate": bot["id"], "baseline": "house:normal", "delta": 15, "max_deals": 50}
    started = client.post("/api/gauntlets", json=body, headers=auth)
    assert started.status_code == 201, started.json
    shown = started.json
    assert shown["status"] == "running" and shown["verdict"] == "running"
    assert shown["verdict_text"] == "still running"
    assert shown["opponents"] == ["house:easy", "house:easy"]  # house Normal is the baseline
    assert (shown["delta"], shown["alpha"], shown["beta"], shown["max_deals"]) == (
        15,
        0.05,
        0.05,
        50,
    )
    assert shown["hands"] == 4 and shown["started_by"] == bot["id"] and shown["deals"] == []
    assert shown["bounds"] == {"difference": 2.303, "no_difference": -2.944}
    assert shown["state"]["deals"] == 0

    listed = client.get("/api/gauntlets").json
    assert listed["total"] == 1 and listed["items"][0]["id"] == shown["id"]
    assert "deals" not in listed["items"][0]
    mine = client.get(f"/api/gauntlets?bot={bot['id']}").json
    assert [g["id"] for g in mine["items"]] == [shown["id"]]
    assert client.get("/api/gauntlets?bot=house:normal").json["total"] == 1  # the baseline
    assert client.get("/api/gauntlets?bot=house:easy").json["total"] == 0  # an opponent
    assert client.get(f"/api/gauntlets/{shown['id']}").json == shown
    assert client.get("/api/tournaments").json["total"] == 0  # not an operator's tournament
    assert client.get("/api/gauntlets/t_nope").status_code == 404

    other = bearer(register(client, bot_url, "other")["token"])
    refused = client.post(f"/api/gauntlets/{shown['id']}/cancel", headers=other)
    assert refused.status_code == 403 and "another bot's owner" in refused.json["message"]
    assert client.post(f"/api/gauntlets/{shown['id']}/cancel").status_code == 401
    cancelled = client.post(f"/api/gauntlets/{shown['id']}/cancel", headers=auth)
    assert cancelled.status_code == 200 and cancelled.json["verdict"] == "cancelled"
    again = client.post(f"/api/gauntlets/{shown['id']}/cancel", headers=operator())
    assert again.status_code == 409  # already over


def test_a_gauntlet_plays_only_bots_the_caller_owns(client: FlaskClient, bot_url: str) -> None:
    mine = register(client, bot_url, "mine")
    theirs = register(client, bot_url, "theirs")
    auth = bearer(mine["token"])
    me, them = mine["bot"]["id"], theirs["bot"]["id"]

    def post(body: dict[str, object], headers: dict[str, str] = auth) -> tuple[int, dict]:
        answer = client.post("/api/gauntlets", json=body, headers=headers)
        return answer.status_code, answer.json

    assert post({"candidate": me, "baseline": "house:normal"}, headers={})[0] == 401
    status, body = post({"candidate": them, "baseline": "house:normal"})
    assert status == 403 and "not yours" in body["message"]
    status, body = post({"candidate": me, "baseline": them})
    assert status == 403 and "baseline_token" in body["message"]
    assert body["message"].startswith(f"baseline: {them} is not yours")  # named once
    status, body = post({"candidate": me, "baseline": them, "baseline_token": mine["token"]})
    assert status == 403 and "does not manage" in body["message"]
    status, body = post({"candidate": me, "baseline": them, "baseline_token": theirs["token"]})
    assert status == 201 and body["baseline"] == them  # proved: both are the caller's
    status, body = post({"candidate": me, "baseline": "house:hard", "opponents": [them, them]})
    assert status == 403 and "house bots as opponents" in body["message"]
    # the operator may seat anyone, house bots against each other included
    status, body = post({"candidate": "house:hard", "baseline": "house:normal"}, operator())
    assert status == 201 and body["opponents"] == ["house:easy", "house:easy"]
    assert body["started_by"] == "operator"


def test_the_question_is_checked_with_messages_a_person_can_act_on(
    client: FlaskClient, bot_url: str
) -> None:
    made = register(client, bot_url, "asker")
    me, auth = made["bot"]["id"], bearer(made["token"])
    for wrong, field in (
        ({"alpha": 0.5}, "alpha"),
        ({"beta": 0}, "beta"),
        ({"delta": 500}, "delta"),
        ({"max_deals": 3}, "max_deals"),
        ({"hands": 21}, "hands"),
        ({"opponents": ["house:easy"]}, "opponents"),
        ({"rules": {"variants": ["nonsense"]}}, "rules"),
        ({"candidate": ""}, "candidate"),
    ):
        body = {"candidate": me, "baseline": "house:normal", **wrong}
        answer = client.post("/api/gauntlets", json=body, headers=auth)
        assert answer.status_code == 422 and field in answer.json["errors"], (wrong, answer.json)
    for wrong, words in (
        ({"rules": {"variants": ["teams"]}}, "teams"),
        ({"opponents": ["house:easy", "house:hard"]}, "same bot twice"),
        ({"baseline": me}, "other than the candidate"),
        ({"baseline": "bot_missing"}, "not a registered bot"),
    ):
        body = {"candidate": me, "baseline": "house:normal", **wrong}
        answer = client.post("/api/gauntlets", json=body, headers=auth)
        assert answer.status_code == 422 and words in answer.json["message"], answer.json
    assert client.get("/api/gauntlets").json["total"] == 0


def test_an_owner_has_at_most_two_live_and_a_daily_number_of_gauntlets(
    config: Config, bot_url: str
) -> None:
    app: Flask = create_app(dataclasses.replace(config, gauntlet_limit="3 per day"))
    client = app.test_client()
    made = register(client, bot_url, "busy")
    me, auth = made["bot"]["id"], bearer(made["token"])
    body = {"candidate": me, "baseline": "house:normal"}
    first = client.post("/api/gauntlets", json=body, headers=auth).json
    assert client.post("/api/gauntlets", json=body, headers=auth).status_code == 201
    live = client.post("/api/gauntlets", json=body, headers=auth)
    assert live.status_code == 429 and "the most allowed at once is 2" in live.json["message"]
    client.post(f"/api/gauntlets/{first['id']}/cancel", headers=auth)
    daily = client.post("/api/gauntlets", json=body, headers=auth)
    assert daily.status_code == 429 and "Retry-After" in daily.headers  # 3 per day, counted
    assert client.post("/api/gauntlets", json=body, headers=operator()).status_code == 201
