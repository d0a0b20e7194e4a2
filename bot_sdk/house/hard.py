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

The ingredients, and what each is worth against Normal (``python -m benchmarks.strength
--pair hard:normal --deals 40 --budget-ms 60000 [--max-samples N] [--no-infer]``: the same 40
duplicate deals, points per hand with the 95% interval; docs/BENCHMARKS.md has the runs):

- **Budget by samples.** At most :data:`DEFAULT_SAMPLES` deals a decision, drawn from the
  seed and the seat's information state, so the same position gets the same play and the
  strength does not depend on the machine's load; :data:`DEFAULT_BUDGET_S` is only a safety
  cap under the arena's 1000 ms limit. All of this version together: +54.7 [+36.8, +72.5],
  where the previous Hard (20 deals a decision, uniform samples) made +25.5 [+2.8, +48.1].
- **Time where decisions are close.** After :data:`MIN_SAMPLES` deals the search stops as
  soon as no other card could change the choice within :data:`CLEAR_Z` standard errors (the
  paired differences); only close decisions use the whole budget. At 64 it searched 40 deals
  a decision on average (median 40, 127 decisions of 6 deals): 37 % of the time saved.
- **Informed samples** (:mod:`~bot_sdk.house.sampling`): voids, known cards, who declined to
  shed the pig or a high heart, and what an exposure says. At 16 deals a decision: +48.4
  [+23.3, +73.5] with them, +34.2 [+10.1, +58.2] with voids and known cards alone
  (``--no-infer``): about +14, which 40 deals cannot separate from noise.
- **Samples per decision:** 16, 32 and 64 deals made +48.4 [+23.3, +73.5], +26.1 [+5.3,
  +46.9] and +54.7: 40 deals do not rank the budgets, only show each of them above Normal.
- **A playout policy with Normal's habits** (:mod:`~bot_sdk.house.playout`), partnership rules
  included: under ``teams`` a partner feeds us the goat and keeps the pig off us. A Hard pair
  against a Normal pair (``--teams --deals 60``): +149.6 [+112.6, +186.5] team points per hand.

``rivalry`` and ``margin`` were measured on the same 48 deals against Normal at 20 deals
sampled per decision: ``rivalry`` 0.5 did better than 0 and 1, ``margin`` 5 better than 0 and
20.
"""

from __future__ import annotations

import math
import random
import statistics
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

DEFAULT_BUDGET_S = 0.5
"""The safety cap on one play decision's search: the arena's default limit is 1000 ms."""
DEFAULT_SAMPLES = 64
"""The most deals sampled per decision: the budget, whatever the machine's load."""
MIN_SAMPLES = 16
"""Deals sampled before a decision may stop as clear."""
CHECK_EVERY = 8
CLEAR_Z = 2.5
"""A decision is clear when no other card could change it within this many standard errors."""
DEFAULT_RIVALRY = 0.5
DEFAULT_MARGIN = 5.0


class HardBot(Bot):
    """``max_samples`` bounds the deals tried per play decision and ``budget_s`` its time (a
    safety cap: the search stops at whichever comes first). With a seed, every decision's
    samples are drawn from the seed and the seat's information state: the same position gets
    the same play, whatever was played before it, and the play depends on the machine only
    when the cap is reached."""

    name = "house-hard"

    def __init__(
        self,
        seed: int | str | None = None,
        *,
        budget_s: float = DEFAULT_BUDGET_S,
        max_samples: int | None = DEFAULT_SAMPLES,
        rivalry: float = DEFAULT_RIVALRY,
        margin: float = DEFAULT_MARGIN,
        infer: bool = True,
        clear_z: float | None = CLEAR_Z,
    ) -> None:
        self.seed = random.getrandbits(64) if seed is None else seed
        self.budget_s = budget_s
        self.max_samples = max_samples
        self.rivalry = rivalry
        self.margin = margin
        self.infer = infer
        """Weigh the samples by what the others' play and exposures say (see sampling)."""
        self.clear_z = clear_z
        """Stop a search early once the decision is clear at this z (``None``: never)."""

    def play(self, obs: Observation) -> int:
        legal = obs.legal.mask
        if not legal & (legal - 1):
            return lowest(legal)
        deadline = time.perf_counter() + self.budget_s
        t = read_table(obs)
        groups = equivalent_groups(t, legal)
        rule = choose_play(t, legal)
        rule_group = lowest(next(g for g in groups if g >> rule & 1))
        values = self.search(t, sum(1 << lowest(g) for g in groups), rule_group, deadline)
        means = {card: statistics.fmean(v) for card, v in values.items()}
        choice = self._choose(means, rule_group)
        return rule if choice == rule_group else choice

    def _choose(self, means: dict[int, float], rule: int) -> int:
        """The best card by its mean, unless Normal's card is within ``margin`` of it."""
        best = max(means, key=lambda c: (means[c], -c))
        return rule if means[rule] >= means[best] - self.margin else best

    def search(self, t: Table, legal: int, rule: int, deadline: float) -> dict[int, list[float]]:
        """Each legal card's playout values on the same sampled deals, until the decision is
        clear, ``max_samples`` deals are played, or ``deadline`` passes (checked before every
        playout; one deal at least)."""
        rng = random.Random(f"{self.seed}|{information_state(t.obs)}")
        cards = list(cards_in(legal))
        values: dict[int, list[float]] = {card: [] for card in cards}
        samples = 0
        while samples < 1 or (
            (self.max_samples is None or samples < self.max_samples)
            and time.perf_counter() < deadline
            and not (
                self.clear_z is not None
                and samples >= MIN_SAMPLES
                and samples % CHECK_EVERY == 0
                and self._clear(values, rule, self.clear_z)
            )
        ):
            position = Game.from_observation(t.obs, sample_holdings(t, rng, infer=self.infer))
            deal: list[float] = []
            for card in cards:
                if samples and time.perf_counter() >= deadline:
                    return values  # a deal cut short is dropped: every card meets every deal
                game = position.copy()
                game.push(PLAYS[t.seat][card])
                play_out(game)
                deal.append(self._value(t, game.results[-1].scores))
            for card, value in zip(cards, deal, strict=True):
                values[card].append(value)
            samples += 1
        return values

    def _clear(self, values: dict[int, list[float]], rule: int, z: float) -> bool:
        """Whether more deals are unlikely to change the card chosen: every alternative's
        paired difference to it is at least ``z`` standard errors from the edge
        where the choice would flip."""
        means = {card: statistics.fmean(v) for card, v in values.items()}
        choice = self._choose(means, rule)
        for card, other in values.items():
            if card == choice:
                continue
            # How far the choice is from flipping to ``card``, sample by sample.
            edge = self.margin if choice == rule else 0.0
            if card == rule:
                edge = -self.margin
            gaps = [a - b + edge for a, b in zip(values[choice], other, strict=True)]
            mean = statistics.fmean(gaps)
            spread = statistics.stdev(gaps)
            if mean <= 0 or (spread > 0 and mean < z * spread / math.sqrt(len(gaps))):
                return False
        return True

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


def information_state(obs: Observation) -> str:
    """What the seat knows of the hand in play, as a stable text: its seat, the hand's number,
    its cards, every play so far in order, the exposures and its pass."""
    plays = [p for trick in obs.tricks for p in trick.plays()]
    plays += obs.trick
    exposed = [e.mask for e in obs.exposed]
    passed = obs.passed.mask if obs.passed is not None else None
    received = obs.received.mask if obs.received is not None else None
    return f"{obs.seat}|{obs.hand_number}|{obs.hand.mask}|{plays}|{exposed}|{passed}|{received}"
