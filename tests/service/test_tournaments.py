"""Tournaments and schedules: the operator's endpoints, validation, the RQ job."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient
from rq import Queue

from arena.records import HOUSE_PARTICIPANTS, TournamentStatus
from arena.store import Store
from replays.deals import commitment_of
from tests.service.service_support import bearer, operator, register


@pytest.fixture
def bot_id(client: FlaskClient, bot_url: str) -> str:
    bot_id: str = register(client, bot_url)["bot"]["id"]
    return bot_id


def create(client: FlaskClient, **body: Any) -> Any:
    return client.post("/api/tournaments", json=body, headers=operator())


def test_create_get_list_start_cancel(client: FlaskClient, bot_id: str, store: Store) -> None:
    made = create(
        client,
        name="cup",
        participants=[bot_id, "house:easy"],
        format={"matches_per_table": 2, "hands": 4},
        rules={"variants": ["pass_3"], "max_hands": 20},
        time_control={"decision_ms": 500},
    )
    assert made.status_code == 201, made.json
    tournament = made.json
    assert tournament["status"] == "created" and tournament["progress"] == {
        "done": 0,
        "failed": 0,
        "total": 0,
    }
    assert tournament["format"] == {
        "kind": "round_robin",
        "duplicate": True,
        "matches_per_table": 2,
        "hands": 4,
    }
    assert tournament["rules"]["variants"] == ["pass_3"]
    assert tournament["time_control"] == {"decision_ms": 500, "bank_ms": 30000, "fault_limit": 5}
    tid = tournament["id"]
    assert client.get(f"/api/tournaments/{tid}").json == tournament
    assert client.get("/api/tournaments").json["total"] == 1
    started = client.post(f"/api/tournaments/{tid}/start", headers=operator())
    assert started.status_code == 202 and started.json["status"] == "queued"
    (job,) = Queue("arena", connection=store.redis).jobs
    assert job.func_name == "workers.jobs.run_tournament" and job.args == (tid,)
    again = client.post(f"/api/tournaments/{tid}/start", headers=operator())
    assert again.status_code == 409 and "queued" in again.json["message"]
    cancelled = client.post(f"/api/tournaments/{tid}/cancel", headers=operator())
    assert cancelled.json["status"] == "cancelled"
    assert Queue("arena", connection=store.redis).count == 0
    assert client.post(f"/api/tournaments/{tid}/cancel", headers=operator()).status_code == 409
    for action in ("start", "cancel"):
        assert client.post(f"/api/tournaments/nope/{action}", headers=operator()).status_code == 404
    assert client.get("/api/tournaments/nope").status_code == 404
    assert client.get("/api/tournaments/nope/standings").status_code == 404


def test_the_deal_commitment_is_public_from_the_start_and_the_secret_only_at_the_end(
    client: FlaskClient, bot_id: str, store: Store
) -> None:
    made = create(client, name="cup", participants=[bot_id]).json
    commitment, tid = made["deal_commitment"], made["id"]
    assert len(commitment) == 64 and made["deal_secret"] is None
    started = client.post(f"/api/tournaments/{tid}/start", headers=operator()).json
    assert (started["deal_commitment"], started["deal_secret"]) == (commitment, None)
    assert client.get("/api/tournaments").json["items"][0]["deal_secret"] is None
    page = client.get(f"/tournaments/{tid}").get_data(as_text=True)
    assert commitment in page and 'id="deal-secret-pending"' in page
    secret = store.deal_secret(tid)
    assert secret.hex() not in client.get(f"/api/tournaments/{tid}").get_data(as_text=True)
    cancelled = client.post(f"/api/tournaments/{tid}/cancel", headers=operator()).json
    assert cancelled["deal_secret"] == secret.hex()
    assert commitment_of(bytes.fromhex(cancelled["deal_secret"])) == commitment
    assert client.get(f"/api/tournaments/{tid}").json["deal_secret"] == secret.hex()
    assert secret.hex() in client.get(f"/tournaments/{tid}").get_data(as_text=True)
    other = create(client, name="another", participants=[bot_id]).json
    assert other["deal_commitment"] != commitment  # a fresh secret for every tournament


def test_operator_endpoints_need_the_operator_token(client: FlaskClient, bot_url: str) -> None:
    owner = register(client, bot_url)["token"]
    body = {"name": "cup", "participants": ["house:easy"]}
    assert client.post("/api/tournaments", json=body).status_code == 401
    for token in ("wrong", owner):
        response = client.post("/api/tournaments", json=body, headers=bearer(token))
        assert response.status_code == 403 and response.json["error"] == "forbidden"
    assert client.post("/api/tournaments/x/start").status_code == 401
    assert client.get("/api/schedules").status_code == 401


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"participants": ["BOT"]}, "name", "Missing data"),
        ({"name": "c"}, "participants", "Missing data"),
        ({"name": "c", "participants": []}, "participants", "Length"),
        ({"name": "c", "participants": "BOT"}, "participants", "Not a valid list"),
        ({"name": "c", "participants": ["BOT", "BOT"]}, "participants", "once"),
        ({"name": "c", "participants": ["bot_ghost"]}, "participants", "not a registered bot"),
        ({"name": "c", "participants": ["house:easy"]}, "participants", "at least one"),
        ({"name": "c", "participants": ["BOT"], "rules": {"jokers": 2}}, "rules", "unknown rules"),
        ({"name": "c", "participants": ["BOT"], "rules": []}, "rules", "Not a valid mapping"),
        ({"name": "c", "participants": ["BOT"], "format": {"hands": 0}}, "format.hands", ""),
        ({"name": "c", "participants": ["BOT"], "format": {"kind": "swiss"}}, "format.kind", ""),
        (
            {"name": "c", "participants": ["BOT"], "time_control": {"decision_ms": "x"}},
            "time_control.decision_ms",
            "Not a valid integer",
        ),
        ({"name": "c" * 101, "participants": ["BOT"]}, "name", "Length"),
        ({"name": "c", "participants": ["BOT"], "rated": "maybe"}, "rated", "boolean"),
    ],
)
def test_create_validates_every_field(
    client: FlaskClient, bot_id: str, body: dict[str, Any], field: str, says: str
) -> None:
    if "participants" in body and isinstance(body["participants"], list):
        body["participants"] = [bot_id if p == "BOT" else p for p in body["participants"]]
    elif body.get("participants") == "BOT":
        body["participants"] = bot_id
    response = create(client, **body)
    assert response.status_code == 422, response.json
    assert says in " ".join(response.json["errors"][field])


def test_inactive_bots_cannot_enter(client: FlaskClient, bot_url: str) -> None:
    data = register(client, bot_url)
    bot_id = data["bot"]["id"]
    client.post(f"/api/bots/{bot_id}/pause", headers=bearer(data["token"]))
    response = create(client, name="cup", participants=[bot_id])
    assert response.status_code == 422 and "paused" in response.json["errors"]["participants"][0]


def test_tournament_list_pagination(client: FlaskClient, bot_id: str) -> None:
    for n in range(3):
        assert create(client, name=f"cup {n}", participants=[bot_id]).status_code == 201
    page = client.get("/api/tournaments?per_page=2&page=2").json
    assert page["total"] == 3 and [t["name"] for t in page["items"]] == ["cup 0"]


def test_schedules(client: FlaskClient) -> None:
    template = {"name": "nightly", "rules": {"max_hands": 10}}
    bad = client.post(
        "/api/schedules", json={"cron": "every night", "template": template}, headers=operator()
    )
    assert bad.status_code == 422 and "cron" in bad.json["errors"]
    made = client.post(
        "/api/schedules", json={"cron": "0 3 * * *", "template": template}, headers=operator()
    )
    assert made.status_code == 201 and made.json["template"]["rules"]["max_hands"] == 10
    listed = client.get("/api/schedules", headers=operator()).json
    assert [s["id"] for s in listed] == [made.json["id"]]
    path = f"/api/schedules/{made.json['id']}"
    assert client.delete(path, headers=operator()).status_code == 204
    assert client.delete(path, headers=operator()).status_code == 404


def test_a_tournament_done_with_failures_keeps_its_secret_until_cancelled(
    client: FlaskClient, bot_id: str, store: Store
) -> None:
    tid = create(client, name="cup", participants=[bot_id, "house:easy"]).json["id"]
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    store.set_tournament_total(tid, 1)
    store.create_match(f"{tid}-m1", seats=[bot_id, *HOUSE_PARTICIPANTS], tournament_id=tid)
    assert store.mark_match_failed(f"{tid}-m1", "ValueError: boom")
    assert not store.mark_match_failed(f"{tid}-m1", "ValueError: boom")  # once
    shown = client.get(f"/api/tournaments/{tid}").json
    assert shown["status"] == "done_with_failures" and shown["deal_secret"] is None
    assert shown["failures"] == [{"match_id": f"{tid}-m1", "reason": "ValueError: boom"}]
    cancelled = client.post(f"/api/tournaments/{tid}/cancel", headers=operator())
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    assert commitment_of(bytes.fromhex(cancelled.json["deal_secret"])) == shown["deal_commitment"]


def test_requeue_failed_queues_exactly_the_failed_matches_again(
    client: FlaskClient, bot_id: str, store: Store
) -> None:
    tid = create(client, name="cup", participants=[bot_id]).json["id"]
    for match_id in ("f1", "f2"):
        store.create_match(match_id, seats=[bot_id, *HOUSE_PARTICIPANTS], tournament_id=tid)
    store.set_tournament_total(tid, 2)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    nothing = client.post(f"/api/tournaments/{tid}/requeue-failed", headers=operator())
    assert nothing.status_code == 409
    assert nothing.json["message"] == f"tournament {tid} has no failed match to queue again"
    unknown = client.post("/api/tournaments/t_none/requeue-failed", headers=operator())
    assert unknown.status_code == 404
    assert unknown.json["message"] == "there is no tournament t_none"

    assert store.mark_match_failed("f1", "the bot's host is gone")
    answer = client.post(f"/api/tournaments/{tid}/requeue-failed", headers=operator())
    assert answer.status_code == 202
    assert answer.json["progress"] == {"done": 0, "failed": 0, "total": 2}
    assert answer.json["status"] == "running"
    assert Queue("arena", connection=store.redis).job_ids == ["match-f1"]
