"""The gauntlet's sequential test on simulated deals (normal differences of a known mean and
spread, seeded): its error rates hold, a large difference is known at once, and what the page
draws is what the workers decide."""

from __future__ import annotations

import random

import pytest

from bot_sdk.sequential import MIN_DEALS, Hypotheses, Verdict, evaluate, trajectory

SIGMA, DELTA = 35.0, 20.0
"""A deal's spread and the δ of the gauntlet benchmark's Normal-against-Easy pair."""
TEST = Hypotheses(delta=DELTA)


def verdicts(effect: float, runs: int, cap: int = 200) -> list[tuple[Verdict, int]]:
    rng = random.Random(f"sequential:{effect}")
    found = []
    for _ in range(runs):
        final = trajectory([rng.gauss(effect, SIGMA) for _ in range(cap)], TEST, max_deals=cap)
        found.append((final[-1].verdict, final[-1].deals))
    return found


def test_no_difference_is_called_better_or_worse_no_more_often_than_alpha() -> None:
    runs = verdicts(0.0, 2000)
    for wrong in (Verdict.BETTER, Verdict.WORSE):
        rate = sum(v is wrong for v, _ in runs) / len(runs)
        assert rate <= TEST.alpha, (wrong, rate)  # measured: 0.031 and 0.037


def test_a_difference_of_delta_is_missed_no_more_often_than_beta() -> None:
    runs = verdicts(DELTA, 500)
    assert sum(v is not Verdict.BETTER for v, _ in runs) / len(runs) <= TEST.beta  # measured: 0.024


@pytest.mark.parametrize("multiple", [3, 10])
def test_a_large_difference_is_known_in_the_fewest_deals_allowed(multiple: int) -> None:
    runs = verdicts(multiple * DELTA, 200)
    assert all(v is Verdict.BETTER for v, _ in runs)
    assert sum(n for _, n in runs) / len(runs) <= MIN_DEALS + 1  # measured: 10.04 and 10.0


def test_the_trajectory_ends_where_the_test_does() -> None:
    rng = random.Random(3)
    differences = [rng.gauss(5.0, SIGMA) for _ in range(300)]
    steps = trajectory(differences, TEST, max_deals=300)
    assert steps[-1] == evaluate(differences[: len(steps)], TEST, max_deals=300)
    assert all(not s.verdict.is_final for s in steps[:-1])
    assert steps[-1].verdict.is_final
