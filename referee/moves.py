"""Decisions a seat makes, the moves that answer them, and the errors that refuse a move.

>>> Play(2, parse_card("QS")).to_json()
{'seat': 2, 'play': 'QS'}
>>> Move.from_json({"seat": 0, "expose": ["JD", "AH"]})
Expose(seat=0, cards=CardSet('JD AH'))
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple, final

from referee.cards import CARD_NAMES, CardSet, parse_card

if TYPE_CHECKING:
    from referee.refusals import Reason


class DecisionKind(enum.Enum):
    """What a pending decision asks for: 3 cards to pass, cards to expose, or one card to play."""

    PASS = "pass"
    EXPOSE = "expose"
    PLAY = "play"


@final
class Decision:
    """A decision the game waits for: ``seat`` must answer with a move of ``kind``.

    ``choices`` are the cards it may choose from; ``count`` is how many it must choose (``None``
    for an exposure: any subset of the choices, the empty one included). A value: read-only,
    and equal decisions compare and hash equal.

    >>> Decision(1, DecisionKind.PLAY, CardSet.parse("2C"), 1)
    Decision(seat=1, kind=<DecisionKind.PLAY: 'play'>, choices=CardSet('2C'), count=1)
    """

    # Written out rather than a frozen dataclass: the game builds one per decision, and a frozen
    # dataclass's __init__ costs ten times as much compiled.
    __slots__ = ("_choices", "_count", "_kind", "_seat")

    def __init__(self, seat: int, kind: DecisionKind, choices: CardSet, count: int | None) -> None:
        self._seat = seat
        self._kind = kind
        self._choices = choices
        self._count = count

    @property
    def seat(self) -> int:
        return self._seat

    @property
    def kind(self) -> DecisionKind:
        return self._kind

    @property
    def choices(self) -> CardSet:
        return self._choices

    @property
    def count(self) -> int | None:
        return self._count

    def _key(self) -> tuple[int, DecisionKind, CardSet, int | None]:
        return self._seat, self._kind, self._choices, self._count

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decision) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Decision(seat={self._seat}, kind={self._kind!r}, choices={self._choices!r}, "
            f"count={self._count})"
        )

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "choices": self.choices.names(), "count": self.count}

    @classmethod
    def from_json(cls, seat: int, data: Mapping[str, Any]) -> Decision:
        count = data.get("count")
        return cls(
            seat,
            DecisionKind(data["kind"]),
            CardSet.parse(data["choices"]),
            None if count is None else int(count),
        )


class Play(NamedTuple):
    seat: int
    card: int

    @property
    def kind(self) -> DecisionKind:
        return DecisionKind.PLAY

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "play": CARD_NAMES[self.card]}

    def __str__(self) -> str:
        return f"seat {self.seat} plays {CARD_NAMES[self.card]}"


PLAYS: Final[tuple[tuple[Play, ...], ...]] = tuple(
    tuple(Play(s, c) for c in range(52)) for s in range(4)
)
"""Every possible play, made once: ``PLAYS[seat][card]`` saves a fast driver an allocation."""


class Expose(NamedTuple):
    seat: int
    cards: CardSet

    @property
    def kind(self) -> DecisionKind:
        return DecisionKind.EXPOSE

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "expose": self.cards.names()}

    def __str__(self) -> str:
        return f"seat {self.seat} exposes {self.cards or 'nothing'}"


class Pass(NamedTuple):
    seat: int
    cards: CardSet

    @property
    def kind(self) -> DecisionKind:
        return DecisionKind.PASS

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "pass": self.cards.names()}

    def __str__(self) -> str:
        return f"seat {self.seat} passes {self.cards}"


class Move:
    """Namespace for parsing any move from its JSON form."""

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Play | Expose | Pass:
        seat = data.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < 4:
            raise InvalidMoveError(f"a move needs a seat from 0 to 3, not {seat!r}")
        kinds = [k for k in ("play", "expose", "pass") if k in data]
        if len(kinds) != 1:
            raise InvalidMoveError("a move has exactly one of 'play', 'expose' or 'pass'")
        value = data[kinds[0]]
        if kinds[0] == "play":
            return Play(seat, parse_card(value))
        if isinstance(value, str) or not isinstance(value, list):
            raise InvalidMoveError(f"'{kinds[0]}' takes a list of cards, not {value!r}")
        cards = CardSet.parse(value)
        return Expose(seat, cards) if kinds[0] == "expose" else Pass(seat, cards)


AnyMove = Play | Expose | Pass


class InvalidMoveError(ValueError):
    """A move that is not well formed (no seat, no card, a card named twice)."""


class IllegalMoveError(ValueError):
    """A well-formed move that the rules forbid now: ``reason`` says which rule, and the
    message is its English."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.message)
        self.reason = reason


class NotYourTurnError(IllegalMoveError):
    """A move from a seat with no decision of that kind pending."""


class MatchOverError(IllegalMoveError):
    """A move after the match has ended."""
