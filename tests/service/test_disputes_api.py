"""Disputes through the API: who may file on what, one open dispute per decision, the owner's
limit, the evidence shown to its owner and the operator only (and, while the deal is
embargoed, nothing of another seat's cards), rulings by the operator alone, and the public
record of a tournament's rulings (tests/workers/test_disputes.py plays and replays matches)."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena import disputes
from arena.context import Arena
from arena.records import Format, TournamentSpec, TournamentStatus
from arena.store import Store
from referee import DECK, Rules
from replays.log import MatchLog, TimeControl
from replays.upgrade import read_log
from service import Config, create_app
from tests.replays.divergence_support import concealed
from tests.service.service_support import bearer, operator, register, sealed_log

LABEL = "t1:d1"


class Table:
    """A running tournament whose deal is played by two matches; the first recorded (so the
    deal is under embargo until the second is), with an owner's bot in seat 0."""

    def __init__(self, client: FlaskClient, config: Config, store: Store, bot_url: str) -> None:
        made = register(client, bot_url, "mine")
        self.bot, self.auth = made["bot"]["id"], bearer(made["token"])
        self.other = bearer(register(client, bot_url, "theirs")["token"])
        seats = [self.bot, "house:easy", "house:normal", "house:hard"]
        spec = TournamentSpec(
            "cup", tuple(seats), Format(), Rules(fixed_hands=1), TimeControl(1000, 30000, 5),
            rated=False,
        )  # fmt: skip
        self.tid = store.create_tournament(spec)
        self.match = f"{self.tid}-t1-d1-r1"
        for rotation in (1, 2):
            store.create_match(
                f"{self.tid}-t1-d1-r{rotation}", seats=seats, tournament_id=self.tid,
                deal_label=LABEL,
            )  # fmt: skip
        store.set_tournament_total(self.tid, 2)
        store.move_tournament(
            self.tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED]
        )
        sealed = sealed_log(
            config, self.match, seats, tournament_id=self.tid,
            committed=(store.deal_secret(self.tid), LABEL),
        )  # fmt: skip
        assert store.record_result(self.match, sealed)
        self.log: MatchLog = read_log(sealed)
        self.mine = [i for i, r in enumerate(self.log.hands[0].decisions) if r.seat == 0]
        self.theirs = next(i for i, r in enumerate(self.log.hands[0].decisions) if r.seat == 1)

    def file(self, client: FlaskClient, headers: dict[str, str], **body: Any) -> Any:
        body = {"match_id": self.match, "hand": 1, "statement": "my bot was right", **body}
        return client.post("/api/disputes", json=body, headers=headers)


@pytest.fixture
def table(client: FlaskClient, config: Config, store: Store, bot_url: str) -> Table:
    return Table(client, config, store, bot_url)


def _cards_in(value: Any) -> set[str]:
    text = json.dumps(value)
    return {name for name in DECK.names() if f'"{name}"' in text}


def test_an_owner_files_on_its_own_bots_decisions_only_once_each(
    client: FlaskClient, table: Table
) -> None:
    decision = table.mine[2]
    assert table.file(client, {}, decision=decision).status_code == 401
    refused = table.file(client, table.other, decision=decision)
    assert refused.status_code == 403 and "did not play" in refused.json["message"]
    theirs = table.file(client, table.auth, decision=table.theirs)
    assert theirs.status_code == 403 and "seat 1's, not your bot's" in theirs.json["message"]
    assert table.file(client, operator(), decision=decision).status_code == 403
    for wrong, words in (
        ({"hand": 2}, "hands 1 to 1"),
        ({"decision": 999}, "decisions 0 to"),
        ({"statement": "   "}, "statement"),
    ):
        answer = table.file(client, table.auth, **{"decision": decision, **wrong})
        assert answer.status_code == 422 and words in answer.json["message"], answer.json
    filed = table.file(client, table.auth, decision=decision)
    assert filed.status_code == 201, filed.json
    body = filed.json
    assert (body["bot_id"], body["seat"], body["hand"], body["decision"], body["status"]) == (
        table.bot, 0, 1, decision, "open",
    )  # fmt: skip
    again = table.file(client, table.auth, decision=decision)
    assert again.status_code == 409 and body["id"] in again.json["message"]
    assert table.file(client, table.auth).status_code == 201  # the whole hand is another claim
    missing = client.post(
        "/api/disputes", json={"match_id": "m_nope", "hand": 1, "statement": "x"},
        headers=table.auth,
    )  # fmt: skip
    assert missing.status_code == 404


def test_the_evidence_is_the_owners_and_shows_no_other_seats_cards_under_embargo(
    client: FlaskClient, config: Config, store: Store, table: Table
) -> None:
    decision = table.mine[3]
    dispute = table.file(client, table.auth, decision=decision).json
    path = f"/api/disputes/{dispute['id']}"
    pending = client.get(path, headers=table.auth).json
    assert pending["evidence_ready"] is False and pending["evidence"] is None
    assert client.get(f"/api/matches/{table.match}/replay").status_code == 409  # embargoed
    disputes.build_evidence(Arena(config, store), dispute["id"])  # the job filing queued
    shown = client.get(path, headers=table.auth).json
    report = shown["evidence"]
    assert shown["evidence_ready"] and report["seal"] == "ok" and report["rerun"]["ok"]
    (item,) = report["decisions"]
    assert item["index"] == decision and item["request"]["body"]
    # played in-process here, so no hash was recorded: tests/workers/test_disputes.py has one
    assert item["request"]["recorded_sha256"] is None and item["request"]["matches"] is False
    asked = item["reask"]  # the registered bot, asked again now at its endpoint
    assert asked["asked"] and asked["status"] == "ok" and asked["latency_ms"] is not None
    hidden = concealed(table.log, 0, 1, decision)
    assert hidden and not _cards_in(report) & set(hidden.names())
    assert client.get(path, headers=operator()).json["evidence"] == report
    refused = client.get(path, headers=table.other)
    assert refused.status_code == 403 and "open" in refused.json["message"]
    assert client.get(path).status_code == 403


def test_the_operator_lists_and_rules_and_a_tournaments_rulings_are_public(
    client: FlaskClient, table: Table, config: Config, store: Store
) -> None:
    dispute = table.file(client, table.auth, decision=table.mine[0]).json
    path = f"/api/disputes/{dispute['id']}"
    listed = client.get("/api/disputes?status=open", headers=operator()).json
    assert [d["id"] for d in listed["items"]] == [dispute["id"]]
    assert client.get("/api/disputes", headers=table.auth).json["total"] == 1
    assert client.get("/api/disputes").status_code == 403
    public = f"/api/disputes?tournament={table.tid}"
    assert client.get(public).json["items"] == []  # nothing ruled yet

    ruling = {"status": "rejected", "reason": "the bot's answer was late by its own clock"}
    assert client.post(f"{path}/ruling", json=ruling, headers=table.auth).status_code == 403
    for wrong in (
        {**ruling, "reason": ""},
        {**ruling, "remedy": "replay"},
        {"status": "upheld", "reason": "yes"},
        {"status": "upheld", "reason": "yes", "remedy": "rewind"},
    ):
        answer = client.post(f"{path}/ruling", json=wrong, headers=operator())
        assert answer.status_code == 422, (wrong, answer.json)
    strike = {"status": "upheld", "reason": "yes", "remedy": "strike"}
    unbuilt = client.post(f"{path}/ruling", json=strike, headers=operator())
    assert unbuilt.status_code == 409 and "not built yet" in unbuilt.json["message"]
    disputes.build_evidence(Arena(config, store), dispute["id"])
    no_fault = client.post(f"{path}/ruling", json=strike, headers=operator())
    assert no_fault.status_code == 409 and "no fault to strike" in no_fault.json["message"]
    ruled = client.post(f"{path}/ruling", json=ruling, headers=operator())
    assert ruled.status_code == 200, ruled.json
    assert ruled.json["status"] == "rejected" and ruled.json["ruling"]["reason"] == ruling["reason"]
    again = client.post(f"{path}/ruling", json=ruling, headers=operator())
    assert again.status_code == 409 and "final" in again.json["message"]
    assert client.post(f"{path}/remedy", headers=operator()).status_code == 409

    assert [d["id"] for d in client.get(public).json["items"]] == [dispute["id"]]
    anyone = client.get(path).json
    assert anyone["evidence"] is None and anyone["dispute"]["status"] == "rejected"
    sealed = anyone["sealed_ruling"]
    assert sealed["format"] == "gongzhu-ruling/1" and sealed["integrity"]["signature"]
    assert sealed["ruling"] == "rejected" and sealed["match_id"] == table.match
    assert client.get("/api/disputes?status=open", headers=operator()).json["total"] == 0

    page = client.get(f"/disputes/{dispute['id']}")
    assert page.status_code == 200 and b"late by its own clock" in page.data
    shown = page.get_data(as_text=True)  # its times as <time>, readable, the ISO in the tooltip
    assert shown.count("<time datetime=") == 2
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d", re.sub(r"<[^>]*>", "", shown))
    assert b'id="seat-view"' not in page.data  # the deal is still under embargo
    listed_page = client.get(f"/tournaments/{table.tid}")
    assert b'id="rulings"' in listed_page.data and dispute["id"].encode() in listed_page.data
    still_open = table.file(client, table.auth, decision=table.mine[1]).json
    assert client.get(f"/disputes/{still_open['id']}").status_code == 403


def test_an_owner_files_a_limited_number_of_disputes(
    config: Config, store: Store, bot_url: str
) -> None:
    app: Flask = create_app(dataclasses.replace(config, dispute_limit="2 per day"))
    client = app.test_client()
    table = Table(client, config, store, bot_url)
    assert table.file(client, table.auth, decision=table.mine[0]).status_code == 201
    assert table.file(client, table.auth, decision=table.mine[1]).status_code == 201
    limited = table.file(client, table.auth, decision=table.mine[2])
    assert limited.status_code == 429 and "Retry-After" in limited.headers
