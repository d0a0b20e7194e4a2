"""A bot author's first hour, through the API and real worker processes: a careful bot written
without the SDK (it refuses unsigned requests) registers, is verified, and plays a tournament
match; an SDK bot that raises plays on its fallbacks, says so in every answer's note, and the
arena shows the notes in the replay and counts them on the bot's record and page."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena.config import Config
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.protocol import FALLBACK_NOTE, Status
from bot_sdk.server import make_app
from referee import Card, Observation
from replays.integrity import unpack
from replays.upgrade import read_log
from service import create_app
from tests.bot_sdk.bot_sdk_support import running
from tests.outside_bot import OutsideBot
from tests.service.service_support import OPERATOR, bearer, operator
from tests.workers.crashes import wait_for


class Raising(Bot):
    name = "raising"

    def play(self, obs: Observation) -> Card:
        raise KeyError("the pig")


@pytest.fixture
def client(config: Config) -> FlaskClient:
    return create_app(dataclasses.replace(config, operator_token=OPERATOR)).test_client()


@pytest.fixture
def outside() -> Iterator[OutsideBot]:
    bot = OutsideBot()
    threading.Thread(target=bot.serve_forever, daemon=True).start()
    yield bot
    bot.shutdown()
    bot.server_close()


def _register(client: FlaskClient, name: str, url: str) -> dict[str, Any]:
    made = client.post("/api/bots", json={"name": name, "endpoint": url, "contact": "me@x.org"})
    assert made.status_code == 201, made.json
    assert made.json["bot"]["status"] == "pending"
    data: dict[str, Any] = made.json
    return data


def _verify(client: FlaskClient, made: dict[str, Any]) -> Any:
    path = f"/api/bots/{made['bot']['id']}/verify-endpoint"
    return client.post(path, headers=bearer(made["token"]))


def test_a_careful_bot_registers_and_plays_and_a_raising_bot_is_counted(
    client: FlaskClient,
    store: Store,
    outside: OutsideBot,
    start_worker: Callable[[], Any],
) -> None:
    careful = _register(client, "careful", outside.url)
    refused = _verify(client, careful)  # the bot has no secret yet: it refuses the hello
    assert refused.status_code == 422 and "HTTP 401" in refused.json["message"]
    outside.secret = careful["signing_secret"]  # the author configures the bot
    verified = _verify(client, careful)
    assert verified.status_code == 200, verified.json
    assert verified.json["status"] == "active" and verified.json["version"] == "1.0"

    with running(make_app(Raising, None, verify_signatures=False)) as url:
        raising = _register(client, "raising", url)
        assert _verify(client, raising).status_code == 200
        bots = [careful["bot"]["id"], raising["bot"]["id"]]
        body = {
            "name": "first hour",
            "participants": [*bots, "house:easy", "house:normal"],
            "format": {"duplicate": False, "matches_per_table": 1, "hands": 1},
        }
        made = client.post("/api/tournaments", json=body, headers=operator())
        assert made.status_code == 201, made.json
        tid = made.json["id"]
        assert client.post(f"/api/tournaments/{tid}/start", headers=operator()).status_code == 202
        start_worker()
        wait_for(
            lambda: client.get(f"/api/tournaments/{tid}").json["status"] == "done",
            60,
            "the tournament to finish",
        )

    (match,) = store.list_matches(page=1, per_page=10, tournament_id=tid).items
    blob = store.replay_blob(match.id)
    assert blob is not None
    log = read_log(unpack(blob))
    seat_of = {s.bot_id: s.seat for s in log.seats}
    decisions = [d for hand in log.hands for d in hand.decisions]
    mine = [d for d in decisions if d.seat == seat_of[careful["bot"]["id"]]]
    assert mine and all(d.status is Status.OK and d.note is None for d in mine)
    assert outside.refused == 1  # only the hello sent before it had the secret

    plays = [
        d for d in decisions if d.seat == seat_of[raising["bot"]["id"]] and d.kind.value == "play"
    ]
    assert len(plays) == 13 and all(d.status is Status.OK for d in plays)
    assert {d.note for d in plays} == {f"{FALLBACK_NOTE}the bot raised KeyError: 'the pig'"}

    record = client.get(f"/api/bots/{raising['bot']['id']}", headers=bearer(raising["token"]))
    assert (record.json["faults"], record.json["fallbacks"]) == (0, 13)
    listed = {b["id"]: b for b in client.get("/api/bots").json["items"]}
    assert (listed[careful["bot"]["id"]]["faults"], listed[careful["bot"]["id"]]["fallbacks"]) == (
        0,
        0,
    )
    page = client.get(f"/bots/{raising['bot']['id']}").get_data(as_text=True)
    assert "Fallbacks by the bot" in page and "<dd>13</dd>" in page
    own = store.faults(raising["bot"]["id"], page=1, per_page=50)
    assert own.total == 13 and {(f.status, f.kind) for f in own.items} == {("fallback", "play")}
    assert page.count('class="open-fault"') == 13 and "the bot raised KeyError" in page
    shown = client.get(f"/matches/{match.id}").get_data(as_text=True)
    assert "the bot raised KeyError" in shown  # in the replay viewer's data
