"""One hand as one seat saw it: the ``export`` command of ``python -m replays``.

A bot author debugging a decision needs what the bot was shown, not the whole table: this
rebuilds, with the referee, the observation of each of the seat's decisions in the hand (the
``observation`` of the request the arena sent) and puts beside it what the log says happened.
Nothing another seat could not see is in it: no other hand, no other seat's pass.
"""

from __future__ import annotations

from typing import Any

from replays.log import MatchLog
from replays.verify import replay


def seat_view(log: MatchLog, hand_number: int, seat: int) -> dict[str, Any]:
    """Seat ``seat``'s view of hand ``hand_number`` (from 1), decision by decision.

    Raises ``IndexError`` for a hand the log does not have, and the referee's errors where the
    log breaks the rules (see :func:`replays.verify.verify` for a precise report).
    """
    if not 1 <= hand_number <= len(log.hands):
        raise IndexError(f"the match has hands 1 to {len(log.hands)}, not {hand_number}")
    if not 0 <= seat <= 3:
        raise IndexError(f"seats are 0 to 3, not {seat}")
    decisions = []
    for hand, index, record, obs in replay(log):
        if hand.hand_number > hand_number:
            break
        if hand.hand_number < hand_number or record.seat != seat:
            continue
        applied = record.applied.to_json()
        del applied["seat"]
        decisions.append(
            {
                "index": index,
                "decision_id": record.decision_id,
                "kind": record.kind.value,
                "status": record.status.value,
                "latency_ms": record.latency_ms,
                "answer": record.answer,
                "fault": record.fault,
                "applied": applied,
                "request_sha256": record.request_sha256,
                "observation": obs.to_json(),
            }
        )
    hand = log.hands[hand_number - 1]
    return {
        "match_id": log.match_id,
        "hand_number": hand_number,
        "seat": log.seats[seat].to_json(),
        "decisions": decisions,
        "result": hand.result.to_json(),
    }
