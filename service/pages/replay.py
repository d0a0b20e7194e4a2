"""The replay viewer's data: every state of a match, precomputed from its log by walking the
referee (:func:`replays.verify.replay`), so the page's script only displays what is here and has
no copy of the rules.

Each hand has frames: frame 0 is the table before the first trick (the deal, passes and
exposures), frame ``t`` the table once trick ``t`` is complete.
"""

from __future__ import annotations

from typing import Any

from bot_sdk.protocol import Status
from referee import SCORING_CARDS, CardSet, Expose, Observation, Pass, Play, card_name
from replays.log import DecisionRecord, HandRecord, MatchLog
from replays.verify import replay

_Four = list[CardSet]


def replay_data(log: MatchLog) -> dict[str, Any]:
    """The JSON the viewer shows: the seats, and every hand's frames, faults (and decisions the
    bot noted something about) and result."""
    walks = {hand.hand_number: _HandWalk() for hand in log.hands}
    for hand, index, record, obs in replay(log):
        walks[hand.hand_number].add(index, record, obs)
    totals = [0, 0, 0, 0]
    hands = []
    for hand in log.hands:
        hands.append(walks[hand.hand_number].hand_json(hand, totals))
        totals = list(hand.result.totals)
    return {
        "match_id": log.match_id,
        "human": bool(log.extra.get("human")),
        "seats": [{"seat": s.seat, "name": s.name, "bot_id": s.bot_id} for s in log.seats],
        "hands": hands,
    }


class _HandWalk:
    """What the referee showed each seat during one hand, gathered decision by decision."""

    def __init__(self) -> None:
        self.holdings: dict[int, _Four] = {}
        """Trick number -> each seat's hand at the start of that trick."""
        self.exposed: _Four = [CardSet()] * 4
        self.passes: list[dict[str, Any]] = []
        self.exposures: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []

    def add(self, index: int, record: DecisionRecord, obs: Observation) -> None:
        """Note decision ``index`` of the hand and what its seat saw just before it."""
        trick = 0
        move = record.applied
        if isinstance(move, Play):
            trick = len(obs.tricks) + 1
            self.holdings.setdefault(trick, [CardSet()] * 4)[record.seat] = obs.hand
            self.exposed = list(obs.exposed)
        elif isinstance(move, Pass):
            self.passes.append(
                {"seat": record.seat, "to": obs.pass_to, "cards": move.cards.names()}
            )
        elif isinstance(move, Expose):
            self.exposures.append({"seat": record.seat, "cards": move.cards.names()})
        if record.status is not Status.OK or record.note is not None:
            self.faults.append(_fault(index, trick, record))

    def hand_json(self, hand: HandRecord, totals_before: list[int]) -> dict[str, Any]:
        start = self.holdings.get(1, list(hand.deal))
        frames = [{"hands": _names(start), "taken": [[], [], [], []], "trick": None}]
        taken: _Four = [CardSet()] * 4
        for number, trick in enumerate(hand.tricks, start=1):
            cards = CardSet.of(trick.cards)
            before = self.holdings.get(number, [CardSet()] * 4)
            taken[trick.winner] = taken[trick.winner] | (cards & SCORING_CARDS)
            frames.append(
                {
                    "hands": _names([held - cards for held in before]),
                    "taken": _names(taken),
                    "trick": {
                        "leader": trick.leader,
                        "winner": trick.winner,
                        "plays": [
                            {"seat": seat, "card": card_name(card)} for seat, card in trick.plays()
                        ],
                    },
                }
            )
        return {
            "number": hand.hand_number,
            "first_leader": hand.first_leader,
            "deal": _names(hand.deal),
            "passes": self.passes,
            "exposures": self.exposures,
            "exposed": _names(self.exposed),
            "frames": frames,
            "faults": self.faults,
            "totals_before": totals_before,
            "result": hand.result.to_json(),
        }


def _fault(index: int, trick: int, record: DecisionRecord) -> dict[str, Any]:
    move = record.applied
    applied = card_name(move.card) if isinstance(move, Play) else " ".join(move.cards.names())
    return {
        "decision": index,
        "trick": trick,
        "seat": record.seat,
        "kind": record.kind.value,
        "status": record.status.value,
        "latency_ms": record.latency_ms,
        "answer": record.answer,
        "fault": record.fault,
        "note": record.note,
        "applied": applied,
        "is_autoplay": record.status is Status.FORFEIT_AUTOPLAY,
    }


def _names(sets: _Four | tuple[CardSet, ...]) -> list[list[str]]:
    return [cards.names() for cards in sets]
