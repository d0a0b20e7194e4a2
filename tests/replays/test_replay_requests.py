"""The exact request each bot was sent can be rebuilt from the log: its recorded SHA-256 is
checked by verify, and a changed field of the log breaks it."""

from __future__ import annotations

import hashlib
import json

import pytest

from arena.match_loop import Reply, SeatPlayer
from bot_sdk.protocol import DecisionRequest
from bot_sdk.schemas import validate_request
from replays.log import MatchLog
from replays.upgrade import read_log
from replays.verify import replay, request_body, verify
from tests.replays.replay_support import (
    PROFILES,
    ScriptedSeat,
    always,
    at_random,
    house_seat,
    record,
    reloaded,
)


class CapturingSeat(ScriptedSeat):
    """Keeps the exact body of every request it was sent, as the bot's server received it."""

    def __init__(self, seat: int) -> None:
        super().__init__(seat, at_random(f"capture-{seat}", 0.1), seed=f"capture-{seat}")
        self.bodies: dict[str, bytes] = {}

    def ask(self, request: DecisionRequest) -> Reply:
        self.bodies[request.decision_id] = request.body
        return super().ask(request)


@pytest.fixture(scope="module")
def captured() -> tuple[MatchLog, dict[str, bytes]]:
    seats = [CapturingSeat(seat) for seat in range(4)]
    log = record(PROFILES["pass_next"], 5, list(seats))
    return log, {ident: body for seat in seats for ident, body in seat.bodies.items()}


def test_every_request_is_rebuilt_byte_for_byte(
    captured: tuple[MatchLog, dict[str, bytes]],
) -> None:
    log, bodies = captured
    asked = 0
    for _, _, decision, obs in replay(log):
        if decision.decision_id in bodies:
            body = request_body(log, decision, obs)
            assert body == bodies[decision.decision_id]
            assert hashlib.sha256(body).hexdigest() == decision.request_sha256
            asked += 1
    assert asked == len(bodies) > 100


def test_verify_checks_every_recorded_hash(captured: tuple[MatchLog, dict[str, bytes]]) -> None:
    log, bodies = captured
    result = verify(log)
    assert result.ok, result.discrepancy
    assert result.requests_checked == len(bodies)
    assert verify(log, check_requests=False).requests_checked == 0


def test_a_rebuilt_request_is_a_valid_protocol_message(
    captured: tuple[MatchLog, dict[str, bytes]],
) -> None:
    log, _ = captured
    for hand, index, decision, obs in replay(log):
        if hand.hand_number == 1 and index < 12:
            validate_request(json.loads(request_body(log, decision, obs)))


def _hashed_log() -> MatchLog:
    """Seats 1 and 3 over "HTTP", seat 1 always late so that its time bank runs down."""
    players: list[SeatPlayer] = [
        house_seat(0, "h-0"),
        ScriptedSeat(1, always("late"), seed="h-1"),
        house_seat(2, "h-2"),
        ScriptedSeat(3, always("ok"), seed="h-3"),
    ]
    return record(PROFILES["standard"], 6, players)


@pytest.mark.parametrize(
    ("field", "value"),
    [("time_bank_ms", 123), ("decision_id", "x:1:0"), ("time_limit_ms", 999)],
)
def test_a_changed_request_field_breaks_its_hash(field: str, value: object) -> None:
    data = reloaded(_hashed_log().to_json())
    hand = data["hands"][0]
    index = next(i for i, d in enumerate(hand["decisions"]) if d["request_sha256"])
    hand["decisions"][index][field] = value
    result = verify(read_log(data))
    assert not result.ok and result.discrepancy is not None
    assert (result.discrepancy.hand, result.discrepancy.decision) == (1, index)
    assert "the request rebuilt from the log does not match its SHA-256" in str(result.discrepancy)


def test_a_changed_match_id_is_found_at_the_first_decision() -> None:
    """The match id is in every request and every decision id."""
    data = reloaded(_hashed_log().to_json())
    data["match_id"] = "another-match"
    result = verify(read_log(data), check_requests=False)
    assert result.discrepancy is not None
    assert (result.discrepancy.hand, result.discrepancy.decision) == (1, 0)
    assert "decision id 'tournament-1:table-6:match-1:1:0' where 'another-match:1:0' is due" in (
        result.discrepancy.message
    )


def test_the_bank_is_spent_by_late_answers_and_each_request_says_what_is_left() -> None:
    log = _hashed_log()
    banks = [d.time_bank_ms or 0 for hand in log.hands for d in hand.decisions if d.seat == 1]
    assert banks[0] == log.time_control.bank_ms
    assert banks == sorted(banks, reverse=True) and banks[-1] == 0
    assert verify(log).ok
