"""The ladder through the API: entering a bot, its limit on concurrent matches, the ladder's
rows with versions and provisional marks, a bot's versions, rating history by version and
head-to-head figures, the matchmaker's status and tables."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask.testing import FlaskClient

from arena import ratings
from arena.records import PROVISIONAL_SIGMA, Format, Rating, TournamentSpec
from arena.store import Store, codecs
from referee import Rules
from replays.log import MatchLog, TimeControl
from service import Config
from tests.service.service_support import bearer, register, sealed_log
from tests.workers.test_store_mutants import _sealed

BOTS = ["bot_a", "bot_b", "house:easy", "house:normal"]


def _record(store: Store, config: Config, match_id: str, version: str, seed: int) -> None:
    log = sealed_log(config, match_id, BOTS, seed=seed)
    parsed = MatchLog.from_json(log)
    seats = tuple(
        dataclasses.replace(s, version=version if s.bot_id == "bot_a" else "1")
        for s in parsed.seats
    )
    assert store.record_result(match_id, _sealed(config, dataclasses.replace(parsed, seats=seats)))


def test_an_owner_enters_the_ladder_and_sets_its_limit(client: FlaskClient, bot_url: str) -> None:
    made = register(client, bot_url, "entrant")
    bot, auth = made["bot"], bearer(made["token"])
    assert (bot["ladder"], bot["max_concurrent"]) == (False, 1)  # out until its owner says
    path = f"/api/bots/{bot['id']}"
    changed = client.patch(path, json={"ladder": True, "max_concurrent": 3}, headers=auth)
    assert changed.status_code == 200
    assert (changed.json["ladder"], changed.json["max_concurrent"]) == (True, 3)
    public = client.get("/api/bots").json["items"][0]
    assert (public["ladder"], public["max_concurrent"]) == (True, 3)
    assert client.patch(path, json={"max_concurrent": 8}, headers=auth).status_code == 200
    for wrong in (0, 9, "two"):
        refused = client.patch(path, json={"max_concurrent": wrong}, headers=auth)
        assert refused.status_code == 422 and "max_concurrent" in refused.json["errors"]
    assert client.patch(path, json={"ladder": False}).status_code == 401
    entered = register(client, bot_url, "entered", ladder=True, max_concurrent=2)["bot"]
    assert (entered["ladder"], entered["max_concurrent"]) == (True, 2)


def test_the_ladder_shows_versions_provisional_marks_and_head_to_head(
    client: FlaskClient, store: Store, config: Config
) -> None:
    for n in range(2):
        _record(store, config, f"a{n}", "1.0", seed=n + 1)
    _record(store, config, "b0", "2.0", seed=7)
    rows = {r["bot_id"]: r for r in client.get("/api/ladder").json["items"]}
    assert set(rows) == set(BOTS)
    assert rows["bot_a"]["version"] == "2.0" and rows["bot_a"]["provisional"] is True
    # house Normal is rated like everyone, and every mu is shown relative to its own
    normal, bot_a = store.rating("house:normal"), store.rating("bot_a")
    assert normal is not None and bot_a is not None and normal.mu != 0.0
    assert rows["house:normal"]["mu"] == 0.0
    assert rows["house:normal"]["sigma"] == normal.sigma < ratings.PRIOR_SIGMA
    assert rows["bot_a"]["mu"] == bot_a.mu - normal.mu
    assert rows["bot_a"]["rating"] == bot_a.mu - normal.mu - 3 * bot_a.sigma
    assert client.get("/api/ladder/status").json["anchor_level"] == normal.mu
    assert rows["bot_a"]["name"] == "bot_a"  # not registered here: shown by its id
    versions = client.get("/api/bots/bot_a/versions").json
    assert [v["version"] for v in versions["items"]] == ["2.0", "1.0"]
    assert [v["matches"] for v in versions["items"]] == [1, 2]
    seats = versions["items"][1]["seats"]
    assert [s["seat"] for s in seats] == [0, 1, 2, 3] and seats[0]["matches"] == 2
    latest = client.get("/api/bots/bot_a/rating-history").json
    assert latest["version"] == "2.0" and [p["match_id"] for p in latest["history"]] == ["b0"]
    older = client.get("/api/bots/bot_a/rating-history?version=1.0").json
    assert [p["match_id"] for p in older["history"]] == ["a0", "a1"]
    stored = store.rating_history("bot_a", "1.0")[-1]
    assert older["history"][-1]["mu"] == stored.mu - normal.mu  # the same rescaling
    assert client.get("/api/bots/bot_a/rating-history?version=9").json["history"] == []
    h2h = client.get("/api/bots/bot_a/head-to-head?per_page=2").json
    assert h2h["total"] == 3 and len(h2h["items"]) == 2
    row = h2h["items"][0]
    assert row["matches"] == 3 and row["ahead"] + row["behind"] + row["level"] == 3
    for path in ("versions", "rating-history", "head-to-head"):
        missing = client.get(f"/api/bots/nobody/{path}")
        assert missing.status_code == 404 and "nobody" in missing.json["message"]


def test_a_settled_rating_is_not_provisional(client: FlaskClient, store: Store) -> None:
    assert store.ratings_scale() == ratings.SCALE  # no rating yet: the current scale
    for bot_id, sigma in (("bot_a", PROVISIONAL_SIGMA), ("bot_b", PROVISIONAL_SIGMA + 0.01)):
        rating = Rating(bot_id, 30.0, sigma, matches=40, version="1")
        store.redis.set(f"gz:rating:{bot_id}", codecs.to_json(rating))
        store.redis.zadd("gz:ladder", {bot_id: rating.conservative})
    rows = {r["bot_id"]: r["provisional"] for r in client.get("/api/ladder").json["items"]}
    assert rows == {"bot_a": False, "bot_b": True}


def test_the_matchmakers_status_and_tables(
    client: FlaskClient, store: Store, config: Config
) -> None:
    status: dict[str, Any] = client.get("/api/ladder/status").json
    assert status["interval_s"] == config.ladder_interval_s
    assert status["anchor"] == "house:normal" and status["anchor_level"] == 0.0
    assert status["rerating"] is False
    assert status["provisional_sigma"] == PROVISIONAL_SIGMA
    assert status["open_tables"] == 0 and status["last_round"]["rounds"] == 0
    spec = TournamentSpec(
        "Ladder table", tuple(BOTS), Format(hands=4), Rules(), TimeControl(1000, 30000, 5)
    )
    table_id = store.create_tournament(spec, ladder=True)
    store.note_ladder_round([table_id], passed_over={"bot_c": 2})
    status = client.get("/api/ladder/status").json
    assert status["open_tables"] == 1 and status["last_round"]["tables"] == [table_id]
    assert status["last_round"]["passed_over"] == {"bot_c": 2}
    store.note_ladder_round([], passed_over={})  # a round that passed nobody over
    assert client.get("/api/ladder/status").json["last_round"]["passed_over"] == {}
    tables = client.get("/api/ladder/tables").json
    assert [t["id"] for t in tables["items"]] == [table_id]
    assert client.get("/api/tournaments").json["total"] == 0
    assert client.get(f"/api/tournaments/{table_id}").json["participants"] == BOTS


def test_ratings_awaiting_re_rating_are_not_shown(
    client: FlaskClient, store: Store, config: Config
) -> None:
    _record(store, config, "a0", "1.0", seed=1)
    store.redis.set("gz:ratings:scale", ratings.OLD_SCALE)  # as an upgraded store holds
    assert client.get("/api/ladder").json["items"] == []
    assert client.get("/api/bots/bot_a/versions").json["items"] == []
    assert client.get("/api/bots/bot_a/rating-history").json["history"] == []
    status = client.get("/api/ladder/status").json
    assert status["rerating"] is True and status["anchor_level"] is None


def test_the_pages_say_when_ratings_await_re_rating(
    client: FlaskClient, store: Store, config: Config
) -> None:
    _record(store, config, "a0", "1.0", seed=1)
    assert 'id="rerating"' not in client.get("/").get_data(as_text=True)
    assert 'id="rerating"' not in client.get("/bots/bot_a").get_data(as_text=True)
    store.redis.set("gz:ratings:scale", ratings.OLD_SCALE)
    assert 'id="rerating"' in client.get("/").get_data(as_text=True)
    assert 'id="rerating"' in client.get("/bots/bot_a").get_data(as_text=True)


def test_the_ladder_shows_each_registered_bot_by_its_name_and_a_house_bot_by_its_id(
    client: FlaskClient, store: Store, bot_url: str
) -> None:
    made = register(client, bot_url, "Named Bot")["bot"]
    store.redis.set("gz:ratings:scale", ratings.SCALE)
    for bot_id, mu in ((made["id"], 3.0), ("house:normal", 0.0), ("bot_gone", -4.0)):
        rating = Rating(bot_id, mu, 5.0, matches=40, version="1")
        store.redis.set(f"gz:rating:{bot_id}", codecs.to_json(rating))
        store.redis.zadd("gz:ladder", {bot_id: rating.conservative})
    rows = [(r["bot_id"], r["name"]) for r in client.get("/api/ladder").json["items"]]
    assert rows == [
        (made["id"], "Named Bot"),
        ("house:normal", "house:normal"),
        ("bot_gone", "bot_gone"),
    ]
    assert store.bot_names([made["id"], "house:normal", made["id"]]) == {made["id"]: "Named Bot"}
