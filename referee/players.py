"""A built-in random player, for tests, benchmarks and the demo.

It chooses uniformly among the legal choices: a card to play, a subset of its exposable
cards (each card exposed with probability 1/2), three cards to pass. Seeded, so a match
between random players is reproducible.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from referee.cards import CardSet
from referee.game import Game
from referee.moves import PLAYS, AnyMove, Decision, DecisionKind, Expose, Pass, Play
from referee.observation import Observation
from referee.records import Phase

if TYPE_CHECKING:
    from mypy_extensions import i64


class RandomPlayer:
    """``RandomPlayer(seed).decide(decision)`` returns a legal move for that decision."""

    def __init__(self, seed: int | str | None = None) -> None:
        self._rng = random.Random(seed)

    def choose(self, observation: Observation) -> AnyMove:
        """The player as a bot: a move for the observation's pending decision."""
        if observation.decision is None:
            raise ValueError(f"seat {observation.seat} has no decision pending")
        return self.decide(observation.decision)

    def decide(self, decision: Decision) -> AnyMove:
        mask = decision.choices.mask
        if decision.kind is DecisionKind.PLAY:
            return Play(decision.seat, pick_card(mask, self._rng))
        if decision.kind is DecisionKind.EXPOSE:
            return Expose(decision.seat, CardSet(mask & self._rng.getrandbits(52)))
        chosen = self._rng.sample(list(decision.choices), decision.count or 0)
        return Pass(decision.seat, CardSet.of(chosen))


def play_random(game: Game, rng: random.Random, *, until_hand_ends: bool = False) -> None:
    """Play uniformly random legal decisions until the match ends, or the current hand does.

    The fast loop behind benchmarks and search playouts; exposures and passes are random too.
    """
    start = len(game.results)
    playing, exposing = Phase.PLAYING, Phase.EXPOSING
    # Bound once: looking a method up on a Random (a Python subclass) costs more than calling it.
    uniform = rng.random
    while game.outcome is None and not (until_hand_ends and len(game.results) > start):
        if game.phase is playing:
            # The k-th legal card from the mask, as ``game.legal_cards()[k]`` would give it
            # without building the list.
            legal = game.legal_mask()
            card = nth_card(legal, int(uniform() * card_count(legal)))
            game.push(PLAYS[game.to_move][card])
        elif game.phase is exposing:
            # The first seat of game.pending, read without building its decisions.
            seat = game.pending_exposers()[0]
            game.expose(seat, game.exposable_mask(seat) & rng.getrandbits(52))
        else:
            decision = game.pending[0]
            chosen = rng.sample(game.hand(decision.seat).names(), decision.count or 0)
            game.push(Pass(decision.seat, CardSet.parse(chosen)))


def pick_card(mask: int, rng: random.Random) -> int:
    """A uniformly random card of a non-empty mask."""
    return nth_card(mask, rng.randrange(mask.bit_count()))


def card_count(mask: i64) -> int:
    """``mask.bit_count()``, which compiled code calls as a generic method (about 350
    instructions); this loop runs natively, a few instructions a card (``i64``: compiled, a
    machine word rather than a tagged integer that every operation checks; a mask has 52 bits)."""
    count: i64 = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


def nth_card(mask: i64, k: i64) -> int:
    """The card of index ``k`` (from 0) among the mask's cards, lowest first (``i64``: see
    :func:`card_count`)."""
    while k:  # not ``for _ in range(k)``: compiled, that boxes ``_`` on every turn
        mask &= mask - 1
        k -= 1
    return int(mask & -mask).bit_length() - 1
