"""The gauntlet benchmark runs end to end and prints its arms (a few gauntlets and deals, no
Hard: this checks that it works, not how many matches a verdict takes)."""

from __future__ import annotations

import random

import pytest

from benchmarks import gauntlet, sequential
from bot_sdk.sequential import Hypotheses


def test_the_gauntlet_benchmark_prints_a_row_per_pair_and_the_false_positives(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gauntlet.main(
        ["--hard-runs", "0", "--runs", "2", "--deals", "10", "--copies", "2", "--jobs", "1"]
    )
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| Normal vs Easy |"))
    assert "| 2 |" in row and "(10 each)" in row and "×** (" in row, row
    assert "| Hard vs Normal |" not in out
    assert "False positives, Normal vs Normal (its copy, its own seeds), δ = 10" in out
    assert " of 2 gauntlets = " in out


def test_the_fixed_size_test_needs_the_textbook_number_of_deals() -> None:
    test = Hypotheses(delta=10.0, alpha=0.05, beta=0.05)
    # ((1.645 + 1.645) * 40 / 10)² = 173.2
    assert gauntlet.fixed_deals(40.0, test) == 174


def test_the_fixed_size_test_keeps_its_error_rates_on_normal_differences() -> None:
    rng = random.Random(1)
    test = Hypotheses(delta=10.0, alpha=0.05, beta=0.05)
    differences = [rng.gauss(0.0, 20.0) for _ in range(2000)]
    alpha_hat, beta_hat = gauntlet.realized_errors(
        differences, gauntlet.fixed_deals(20.0, test), test, rng
    )
    assert 0.03 < alpha_hat < 0.08 and 0.03 < beta_hat < 0.08


def test_the_wilson_interval_stays_within_0_and_1() -> None:
    low, high = gauntlet.wilson(0, 100)
    assert low == 0.0 and high == pytest.approx(0.037, abs=0.001)
    low, high = gauntlet.wilson(5, 100)
    assert low < 0.05 < high


def test_the_simulation_prints_a_row_per_spread_and_difference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sequential.main(["--runs", "5", "--cap", "20"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 35 |")]
    assert len(rows) == 4 and rows[0].startswith("| 35 | 20 | 0 | 20 |")


def test_the_benchmark_runs_one_arm_alone(capsys: pytest.CaptureFixture[str]) -> None:
    gauntlet.main(["--hard-runs", "0", "--runs", "1", "--deals", "10", "--copies", "0"])
    out = capsys.readouterr().out
    assert "| Normal vs Easy |" in out and "False positives" not in out and "Wall time" in out
