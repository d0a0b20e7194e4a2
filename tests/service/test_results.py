"""Recorded matches: exactly-once results, standings, the ladder, replays and verification."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena import matches
from arena.records import Format, TournamentSpec, TournamentStatus
from arena.store import Store, keys
from referee import Rules
from replays.integrity import generate_key, key_id_of, pack, public_key_from_pem, seal
from replays.log import TimeControl
from service import Config, create_app
from service.pages import views
from service.pages.views import viewer_data
from tests.service.service_support import operator, sealed_log

BOTS = ["bot_a", "bot_b", "bot_c", "house:easy"]


@pytest.fixture
def recorded(store: Store, config: Config) -> dict[str, Any]:
    """Two matches of one tournament among the same four participants."""
    spec = TournamentSpec("cup", tuple(BOTS), Format(), Rules(), TimeControl(1000, 30000, 5))
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, 2)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    logs = [sealed_log(config, f"m{n}", BOTS, tournament_id=tid, seed=n) for n in (1, 2)]
    for log in logs:
        assert store.record_result(log["match_id"], log)
    return {"tournament": tid, "logs": logs}


def test_record_result_counts_once(
    store: Store, config: Config, recorded: dict[str, Any], client: FlaskClient
) -> None:
    tid, first = recorded["tournament"], recorded["logs"][0]
    before = client.get(f"/api/tournaments/{tid}/standings").json
    ladder_before = client.get("/api/ladder").json
    assert store.record_result("m1", first) is False  # a replayed job
    assert client.get(f"/api/tournaments/{tid}/standings").json == before
    assert client.get("/api/ladder").json == ladder_before
    assert len(store.rating_history("bot_a")) == 2
    tournament = client.get(f"/api/tournaments/{tid}").json
    assert (
        tournament["progress"] == {"done": 2, "failed": 0, "total": 2}
        and tournament["status"] == "done"
    )


def test_standings_and_ladder(client: FlaskClient, recorded: dict[str, Any]) -> None:
    tid, logs = recorded["tournament"], recorded["logs"]
    rows = client.get(f"/api/tournaments/{tid}/standings").json["standings"]
    assert sorted(r["bot_id"] for r in rows) == sorted(BOTS)
    assert all(r["matches"] == 2 for r in rows)
    assert sum(r["wins"] for r in rows) >= 2 and rows[0]["rank"] == 1
    for row in rows:
        seat = BOTS.index(row["bot_id"])
        places = [log["places"][seat] for log in logs]
        assert row["average_placement"] == pytest.approx(sum(places) / 2, abs=1e-3)
    ladder = client.get("/api/ladder").json
    assert ladder["total"] == 4
    ratings = [r["rating"] for r in ladder["items"]]
    assert ratings == sorted(ratings, reverse=True)
    for row in ladder["items"]:
        assert row["rating"] == pytest.approx(row["mu"] - 3 * row["sigma"])
        assert row["matches"] == 2 and 0 <= row["fault_rate"] <= 1
    history = client.get("/api/bots/bot_a/rating-history").json["history"]
    assert [p["match_id"] for p in history] == ["m1", "m2"]
    assert client.get("/api/bots/nobody/rating-history").status_code == 404
    page = client.get("/api/ladder?per_page=3&page=2").json
    assert [r["rank"] for r in page["items"]] == [4]


def test_matches_listing_filters_and_pages(client: FlaskClient, recorded: dict[str, Any]) -> None:
    tid = recorded["tournament"]
    every = client.get("/api/matches").json
    assert every["total"] == 2 and [m["id"] for m in every["items"]] == ["m2", "m1"]
    assert client.get(f"/api/matches?tournament={tid}&bot=bot_b").json["total"] == 2
    assert client.get("/api/matches?bot=bot_zzz").json["total"] == 0
    assert client.get("/api/matches?tournament=t_none").json["total"] == 0
    paged = client.get("/api/matches?per_page=1&page=2").json
    assert [m["id"] for m in paged["items"]] == ["m1"]
    one = client.get("/api/matches/m1").json
    assert one["status"] == "done" and one["seats"] == BOTS and one["tournament_id"] == tid
    assert one["result"]["hands"] == 1 and sorted(one["result"]["places"])[0] == 1
    missing = client.get("/api/matches/nope")
    assert missing.status_code == 404 and missing.json["error"] == "not_found"


def _verified_as_stored(client: FlaskClient, store: Store, log: dict[str, Any]) -> Any:
    """What ``POST /verify`` answers once the stored log of its match is replaced by ``log``
    (put in the archive, and named by the match's record)."""
    match_id = log["match_id"]
    digest = store.archive.put(pack(log))
    store.redis.hset(keys.match(match_id), "log_sha256", digest)
    return client.post(f"/api/matches/{match_id}/verify").json


def test_replay_public_key_and_verification(
    client: FlaskClient, recorded: dict[str, Any], store: Store
) -> None:
    log = recorded["logs"][0]
    assert client.get("/api/matches/m1/replay").json == log
    pem = client.get("/api/replays/public-key")
    assert pem.status_code == 200 and public_key_from_pem(pem.data)
    report = client.post("/api/matches/m1/verify").json
    assert report["ok"] is True and report["integrity"] == "ok" and report["hands"] == 1
    assert report["discrepancy"] is None
    assert client.get("/api/matches/nope/replay").status_code == 404
    assert client.post("/api/matches/nope/verify").status_code == 404
    # a changed stored log is caught
    tampered = {**log, "deals": {**log["deals"], "seed": "99"}}
    report = _verified_as_stored(client, store, tampered)
    assert report["ok"] is False and "changed after it was sealed" in report["integrity"]
    assert isinstance(report["discrepancy"], str)  # other deals: the referee disagrees too


def test_a_log_changed_where_the_referee_does_not_look_fails_on_its_seal_alone(
    client: FlaskClient, recorded: dict[str, Any], store: Store
) -> None:
    log = recorded["logs"][0]
    report = _verified_as_stored(client, store, {**log, "started_at": "2000-01-01T00:00:00+00:00"})
    assert report["integrity"] == "the log was changed after it was sealed (SHA-256 mismatch)"
    assert report["discrepancy"] is None and report["ok"] is False


def test_a_log_sealed_with_another_key_is_not_the_arenas(
    client: FlaskClient, recorded: dict[str, Any], store: Store
) -> None:
    unsealed = {k: v for k, v in recorded["logs"][0].items() if k != "integrity"}
    other = generate_key()
    report = _verified_as_stored(
        client, store, seal(unsealed, other, key_id=key_id_of(other.public_key()))
    )
    assert report["integrity"].startswith("no public key for key id")
    assert report["discrepancy"] is None and report["ok"] is False


def test_a_stored_log_that_cannot_be_read_is_reported_not_verified(
    client: FlaskClient, recorded: dict[str, Any], store: Store
) -> None:
    log = recorded["logs"][0]
    report = _verified_as_stored(client, store, {**log, "format": "gongzhu-replay/99"})
    assert report["ok"] is False and "gongzhu-replay/99" in report["discrepancy"]
    assert "changed after it was sealed" in report["integrity"]


def test_a_verification_is_computed_once_and_answered_from_the_store(
    client: FlaskClient,
    store: Store,
    recorded: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A flood of /verify runs the referee once per log, not once per request; a stored log
    that was changed (a different blob) is verified afresh."""
    runs: list[str] = []
    real = matches.verify

    def counted(log: Any, **kwargs: Any) -> Any:
        runs.append(log.match_id)
        return real(log, **kwargs)

    monkeypatch.setattr(matches, "verify", counted)
    answers = [client.post("/api/matches/m2/verify").json for _ in range(5)]
    assert runs == ["m2"] and all(a == answers[0] for a in answers) and answers[0]["ok"]
    log = recorded["logs"][1]
    changed = _verified_as_stored(client, store, {**log, "rated": not log["rated"]})
    assert runs == ["m2", "m2"] and changed["ok"] is False


def test_verifications_are_limited_per_address_and_not_for_the_operator(
    config: Config, recorded: dict[str, Any]
) -> None:
    client = create_app(dataclasses.replace(config, verify_limit="3 per minute")).test_client()

    def asked(address: str, headers: dict[str, str] | None = None) -> int:
        return client.post(
            "/api/matches/m1/verify", headers=headers, environ_base={"REMOTE_ADDR": address}
        ).status_code

    assert [asked("203.0.113.7") for _ in range(4)] == [200, 200, 200, 429]
    refused = client.post("/api/matches/m1/verify", environ_base={"REMOTE_ADDR": "203.0.113.7"})
    assert refused.json["error"] == "rate_limited" and "3 per 1 minute" in refused.json["message"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert asked("203.0.113.8") == 200  # another client
    assert [asked("203.0.113.7", operator()) for _ in range(5)] == [200] * 5


def test_a_match_announced_before_it_finishes(store: Store, config: Config) -> None:
    store.create_match("m9", seats=BOTS)
    store.mark_match_running("m9")
    match = store.get_match("m9")
    assert match is not None and match.status == "running" and match.result is None
    assert store.replay_blob("m9") is None
    log = sealed_log(config, "m9", BOTS)
    assert store.record_result("m9", log) and not store.record_result("m9", log)
    store.mark_match_running("m9")
    done = store.get_match("m9")
    assert done is not None and done.status == "done" and done.result is not None
    assert store.list_matches(page=1, per_page=10).total == 1
    with pytest.raises(ValueError, match="m9"):
        store.record_result("m10", log)


def test_the_replay_viewer_computes_a_log_once_and_shows_current_names(
    store: Store, recorded: dict[str, Any], client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    viewer_data.cache_clear()
    first = client.get("/matches/m1")
    assert first.status_code == 200
    # the bot is renamed: the page shows its current name, the cached data keeps the logged one
    monkeypatch.setattr(views, "names", lambda ids: {"bot_a": "Renamed", "house:easy": "easy"})
    again = client.get("/matches/m1")
    assert again.status_code == 200 and b"Renamed" in again.data and b"Renamed" not in first.data
    info = viewer_data.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    blob = store.replay_blob("m1")
    assert blob is not None
    assert [seat["name"] for seat in viewer_data(blob)["seats"]] == BOTS


def test_a_finished_match_is_embargoed_while_its_deal_is_played_unless_the_operator_asks(
    store: Store, config: Config, client: FlaskClient
) -> None:
    spec = TournamentSpec("cup", tuple(BOTS), Format(), Rules(), TimeControl(1000, 30000, 5))
    tid = store.create_tournament(spec)
    for match_id in ("e1", "e2"):  # two rotations of one deal
        store.create_match(match_id, seats=BOTS, tournament_id=tid, deal_label="t1:d1")
    store.set_tournament_total(tid, 2)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    assert client.get("/api/matches/zz/replay").json["message"] == "there is no match zz"
    unplayed = client.get("/api/matches/e1/replay")
    assert unplayed.status_code == 404
    assert unplayed.json["message"] == "match e1 has no replay yet: it has not finished"
    deal = (store.deal_secret(tid), "t1:d1")
    assert store.record_result(
        "e1", sealed_log(config, "e1", BOTS, tournament_id=tid, committed=deal)
    )

    for answer in (client.get("/api/matches/e1/replay"), client.post("/api/matches/e1/verify")):
        assert answer.status_code == 409, answer.json
        assert answer.json["error"] == "embargoed"
        assert f"in tournament {tid} (1 match of deal t1:d1 unfinished)" in answer.json["message"]
    assert client.get("/api/matches/e1/replay", headers=operator()).json["match_id"] == "e1"
    assert client.post("/api/matches/e1/verify", headers=operator()).json["ok"] is True

    assert store.record_result(
        "e2", sealed_log(config, "e2", BOTS, tournament_id=tid, committed=deal)
    )
    assert client.get("/api/matches/e1/replay").json["match_id"] == "e1"
    report = client.post("/api/matches/e1/verify").json  # the tournament is over: secret revealed
    assert report["ok"] is True and report["deals_checked"] is True
