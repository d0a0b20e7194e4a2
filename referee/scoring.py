"""Scoring one seat's hand: the rule book's section 7, with the variants that touch it.

>>> score_seat(CardSet.parse("TC QS 7H"), exposed=CardSet.parse("TC QS")).score
-840
>>> score_seat(CardSet.parse("TC")).score
50
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from referee.cards import (
    ACE_OF_HEARTS,
    GOAT,
    HEARTS_MASK,
    PIG,
    SCORING_MASK,
    TRANSFORMER,
    CardSet,
)

# Heart values from 2H to AH, indexed by rank.
HEART_VALUES: Final[tuple[int, ...]] = (0, 0, 0, -10, -10, -10, -10, -10, -10, -20, -30, -40, -50)
_HEART_BASE: Final = 13 * 2
_PIG_BIT: Final = 1 << PIG
_GOAT_BIT: Final = 1 << GOAT
_TC_BIT: Final = 1 << TRANSFORMER
_AH_BIT: Final = 1 << ACE_OF_HEARTS
_OTHER_SCORING: Final = SCORING_MASK & ~_TC_BIT
QD_TRICK_BONUS: Final = 10
_new_tuple: Final = tuple.__new__  # see referee.game._new_tuple


class SeatScore(NamedTuple):
    """One seat's hand score and how it was reached.

    ``score == (hearts + pig + goat) * multiplier + transformer_bonus + qd_bonus``, then cut
    to the hand cap when ``capped``.
    """

    taken: CardSet
    """The scoring cards this seat took."""
    hearts: int
    """The hearts' value, after ``AH`` exposure and the all-hearts reversal."""
    all_hearts: bool
    pig: int
    goat: int
    transformer_bonus: int
    """+50 (+100 exposed) when ``TC`` was the only scoring card taken."""
    multiplier: int
    """2 (4 with ``TC`` exposed) when ``TC`` was taken with other scoring cards, else 1."""
    qd_bonus: int
    capped: bool
    score: int

    @property
    def all_scoring(self) -> bool:
        """All sixteen scoring cards taken by this seat (the "all 16" of the seeds)."""
        return self.taken.mask == SCORING_MASK

    def to_json(self) -> dict[str, Any]:
        return {
            "taken": self.taken.names(),
            "hearts": self.hearts,
            "all_hearts": self.all_hearts,
            "pig": self.pig,
            "goat": self.goat,
            "transformer_bonus": self.transformer_bonus,
            "multiplier": self.multiplier,
            "qd_bonus": self.qd_bonus,
            "capped": self.capped,
            "score": self.score,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeatScore:
        return cls(
            taken=CardSet.parse(data["taken"]),
            hearts=int(data["hearts"]),
            all_hearts=bool(data["all_hearts"]),
            pig=int(data["pig"]),
            goat=int(data["goat"]),
            transformer_bonus=int(data["transformer_bonus"]),
            multiplier=int(data["multiplier"]),
            qd_bonus=int(data["qd_bonus"]),
            capped=bool(data["capped"]),
            score=int(data["score"]),
        )


_SEAT_SCORE: Final = SeatScore
"""Read as a C global when compiled, where ``SeatScore`` is looked up in the module's dictionary."""


def _hearts_table() -> tuple[int, ...]:
    table = [0] * (1 << 13)
    for subset in range(1, 1 << 13):
        low = (subset & -subset).bit_length() - 1
        table[subset] = table[subset & (subset - 1)] + HEART_VALUES[low]
    return tuple(table)


_HEARTS_TABLE: Final = _hearts_table()


def hearts_value(mask: int) -> int:
    """The face value of the hearts in ``mask`` (no exposure, no reversal).

    >>> hearts_value(CardSet.parse("AH 5H 2H QS").mask)
    -60
    """
    return _HEARTS_TABLE[(mask & HEARTS_MASK) >> _HEART_BASE]


def score_seat(
    taken: CardSet | int,
    exposed: CardSet | int = 0,
    *,
    qd_later_tricks: int = 0,
    hand_cap: int | None = None,
) -> SeatScore:
    """Score the cards one seat took in a hand.

    ``taken``: every card the seat won (non-scoring cards are ignored). ``exposed``: every
    card exposed this hand, by anyone. ``qd_later_tricks``: with ``qd_bonus``, the tricks
    this seat won after capturing ``QD`` (0 otherwise). ``hand_cap``: with ``hand_cap_800``.
    """
    taken_mask = taken.mask if isinstance(taken, CardSet) else taken
    exposed_mask = exposed.mask if isinstance(exposed, CardSet) else exposed
    scoring = taken_mask & SCORING_MASK
    all_hearts = scoring & HEARTS_MASK == HEARTS_MASK
    hearts = hearts_value(scoring)
    if all_hearts:
        hearts = -hearts
    if exposed_mask & _AH_BIT:
        hearts *= 2
    pig = 0
    if scoring & _PIG_BIT:
        pig = 100 if all_hearts else -100
        if exposed_mask & _PIG_BIT:
            pig *= 2
    goat = 0
    if scoring & _GOAT_BIT:
        goat = 200 if exposed_mask & _GOAT_BIT else 100
    multiplier = 1
    transformer_bonus = 0
    if scoring & _TC_BIT:
        tc_exposed = bool(exposed_mask & _TC_BIT)
        if scoring & _OTHER_SCORING:
            multiplier = 4 if tc_exposed else 2
        else:
            transformer_bonus = 100 if tc_exposed else 50
    qd_bonus = QD_TRICK_BONUS * qd_later_tricks
    score = (hearts + pig + goat) * multiplier + transformer_bonus + qd_bonus
    capped = hand_cap is not None and score > hand_cap
    if capped:
        assert hand_cap is not None
        score = hand_cap
    # Fields in declaration order; skipping the NamedTuple's Python-level __new__ saves most of
    # the cost of scoring a seat in the compiled build.
    fields = (CardSet(scoring), hearts, all_hearts, pig, goat, transformer_bonus, multiplier,
              qd_bonus, capped, score)  # fmt: skip
    return _new_tuple(_SEAT_SCORE, fields)
