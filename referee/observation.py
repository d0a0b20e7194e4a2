"""What one seat may know, built from the full game state (OpenSpiel's observer idea).

Bots only ever see an :class:`Observation`: their own hand, the cards played so far, the
exposures revealed to them, the scoring cards each seat has taken, totals and past results,
and their own pending decision with its legal choices. Other hands, other seats' passes and
(in the simultaneous exposure phase) other seats' undisclosed exposure choices are never in it.

>>> from referee.game import Game
>>> obs = observe(Game(seed=1), 2)
>>> obs.decision is None, len(obs.hand), obs.exposed
(True, 13, (CardSet(''), CardSet(''), CardSet(''), CardSet('')))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.cards import CARD_NAMES, SCORING_MASK, CardSet, parse_card
from referee.moves import Decision
from referee.records import HandResult, Phase, Trick
from referee.rules import Rules

if TYPE_CHECKING:
    from referee.game import Game

_CardSets = tuple[CardSet, CardSet, CardSet, CardSet]


@dataclass(frozen=True, slots=True)
class Observation:
    """One seat's view of the match at one moment."""

    seat: int
    rules: Rules
    hand_number: int
    phase: Phase
    decision: Decision | None
    """This seat's pending decision, if the game waits for one from it."""
    hand: CardSet
    dealer: int | None
    first_leader: int | None
    """Who leads the hand's first trick (``None`` while passing, before it is known)."""
    trick_leader: int | None
    trick: tuple[tuple[int, int], ...]
    """The trick being played: ``(seat, card)`` in play order."""
    tricks: tuple[Trick, ...]
    """The completed tricks of this hand."""
    exposed: _CardSets
    """Each seat's exposed cards, as far as this seat may know them yet."""
    passed: CardSet | None
    """The cards this seat passed (``pass_3``), once it has chosen them."""
    pass_to: int | None
    received: CardSet | None
    """The cards this seat received, once everyone has passed."""
    taken: _CardSets
    """The scoring cards each seat has taken this hand (they lie face up)."""
    hearts_broken: bool
    totals: tuple[int, int, int, int]
    """Each seat's own running total."""
    standing: tuple[int, int, int, int]
    """The totals that decide the match (team totals with ``teams``)."""
    results: tuple[HandResult, ...]

    @property
    def legal(self) -> CardSet:
        """The cards this seat may choose from now (empty when nothing is asked of it)."""
        return self.decision.choices if self.decision else CardSet()

    @property
    def played(self) -> CardSet:
        """Every card played so far this hand, the current trick included."""
        mask = 0
        for trick in self.tricks:
            for card in trick.cards:
                mask |= 1 << card
        for _, card in self.trick:
            mask |= 1 << card
        return CardSet(mask)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Observation:
        """The inverse of :meth:`to_json` (how a bot rebuilds what the arena sent it).

        Raises ``KeyError``, ``ValueError`` or ``TypeError`` on a malformed object.
        """
        seat = int(data["seat"])
        decision = data.get("decision")
        passed, received = data.get("passed"), data.get("received")
        return cls(
            seat=seat,
            rules=Rules.from_json(data["rules"]),
            hand_number=int(data["hand_number"]),
            phase=Phase(data["phase"]),
            decision=None if decision is None else Decision.from_json(seat, decision),
            hand=CardSet.parse(data["hand"]),
            dealer=_opt_int(data.get("dealer")),
            first_leader=_opt_int(data.get("first_leader")),
            trick_leader=_opt_int(data.get("trick_leader")),
            trick=tuple((int(p["seat"]), parse_card(p["card"])) for p in data["trick"]),
            tricks=tuple(Trick.from_json(t) for t in data["tricks"]),
            exposed=_four([CardSet.parse(e).mask for e in data["exposed"]]),
            passed=None if passed is None else CardSet.parse(passed),
            pass_to=_opt_int(data.get("pass_to")),
            received=None if received is None else CardSet.parse(received),
            taken=_four([CardSet.parse(t).mask for t in data["taken"]]),
            hearts_broken=bool(data["hearts_broken"]),
            totals=_ints4(data["totals"]),
            standing=_ints4(data["standing"]),
            results=tuple(HandResult.from_json(r) for r in data["results"]),
        )

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "seat": self.seat,
            "rules": self.rules.to_json(),
            "hand_number": self.hand_number,
            "phase": self.phase.value,
            "decision": None if d is None else d.to_json(),
            "hand": self.hand.names(),
            "dealer": self.dealer,
            "first_leader": self.first_leader,
            "trick_leader": self.trick_leader,
            "trick": [{"seat": s, "card": CARD_NAMES[c]} for s, c in self.trick],
            "tricks": [t.to_json() for t in self.tricks],
            "exposed": [e.names() for e in self.exposed],
            "passed": None if self.passed is None else self.passed.names(),
            "pass_to": self.pass_to,
            "received": None if self.received is None else self.received.names(),
            "taken": [t.names() for t in self.taken],
            "hearts_broken": self.hearts_broken,
            "totals": list(self.totals),
            "standing": list(self.standing),
            "results": [r.to_json() for r in self.results],
        }


def observe(game: Game, seat: int) -> Observation:
    """Build ``seat``'s observation of ``game``."""
    if seat not in range(4):
        raise ValueError(f"seat must be 0 to 3, not {seat!r}")
    phase = game.phase
    decision = next((d for d in game.pending if d.seat == seat), None)
    passing = phase is Phase.PASSING
    waiting = game.pending_exposers()
    if passing:
        exposed_masks = [0, 0, 0, 0]
    elif phase is Phase.EXPOSING and not game.rules.sequential_exposure:
        exposed_masks = [
            game.exposed_by[s] if s == seat and s not in waiting else 0 for s in range(4)
        ]
    else:
        exposed_masks = [0 if s in waiting else game.exposed_by[s] for s in range(4)]
    offset = game.pass_offset
    passed = game.passed[seat] if offset else 0
    received = None if passing or not offset else CardSet(game.passed[(seat - offset) % 4])
    return Observation(
        seat=seat,
        rules=game.rules,
        hand_number=game.hand_number,
        phase=phase,
        decision=decision,
        hand=CardSet(game.hands[seat]),
        dealer=game.dealer,
        first_leader=None if passing else game.first_leader,
        trick_leader=game.leader if phase is Phase.PLAYING else None,
        trick=tuple(game.current_trick()),
        tricks=tuple(game.tricks),
        exposed=_four(exposed_masks),
        passed=CardSet(passed) if passed else None,
        pass_to=(seat + offset) % 4 if offset else None,
        received=received,
        taken=_four([t & SCORING_MASK for t in game.taken]),
        hearts_broken=game.hearts_broken,
        totals=(game.totals[0], game.totals[1], game.totals[2], game.totals[3]),
        standing=game.standing(),
        results=tuple(game.results),
    )


def _four(masks: list[int]) -> _CardSets:
    if len(masks) != 4:
        raise ValueError(f"expected one entry per seat, got {len(masks)}")
    return CardSet(masks[0]), CardSet(masks[1]), CardSet(masks[2]), CardSet(masks[3])


def _ints4(values: Sequence[Any]) -> tuple[int, int, int, int]:
    a, b, c, d = (int(v) for v in values)
    return a, b, c, d


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)
