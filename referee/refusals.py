"""Why the referee refuses a move: a :class:`Refusal` code and its parameters, a :class:`Reason`.

The referee's English message is written here from the code and parameters, and only here;
anyone who words a refusal otherwise (for the person at the table, for a bot's author) reads
the code and the parameters, never the English.

>>> reason = Reason(Refusal.MUST_FOLLOW_SUIT, seat=3, suit=Suit.SPADES)
>>> reason.message
'seat 3 must follow spades'
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, fields
from typing import Any, Final

from referee.cards import CardSet, Suit
from referee.moves import DecisionKind
from referee.records import Phase


class Refusal(enum.Enum):
    """The rule or circumstance that forbids a move."""

    MATCH_OVER = "match_over"
    NO_PLAY_NOW = "no_play_now"
    """Nobody plays a card in this phase (``phase``)."""
    CANNOT_PLAY_NOW = "cannot_play_now"
    """``seat`` offered a card in a phase (``phase``) without trick play."""
    CANNOT_DECIDE_NOW = "cannot_decide_now"
    """``seat`` offered a move of ``kind`` in another phase (``phase``)."""
    NO_DECISION = "no_decision"
    """``seat`` has no decision of ``kind`` pending."""
    NOT_YOUR_TURN = "not_your_turn"
    """It is ``turn``'s turn to decide (``kind``), not ``seat``'s."""
    NOT_A_CARD = "not_a_card"
    """What was ``offered`` as a card is none."""
    NOT_HELD = "not_held"
    """``seat`` does not hold ``cards``."""
    MUST_FOLLOW_SUIT = "must_follow_suit"
    """``seat`` holds the ``suit`` led and must play one."""
    MUST_LEAD_2C = "must_lead_2c"
    NO_HEART_LEAD = "no_heart_lead"
    """Hearts may not be led before they are broken."""
    NO_SPADE_LEAD = "no_spade_lead"
    """Spades may not be led to the first trick."""
    EXPOSED_FIRST_TRICK = "exposed_first_trick"
    """Exposed ``cards`` may not go to the first trick of their ``suit`` while ``seat`` holds
    others of it."""
    NOT_EXPOSABLE = "not_exposable"
    """Only AH, QS, JD and TC may be exposed, not ``cards``."""
    PASS_COUNT = "pass_count"
    """A pass is ``needed`` cards, not ``count``."""


@dataclass(frozen=True, slots=True)
class Reason:
    """A refusal's code with its parameters; a parameter the code does not use is ``None``."""

    code: Refusal
    _: KW_ONLY
    seat: object = None
    """The seat refused, as the move gave it (a move that is not the seat's turn may give
    anything)."""
    turn: int | None = None
    """The seat whose turn it is."""
    kind: DecisionKind | None = None
    phase: Phase | None = None
    offered: object = None
    """What was offered as a card when it is none."""
    cards: CardSet | None = None
    suit: Suit | None = None
    count: int | None = None
    needed: int | None = None

    @property
    def message(self) -> str:
        """The referee's English message, as errors and logs show it."""
        return MESSAGES[self.code].format(**self.parameters())

    def parameters(self) -> dict[str, Any]:
        """The parameters by name, as the templates of :data:`MESSAGES` read them."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "code"}


MESSAGES: Final[Mapping[Refusal, str]] = {
    Refusal.MATCH_OVER: "the match is over",
    Refusal.NO_PLAY_NOW: "no card is played now: the game is {phase.value}",
    Refusal.CANNOT_PLAY_NOW: "seat {seat} cannot play a card: the game is {phase.value}",
    Refusal.CANNOT_DECIDE_NOW: "seat {seat} cannot {kind.value} now: the game is {phase.value}",
    Refusal.NO_DECISION: "seat {seat} has no {kind.value} decision pending",
    Refusal.NOT_YOUR_TURN: "it is seat {turn}'s turn to {kind.value}, not seat {seat}'s",
    Refusal.NOT_A_CARD: "{offered!r} is not a card",
    Refusal.NOT_HELD: "seat {seat} does not hold {cards}",
    Refusal.MUST_FOLLOW_SUIT: "seat {seat} must follow {suit.plural}",
    Refusal.MUST_LEAD_2C: "seat {seat} must lead 2C to the first trick",
    Refusal.NO_HEART_LEAD: "seat {seat} may not lead a heart before hearts are broken",
    Refusal.NO_SPADE_LEAD: "seat {seat} may not lead a spade to the first trick",
    Refusal.EXPOSED_FIRST_TRICK: (
        "exposed {cards} cannot be played to the first {suit.singular} trick "
        "while seat {seat} holds other {suit.plural}"
    ),
    Refusal.NOT_EXPOSABLE: "only AH, QS, JD and TC may be exposed, not {cards}",
    Refusal.PASS_COUNT: "seat {seat} must pass exactly {needed} cards, not {count}",
}
"""The referee's message for each code: a :meth:`str.format` template over the parameters."""
