"""Shared helpers of the house-bot tests: rules profiles, whole games, built positions."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from bot_sdk.bot import Bot
from referee import (
    SCORING_CARDS,
    AnyMove,
    CardSet,
    Decision,
    DecisionKind,
    Game,
    Observation,
    Rules,
    Trick,
    parse_card,
)

PROFILES: dict[str, Rules] = {
    "standard": Rules(fixed_hands=2),
    "pass_3": Rules.with_variants("pass_3", pass_direction="cycle", fixed_hands=3),
    "sequential_exposure": Rules.with_variants("sequential_exposure", fixed_hands=2),
    "teams": Rules.with_variants("teams", "qd_bonus", fixed_hands=2),
    "hearts_must_break": Rules.with_variants(
        "hearts_must_break", "no_spade_lead_first_trick", fixed_hands=2
    ),
    "lead_2c": Rules.with_variants("lead_2c", "hand_cap_800", fixed_hands=2),
    "dealer_left_leads": Rules.with_variants("dealer_left_leads", "no_exposure", fixed_hands=2),
}
"""Short matches under every variant that changes what a bot may or must do."""


Done = tuple[int, str, int]
"""A completed trick: leader, the four cards in play order, winner."""


def play_game(
    rules: Rules, seed: int, decide: Callable[[Observation], AnyMove] | Sequence[Bot]
) -> Game:
    """A whole match; the referee's ``push`` refuses any illegal move with an exception."""
    game = Game(rules, seed=seed)
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            move = decide(obs) if callable(decide) else decide[decision.seat].decide(obs)
            game.push(move)
    return game


def position(
    seat: int,
    hand: str,
    trick: Sequence[tuple[int, str]] = (),
    *,
    tricks: Sequence[Done] = (),
    rules: Rules | None = None,
) -> Observation:
    """``seat``'s observation of a built position in trick play (nothing exposed).

    ``trick``: ``(seat, card)`` played so far; ``tricks``: completed tricks as
    ``(leader, "four cards", winner)``. Taken cards follow from the tricks.
    """
    rules = rules or Rules.with_variants("no_exposure")
    base = Game(rules, seed=0).observation(seat)
    cards = CardSet.parse(hand)
    done = tuple(_trick(leader, four, winner) for leader, four, winner in tricks)
    taken = [0, 0, 0, 0]
    for t in done:
        taken[t.winner] |= CardSet.of(t.cards).mask & SCORING_CARDS.mask
    played = tuple((s, parse_card(c)) for s, c in trick)
    legal = cards.of_suit(played[0][1] // 13) if played else cards
    return dataclasses.replace(
        base,
        decision=Decision(seat, DecisionKind.PLAY, legal or cards, 1),
        hand=cards,
        trick_leader=played[0][0] if played else seat,
        first_leader=done[0].leader if done else (played[0][0] if played else seat),
        trick=played,
        tricks=done,
        taken=(CardSet(taken[0]), CardSet(taken[1]), CardSet(taken[2]), CardSet(taken[3])),
    )


def _trick(leader: int, four: str, winner: int) -> Trick:
    a, b, c, d = (parse_card(name) for name in four.split())
    return Trick(leader, (a, b, c, d), winner)
