"""Helpers of the service tests: registering bots, operator headers, played and sealed logs."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from arena.match_loop import InProcessSeat, play_match
from bot_sdk.examples.lowest_card import LowestCard
from referee import Game, Rules
from replays.deals import DealSource, deal_seed
from replays.integrity import key_id_of, private_key_from_pem, seal
from replays.log import SeatInfo, TimeControl
from service import Config

OPERATOR = "operator-token-for-tests"


def operator() -> dict[str, str]:
    return {"Authorization": f"Bearer {OPERATOR}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def register(
    client: FlaskClient, url: str, name: str = "alpha", *, verify: bool = True, **extra: Any
) -> dict[str, Any]:
    """Register a bot and (``verify``) verify its endpoint, so that it is active; its record
    (``bot``), token and secret."""
    body = {"name": name, "endpoint": url, "contact": "me@example.com", **extra}
    response = client.post("/api/bots", json=body)
    assert response.status_code == 201, response.json
    data: dict[str, Any] = response.json
    if verify:
        path = f"/api/bots/{data['bot']['id']}/verify-endpoint"
        verified = client.post(path, headers=bearer(data["token"]))
        assert verified.status_code == 200, verified.json
        data["bot"] = verified.json
    return data


def sealed_log(
    config: Config,
    match_id: str,
    bots: list[str],
    *,
    tournament_id: str | None = None,
    seed: int = 1,
    committed: tuple[bytes, str] | None = None,
) -> dict[str, Any]:
    """A real one-hand match among ``bots`` (in seat order), sealed with the test arena's key:
    dealt from a practice ``seed``, or from a tournament's ``committed`` (secret, deal label)."""
    deals = (
        DealSource.practice(str(seed)) if committed is None else DealSource.committed(*committed)
    )
    game = Game(Rules(fixed_hands=1), seed=seed if committed is None else deal_seed(*committed))
    players = [
        InProcessSeat(LowestCard(), SeatInfo(seat, bot_id, bot_id))
        for seat, bot_id in enumerate(bots)
    ]
    log = play_match(
        game,
        players,
        match_id=match_id,
        deals=deals,
        time_control=TimeControl(1000, 30000, 5),
        tournament_id=tournament_id,
        table_id="table-1" if tournament_id else None,
    )
    assert config.replay_key_path is not None
    key = private_key_from_pem(config.replay_key_path.read_bytes())
    return seal(log.to_json(), key, key_id=key_id_of(key.public_key()))
