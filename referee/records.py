"""The records a match produces: phases, completed tricks, scored hands and the outcome."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, NamedTuple

from referee.cards import CARD_NAMES, QUEEN_OF_DIAMONDS, CardSet, parse_card
from referee.scoring import SeatScore

SEATS: Final = range(4)


class Phase(enum.Enum):
    PASSING = "passing"
    EXPOSING = "exposing"
    PLAYING = "playing"
    OVER = "over"


class Termination(enum.Enum):
    """Why a match ended."""

    THRESHOLD = "threshold"
    """A total reached the losing threshold (and the tie rule allowed the end)."""
    PLUS_1000 = "plus_1000"
    """``end_at_plus_1000``: a total went above +1000."""
    HAND_CAP = "hand_cap"
    """``max_hands`` hands were played without an ending."""
    FIXED_HANDS = "fixed_hands"
    """The profile's ``fixed_hands`` were played."""


class Trick(NamedTuple):
    """A completed trick: the leader, the four cards in play order, and the winner."""

    leader: int
    cards: tuple[int, int, int, int]
    winner: int

    def seat_of(self, index: int) -> int:
        return (self.leader + index) % 4

    def plays(self) -> Iterator[tuple[int, int]]:
        """``(seat, card)`` in play order."""
        for i, card in enumerate(self.cards):
            yield (self.leader + i) % 4, card

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": self.leader,
            "cards": [CARD_NAMES[c] for c in self.cards],
            "winner": self.winner,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Trick:
        a, b, c, d = (parse_card(name) for name in data["cards"])
        return cls(int(data["leader"]), (a, b, c, d), int(data["winner"]))


class HandResult(NamedTuple):
    """A scored hand. ``totals`` are the running totals after it (team totals with ``teams``)."""

    hand_number: int
    exposed: CardSet
    seats: tuple[SeatScore, SeatScore, SeatScore, SeatScore]
    totals: tuple[int, int, int, int]

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(s.score for s in self.seats)

    def to_json(self) -> dict[str, Any]:
        return {
            "hand_number": self.hand_number,
            "exposed": self.exposed.names(),
            "seats": [s.to_json() for s in self.seats],
            "scores": list(self.scores),
            "totals": list(self.totals),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HandResult:
        s0, s1, s2, s3 = (SeatScore.from_json(s) for s in data["seats"])
        t0, t1, t2, t3 = (int(t) for t in data["totals"])
        return cls(
            int(data["hand_number"]), CardSet.parse(data["exposed"]), (s0, s1, s2, s3),
            (t0, t1, t2, t3),
        )  # fmt: skip


class Outcome(NamedTuple):
    """How a match ended: ``places[seat]`` is 1 for the winner(s); ties share a place.

    With ``teams``, partners share their team's place (1 or 2).
    """

    termination: Termination
    totals: tuple[int, int, int, int]
    places: tuple[int, int, int, int]
    out: tuple[int, ...]
    """Seats at or below the losing threshold."""
    hands_played: int

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(s for s in SEATS if self.places[s] == 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "termination": self.termination.value,
            "totals": list(self.totals),
            "places": list(self.places),
            "winners": list(self.winners),
            "out": list(self.out),
            "hands_played": self.hands_played,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        t0, t1, t2, t3 = (int(t) for t in data["totals"])
        p0, p1, p2, p3 = (int(p) for p in data["places"])
        return cls(
            termination=Termination(data["termination"]),
            totals=(t0, t1, t2, t3),
            places=(p0, p1, p2, p3),
            out=tuple(int(s) for s in data["out"]),
            hands_played=int(data["hands_played"]),
        )


def places_of(totals: Sequence[int]) -> tuple[int, int, int, int]:
    """Competition ranking, highest total first; equal totals share a place.

    >>> places_of([-1010, 150, 120, 150])
    (4, 1, 3, 1)
    """
    # Loops over a tuple, not sum() over a generator: compiled, a generator is an object and a
    # Sequence is iterated through its __iter__, a tuple natively.
    seats = tuple(totals)
    places = []
    for total in seats:
        place = 1
        for other in seats:
            if other > total:
                place += 1
        places.append(place)
    return places[0], places[1], places[2], places[3]


def qd_later_tricks(tricks: Sequence[Trick]) -> tuple[int, int, int, int]:
    """For the ``qd_bonus`` variant: each seat's tricks won after it took ``QD``, among
    ``tricks`` (a hand's completed tricks so far, in order); zero until ``QD`` is taken.

    >>> def trick(leader, cards, winner):
    ...     return Trick(leader, tuple(parse_card(c) for c in cards.split()), winner)
    >>> tricks = [trick(0, "2C 3C 4C 5C", 2), trick(2, "QD 2D 3D 4D", 1)]
    >>> tricks.append(trick(1, "6C 7C 8C 9C", 1))
    >>> qd_later_tricks(tricks)  # seat 1 took QD in the second trick, then won one more
    (0, 1, 0, 0)
    """
    counts = [0, 0, 0, 0]
    taker = -1
    for trick in tricks:
        if taker >= 0 and trick.winner == taker:
            counts[taker] += 1
        elif QUEEN_OF_DIAMONDS in trick.cards:
            taker = trick.winner
    return counts[0], counts[1], counts[2], counts[3]
