"""What the person at a human game's table is shown: their seat's observation and public facts,
with every legality question, reason and score answered by the referee. The page renders this
and knows no rules.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from arena.human import HumanTable, participant_at
from arena.records import HOUSE_PARTICIPANTS, HumanGame, house_level
from bot_sdk.protocol import trick_number
from referee import (
    EXPOSABLE_CARDS,
    SUITS,
    CardSet,
    Decision,
    DecisionKind,
    Observation,
    Outcome,
    Phase,
    Reason,
    Refusal,
    Suit,
    card_name,
    qd_later_tricks,
    score_seat,
)
from replays.deals import DealScheme, DealSource

POSITIONS = ("bottom", "right", "top", "left")
"""Where each seat sits on the person's screen, counting on from their own seat in play order."""
FALLEN = {"QS": "Pig", "JD": "Goat", "TC": "Transformer"}
"""The cards that get a marker when they hit the table, by their names in the game."""
_EXPOSED_NAMES = {"AH": "Hearts", **FALLEN}
_HEARTS = SUITS[Suit.HEARTS]


def exposure_factors() -> dict[str, int]:
    """What exposing each exposable card multiplies its score by, as the referee scores it:
    ``{"QS": 2, …}``."""
    factors = {}
    for card in EXPOSABLE_CARDS:
        alone = CardSet.of([card])
        factors[card_name(card)] = score_seat(alone, exposed=alone).score // score_seat(alone).score
    return factors


EXPOSURE_FACTORS = exposure_factors()


def exposure_effects() -> dict[str, str]:
    """Each exposable card's effect, in English: ``{"QS": "Pig ×2", …}``."""
    return {name: f"{_EXPOSED_NAMES[name]} ×{factor}" for name, factor in EXPOSURE_FACTORS.items()}


EFFECTS = exposure_effects()


FOR_YOU: Mapping[Refusal, str] = {
    Refusal.MATCH_OVER: "The match is over",
    Refusal.NO_PLAY_NOW: "No card is played now: the game is {phase.value}",
    Refusal.CANNOT_PLAY_NOW: "You cannot play a card: the game is {phase.value}",
    Refusal.CANNOT_DECIDE_NOW: "You cannot {kind.value} now: the game is {phase.value}",
    Refusal.NO_DECISION: "You have no {kind.value} decision pending",
    Refusal.NOT_YOUR_TURN: "It is seat {turn}'s turn to {kind.value}, not yours",
    Refusal.NOT_A_CARD: "{offered!r} is not a card",
    Refusal.NOT_HELD: "You do not hold {cards}",
    Refusal.MUST_FOLLOW_SUIT: "You must follow {suit.plural}",
    Refusal.MUST_LEAD_2C: "You must lead 2C to the first trick",
    Refusal.NO_HEART_LEAD: "You may not lead a heart before hearts are broken",
    Refusal.NO_SPADE_LEAD: "You may not lead a spade to the first trick",
    Refusal.EXPOSED_FIRST_TRICK: (
        "Exposed {cards} cannot be played to the first {suit.singular} trick "
        "while you hold other {suit.plural}"
    ),
    Refusal.NOT_EXPOSABLE: "Only AH, QS, JD and TC may be exposed, not {cards}",
    Refusal.PASS_COUNT: "You must pass exactly {needed} cards, not {count}",
}
"""The referee's refusals of the person's own moves, in words for them: templates over the
parameters of the :class:`~referee.Reason`, as the referee's own messages are."""


def for_you(reason: Reason) -> str:
    """The referee's reason for refusing the person's move, addressed to them: a reason the
    referee words "seat 2 must follow clubs" reads "You must follow clubs"."""
    return FOR_YOU[reason.code].format(**reason.parameters())


def refusal_json(reason: Reason) -> dict[str, Any]:
    """A refusal's code and its parameters as JSON, for a page that words it in the person's
    language: cards by name, a suit by its letter, a phase or decision kind by its value."""
    found: dict[str, Any] = {"code": reason.code.value}
    for name, value in reason.parameters().items():
        if value is None:
            continue
        if isinstance(value, CardSet):
            found[name] = value.names()
        elif isinstance(value, Suit):
            found[name] = value.char
        elif isinstance(value, enum.Enum):
            found[name] = value.value
        else:
            found[name] = value if isinstance(value, int) else str(value)
    return found


def level_name(participant: str) -> str:
    return house_level(participant).capitalize()


def _deals(deals: DealSource, *, over: bool) -> dict[str, Any]:
    """Where the deals come from, as the person may know it: the commitment to the arena's
    secret from the start, the secret once the game is over; a practice seed as chosen."""
    return {
        "scheme": deals.scheme.value,
        "commitment": deals.commitment,
        "secret": deals.secret if over else None,
        "seed": deals.seed if deals.scheme is DealScheme.PRACTICE else None,
    }


def play_state(table: HumanTable, names: dict[str, str], *, since: int | None) -> dict[str, Any]:
    """The person's view of ``table``; ``events`` are those of the decisions from ``since`` on
    (none when ``since`` is None). ``names`` are the registered opponents' names by id."""
    game = table.game
    seat = table.seat
    stored = table.stored
    obs = game.observation(seat)
    decision = table.decision()
    played = obs.played
    exposed_all = CardSet.of(c for cards in obs.exposed for c in cards)
    hand_cap = game.rules.hand_cap
    qd_later = qd_later_tricks(obs.tricks) if obs.rules.qd_bonus else (0, 0, 0, 0)
    seats = []
    for s in range(4):
        position = (s - seat) % 4
        participant = "human" if s == seat else participant_at(stored, s, game.hand_number)
        held = 13 - sum(1 for t in obs.tricks for who, _ in t.plays() if who == s)
        held -= sum(1 for who, _ in obs.trick if who == s)
        seats.append(
            {
                "seat": s,
                "position": POSITIONS[position],
                "name": "You" if s == seat else _name(participant, names),
                "kind": "human"
                if s == seat
                else "house"
                if participant in HOUSE_PARTICIPANTS
                else "bot",
                "cards_held": held,
                "exposed": (obs.exposed[s] - played).names(),
                "taken": obs.taken[s].names(),
                "hand_score": score_seat(
                    obs.taken[s], exposed_all, qd_later_tricks=qd_later[s], hand_cap=hand_cap
                ).score,
                "total": obs.totals[s],
            }
        )
    return {
        "id": stored.id,
        "match_id": stored.match_id,
        "version": stored.version,
        "moves": len(stored.moves),
        "seat": seat,
        "opponents": list(stored.opponents),
        "rules": game.rules.to_json(),
        "deals": _deals(stored.deals, over=game.outcome is not None),
        "phase": obs.phase.value,
        "hand_number": obs.hand_number,
        "trick_number": trick_number(obs),
        "to_move": game.to_move if obs.phase is Phase.PLAYING and not table.unseen_result else None,
        "decision": None
        if decision is None
        else {"kind": decision.kind.value, "count": decision.count},
        "hand": _hand(table, obs, decision),
        "seats": seats,
        "trick": [{"seat": s, "card": card_name(c)} for s, c in obs.trick],
        "last_trick": _last_trick(obs),
        "markers": _markers(obs),
        "all_hearts_threat": _all_hearts_threat(obs),
        "notice": _notice(obs),
        "effects": EFFECTS,
        "difficulty": _difficulty(table),
        "hand_result": _hand_result(table),
        "outcome": None if game.outcome is None else _outcome(game.outcome, table),
        "events": [] if since is None else [asdict(e) for e in table.events if e.move >= since],
    }


def _name(participant: str, names: dict[str, str]) -> str:
    if participant in HOUSE_PARTICIPANTS:
        return level_name(participant)
    return names.get(participant, participant)


def _hand(table: HumanTable, obs: Observation, decision: Decision | None) -> list[dict[str, Any]]:
    kind = decision.kind if decision else None
    cards = []
    for card in obs.hand:
        name = card_name(card)
        entry: dict[str, Any] = {
            "card": name,
            "playable": False,
            "reason": None,
            "refusal": None,
            "effect": None,
        }
        if decision is not None and card in decision.choices:
            entry["playable"] = True
            if kind is DecisionKind.EXPOSE:
                entry["effect"] = EFFECTS[name]
        elif kind is DecisionKind.PLAY:
            why = table.game.play_refusal(table.seat, card)
            if why is not None:
                entry["reason"] = for_you(why)
                entry["refusal"] = refusal_json(why)
        cards.append(entry)
    return cards


def _last_trick(obs: Observation) -> dict[str, Any] | None:
    if not obs.tricks:
        return None
    trick = obs.tricks[-1]
    plays = [{"seat": s, "card": card_name(c)} for s, c in trick.plays()]
    return {"plays": plays, "winner": trick.winner}


def _markers(obs: Observation) -> list[dict[str, Any]]:
    """The pig, goat and transformer once played this hand: who played it, who took it."""
    found = []
    plays: list[tuple[int, int, int | None]] = [
        (s, c, t.winner) for t in obs.tricks for s, c in t.plays()
    ]
    plays += [(s, c, None) for s, c in obs.trick]
    for seat, card, winner in plays:
        name = card_name(card)
        if name in FALLEN:
            found.append({"card": name, "name": FALLEN[name], "seat": seat, "taken_by": winner})
    return found


def _all_hearts_threat(obs: Observation) -> int | None:
    """The seat that has taken every heart played in the hand's completed tricks, if any."""
    if obs.phase is not Phase.PLAYING:
        return None
    takers = [s for s in range(4) if obs.taken[s] & _HEARTS]
    in_tricks = CardSet.of(c for t in obs.tricks for c in t.cards) & _HEARTS
    if len(takers) == 1 and obs.taken[takers[0]] & _HEARTS == in_tricks:
        return takers[0]
    return None


def _notice(obs: Observation) -> str | None:
    """Before the first trick is complete: say so when the person had nothing to expose."""
    if not obs.rules.exposure or obs.phase is not Phase.PLAYING or obs.tricks:
        return None
    own = obs.hand | CardSet.of(c for s, c in obs.trick if s == obs.seat)
    return None if own & EXPOSABLE_CARDS else "You have no card to expose this hand"


def _difficulty(table: HumanTable) -> dict[str, Any] | None:
    """The house bots' level in the person's hand (None when they differ) and, if a change
    applies from the next hand, that level."""
    stored = table.stored
    house = [s for s in range(4) if s != stored.seat and _house_seat(stored, s)]
    if not house:
        return None
    hand = stored.acknowledged + 1
    now = {participant_at(stored, s, hand) for s in house}
    later = {participant_at(stored, s, hand + 1) for s in house}
    return {
        "level": _level(now),
        "next": _level(later) if later != now else None,
    }


def _house_seat(stored: HumanGame, seat: int) -> bool:
    return stored.opponents[(seat - stored.seat) % 4 - 1] in HOUSE_PARTICIPANTS


def _level(participants: set[str]) -> str | None:
    return house_level(next(iter(participants))) if len(participants) == 1 else None


def _hand_result(table: HumanTable) -> dict[str, Any] | None:
    """The result of the hand the person has yet to acknowledge (or the last one, at the end)."""
    results = table.game.results
    index = table.stored.acknowledged
    if index >= len(results):
        return None
    result = results[index]
    before = results[index - 1].totals if index else (0, 0, 0, 0)
    data = result.to_json()
    for s, score in enumerate(result.seats):
        data["seats"][s]["all_scoring"] = score.all_scoring
        data["seats"][s]["total_before"] = before[s]
    return data


def _outcome(outcome: Outcome, table: HumanTable) -> dict[str, Any]:
    seat = table.seat
    ours = {seat, (seat + 2) % 4} if table.game.rules.teams else {seat}
    ranking = sorted(range(4), key=lambda s: (outcome.places[s], s))
    return {
        **outcome.to_json(),
        "victory": seat in outcome.winners and set(outcome.winners) <= ours,
        "ranking": [
            {
                "seat": s,
                "place": outcome.places[s],
                "total": outcome.totals[s],
                "out": s in outcome.out,
            }
            for s in ranking
        ],
        "recorded": table.stored.recorded,
    }
