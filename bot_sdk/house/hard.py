"""Hard: determinized Monte Carlo search (perfect-information Monte Carlo) over each card.

Each round deals the unseen cards to the other seats consistently with the observation,
rebuilds the position with :meth:`referee.Game.from_observation`, and plays every legal card
followed by the rest of the hand with the fast :mod:`~bot_sdk.house.playout` policy. Every
card meets the same deals (common random numbers), so their means compare with little noise,
and interchangeable cards (say 7C and 8C when nobody else holds a club between) are searched
once, leaving time for more deals.

A playout is worth our hand score (our team's with ``teams``) minus ``rivalry`` times the
mean hand score of our opponents: the match is won on totals, so feeding a rival the pig is
worth something even when it does not change our own score.

Playouts are optimistic: they let every seat shed its bad cards later at will. So Normal's
card is kept unless some card beats it by more than ``margin`` points on average; a lone
dominant card still wins, but near-ties go to the rule that knows the future is uncertain.

Both weights were measured on the same 48 deals against Normal (benchmarks/strength.py,
20 deals sampled per decision): ``rivalry`` 0.5 did better than 0 and 1, ``margin`` 5 better
than 0 and 20.
"""

from __future__ import annotations

import random
import time

from bot_sdk.bot import Bot
from bot_sdk.house.normal import choose_play
from bot_sdk.house.openings import cards_to_pass, confident_exposures
from bot_sdk.house.playout import play_out
from bot_sdk.house.sampling import sample_holdings
from bot_sdk.house.table import Table, cards_in, lowest, read_table
from referee import PLAYS, CardSet, Game, Observation
from referee.cards import HEARTS_MASK, SCORING_MASK
from referee.scoring import HEART_VALUES

DEFAULT_BUDGET_S = 0.15
DEFAULT_RIVALRY = 0.5
DEFAULT_MARGIN = 5.0


class HardBot(Bot):
    """``budget_s`` bounds the time of one play decision; ``max_samples`` bounds the deals
    tried (set it, with a seed, for reproducible play whatever the machine's speed)."""

    name = "house-hard"

    def __init__(
        self,
        seed: int | str | None = None,
        *,
        budget_s: float = DEFAULT_BUDGET_S,
        max_samples: int | None = None,
        rivalry: float = DEFAULT_RIVALRY,
        margin: float = DEFAULT_MARGIN,
    ) -> None:
        self._rng = random.Random(seed)
        self.budget_s = budget_s
        self.max_samples = max_samples
        self.rivalry = rivalry
        self.margin = margin

    def play(self, obs: Observation) -> int:
        legal = obs.legal.mask
        if not legal & (legal - 1):
            return lowest(legal)
        deadline = time.perf_counter() + self.budget_s
        t = read_table(obs)
        groups = equivalent_groups(t, legal)
        means = self.search(t, sum(1 << lowest(g) for g in groups), deadline)
        best = max(means, key=lambda c: (means[c], -c))
        rule = choose_play(t, legal)
        rule_group = next(g for g in groups if g >> rule & 1)
        return rule if means[lowest(rule_group)] >= means[best] - self.margin else best

    def search(self, t: Table, legal: int, deadline: float) -> dict[int, float]:
        """Each legal card's mean playout value over the deals sampled before ``deadline``."""
        cards = list(cards_in(legal))
        sums = dict.fromkeys(cards, 0.0)
        samples = 0
        while samples < 1 or (
            (self.max_samples is None or samples < self.max_samples)
            and time.perf_counter() < deadline
        ):
            position = Game.from_observation(t.obs, sample_holdings(t, self._rng))
            for card in cards:
                game = position.copy()
                game.push(PLAYS[t.seat][card])
                play_out(game)
                sums[card] += self._value(t, game.results[-1].scores)
            samples += 1
        return {card: total / samples for card, total in sums.items()}

    def _value(self, t: Table, scores: tuple[int, ...]) -> float:
        ours = [s for s in range(4) if t.friendly(s)]
        rivals = [s for s in range(4) if not t.friendly(s)]
        own = sum(scores[s] for s in ours)
        return own - self.rivalry * sum(scores[s] for s in rivals) / len(rivals)

    def expose(self, obs: Observation) -> CardSet:
        return confident_exposures(obs)

    def pass_cards(self, obs: Observation) -> list[int]:
        return cards_to_pass(obs)


def equivalent_groups(t: Table, legal: int) -> list[int]:
    """``legal`` split into interchangeable cards: the same suit and score, and no card that
    another seat holds between them. Searching one card of each saves time for more deals."""
    groups: list[int] = []
    previous = -1
    for card in cards_in(legal):
        between = ((1 << card) - 1) & ~((2 << previous) - 1) if previous >= 0 else 0
        if (
            previous >= 0
            and previous // 13 == card // 13
            and not between & t.unseen
            and _score_kind(previous) == _score_kind(card)
        ):
            groups[-1] |= 1 << card
        else:
            groups.append(1 << card)
        previous = card
    return groups


def _score_kind(card: int) -> int:
    """Cards of one kind score alike: a heart's value, a special card itself, else nothing."""
    if (1 << card) & HEARTS_MASK:
        return HEART_VALUES[card % 13]
    return card if (1 << card) & SCORING_MASK else 1
