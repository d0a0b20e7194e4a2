"""The Gong Zhu referee: the rules of RULES.md as a pure library (no I/O, no clock, no sleep).

>>> from referee import Game, RandomPlayer, Rules
>>> game = Game(Rules(), seed=42)
>>> players = [RandomPlayer(seed) for seed in range(4)]
>>> while not game.is_over():
...     for decision in game.pending:
...         game.push(players[decision.seat].decide(decision))
>>> game.outcome.hands_played == len(game.results)
True

Which build runs, compiled by mypyc or pure Python, is chosen before any other module loads
(referee/build.py); ``python -m referee --version`` says which, for each compiled package.
"""

# ruff: noqa: E402  (the choice of build must come before the modules it chooses between)
from referee import build

build.use_compiled(__name__, __path__)

from referee.cards import (
    DECK,
    EXPOSABLE_CARDS,
    SCORING_CARDS,
    SUITS,
    Card,
    CardSet,
    InvalidCardError,
    Suit,
    card_name,
    parse_card,
    rank_of,
    suit_of,
)
from referee.deal import Deal, DealError, deal_from_seed
from referee.game import Game, observed_play_refusal
from referee.moves import (
    PLAYS,
    AnyMove,
    Decision,
    DecisionKind,
    Expose,
    IllegalMoveError,
    InvalidMoveError,
    MatchOverError,
    Move,
    NotYourTurnError,
    Pass,
    Play,
)
from referee.observation import Observation, observe
from referee.players import RandomPlayer
from referee.records import (
    HandResult,
    Outcome,
    Phase,
    Termination,
    Trick,
    places_of,
    qd_later_tricks,
)
from referee.refusals import Reason, Refusal
from referee.rules import STANDARD, PassDirection, Rules, RulesError, Variant
from referee.scoring import SeatScore, score_seat

__all__ = [
    "DECK", "EXPOSABLE_CARDS", "PLAYS", "SCORING_CARDS", "STANDARD", "SUITS", "AnyMove", "Card",
    "CardSet", "Deal", "DealError", "Decision", "DecisionKind", "Expose", "Game", "HandResult",
    "IllegalMoveError", "InvalidCardError", "InvalidMoveError", "MatchOverError", "Move",
    "NotYourTurnError", "Observation", "Outcome", "Pass", "PassDirection", "Phase", "Play",
    "RandomPlayer", "Reason", "Refusal", "Rules", "RulesError", "SeatScore", "Suit", "Termination",
    "Trick", "Variant", "card_name", "deal_from_seed", "observe", "observed_play_refusal",
    "parse_card", "places_of", "qd_later_tricks", "rank_of", "score_seat", "suit_of",
]  # fmt: skip
