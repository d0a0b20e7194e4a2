"""The ladder benchmark's Gaussian model math (benchmarks/ladder_models.py) and its
information-gain matchmaker (benchmarks/ladder_gain.py), against brute-force computations."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from arena.matchmaker import Member, choose_tables
from benchmarks import ladder
from benchmarks.ladder_gain import (
    GainTables,
    after_round,
    log_spread,
    misordered,
    pair_doubts,
    updated,
)
from benchmarks.ladder_models import (
    SCALES,
    Covariance,
    clipped,
    invert,
    placed,
    rooted,
    split_noise,
    table_factor,
    table_information,
)
from replays.log import MatchLog

Matrix = list[list[float]]
BOTS = [e.bot_id for e in ladder.field(6)]  # house:normal, bot_p20 … bot_p100
FIRST = (BOTS[1], BOTS[2], BOTS[4], BOTS[5])
SECOND = (BOTS[0], BOTS[3], BOTS[1], BOTS[5])
ENTRANTS = {e.bot_id: e for e in ladder.field(6)}


def _logs(table: tuple[str, str, str, str], label: str, *, duplicate: bool) -> list[MatchLog]:
    return ladder.play_table(table, ENTRANTS, bytes(32), label, duplicate=duplicate)


@pytest.fixture(scope="module")
def played() -> dict[bool, tuple[list[MatchLog], list[MatchLog]]]:
    """Two tables each way (plain, duplicate): the second seats house Normal."""
    return {
        duplicate: (
            _logs(FIRST, "t0", duplicate=duplicate),
            _logs(SECOND, "t1", duplicate=duplicate),
        )
        for duplicate in (False, True)
    }


def _mul(a: Matrix, b: Matrix) -> Matrix:
    return [
        [sum(x * y for x, y in zip(row, col, strict=True)) for col in zip(*b, strict=True)]
        for row in a
    ]


def _t(a: Matrix) -> Matrix:
    return [list(col) for col in zip(*a, strict=True)]


def _batch_posterior(
    covariance: Covariance, logs: list[MatchLog], *, duplicate: bool
) -> tuple[list[float], Matrix]:
    """The posterior of every strength after all of a table's rotations at once, by conditioning
    the joint Gaussian of the strengths, the seats' cards' luck and the 12 seat differences:
    ``μ + C Hᵀ S⁻¹ (y − H μ)``, ``C − C Hᵀ S⁻¹ H C``."""
    n, hands = len(covariance.bots), logs[0].outcome.hands_played
    cards, play = split_noise(covariance.scale, hands, duplicate=duplicate)
    size = n + 4
    mu = covariance.mu + [0.0] * 4
    cov = [row + [0.0] * 4 for row in covariance.cov] + [
        [cards if j == n + s else 0.0 for j in range(size)] for s in range(4)
    ]
    h, y = [], []
    for log in logs:
        observed = covariance.scale.observed(log)
        for s in range(3):
            row = [0.0] * size
            row[covariance.index[log.seats[s].bot_id]] += 1.0
            row[covariance.index[log.seats[3].bot_id]] -= 1.0
            row[n + s], row[n + 3] = 1.0, -1.0
            h.append(row)
            y.append(observed[s] - observed[3])
    noise = [
        [play * (1 + (a == b)) if a // 3 == b // 3 else 0.0 for b in range(len(y))]
        for a in range(len(y))
    ]
    ch = _mul(cov, _t(h))
    s_inverse = invert(
        [
            [a + b for a, b in zip(r1, r2, strict=True)]
            for r1, r2 in zip(_mul(h, ch), noise, strict=True)
        ]
    )
    gain = _mul(ch, s_inverse)
    innovation = [
        yi - sum(a * b for a, b in zip(row, mu, strict=True)) for yi, row in zip(y, h, strict=True)
    ]
    means = [
        m + sum(g * v for g, v in zip(row, innovation, strict=True))
        for m, row in zip(mu, gain, strict=True)
    ]
    after = [
        [c - d for c, d in zip(r1, r2, strict=True)]
        for r1, r2 in zip(cov, _mul(gain, _t(ch)), strict=True)
    ]
    return means[:n], [row[:n] for row in after[:n]]


@pytest.mark.parametrize("duplicate", [False, True])
def test_rating_rotation_by_rotation_is_the_brute_force_posterior_of_the_whole_table(
    played: dict[bool, tuple[list[MatchLog], list[MatchLog]]], duplicate: bool
) -> None:
    first, second = played[duplicate]
    covariance = Covariance(BOTS)
    list(covariance.rate_table(first, duplicate=duplicate))  # correlated strengths from here
    means, after = _batch_posterior(covariance, second, duplicate=duplicate)
    list(covariance.rate_table(second, duplicate=duplicate))
    assert covariance.mu == pytest.approx(means, abs=1e-9)
    for row, expected in zip(covariance.cov, after, strict=True):
        assert row == pytest.approx(expected, abs=1e-9)
    assert covariance.rating(BOTS[0]) == (0.0, 0.0)  # the anchor stays put


@pytest.mark.parametrize("duplicate", [False, True])
def test_a_tables_covariance_is_known_before_it_is_played(
    played: dict[bool, tuple[list[MatchLog], list[MatchLog]]], duplicate: bool
) -> None:
    first, second = played[duplicate]
    covariance = Covariance(BOTS)
    list(covariance.rate_table(first, duplicate=duplicate))
    factor = table_factor(covariance.scale, 4, duplicate)
    predicted = updated(covariance.cov, [covariance.index[b] for b in SECOND], factor)
    list(covariance.rate_table(second, duplicate=duplicate))
    for row, expected in zip(covariance.cov, predicted, strict=True):
        assert row == pytest.approx(expected, abs=1e-9)


def test_a_tables_information_is_its_hands_over_the_noise_less_the_cards_luck_when_duplicate() -> (
    None
):
    for measure in SCALES.values():
        plain = 4 * 4 / measure.noise**2  # 4 rotations of 4 hands; differences only
        for duplicate, per in ((False, plain), (True, plain / (1 - measure.cards_share))):
            info = table_information(measure, 4, duplicate=duplicate)
            expected = [[per * ((a == b) - 0.25) for b in range(4)] for a in range(4)]
            for row, want in zip(info, expected, strict=True):
                assert row == pytest.approx(want, rel=1e-9, abs=1e-12)
            g = table_factor(measure, 4, duplicate)
            for a in range(4):
                for b in range(4):
                    assert sum(g[r][a] * g[r][b] for r in range(3)) == pytest.approx(info[a][b])


def test_misordered_counts_each_pairs_chance_that_the_one_shown_higher_is_the_weaker() -> None:
    mu = [0.0, 1.0, 5.0]
    cov = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 2.0]]
    # shown by μ − 3σ: 0, −2 and 5 − 3√2 ≈ 0.76, so 2 first, then 0, then 1
    wrong = NormalDist().cdf
    expected = wrong(1.0) + wrong(-5 / 2**0.5) + wrong(-4 / 2**0.5)  # var(x1 − x2) = 1 + 2 − 1
    assert misordered(mu, cov) == pytest.approx(expected)
    assert misordered([0.0, 1.0], [[0.0, 0.0], [0.0, 0.0]]) == 0.0  # both known: no doubt


def test_the_variance_criterion_weighs_each_pairs_log_variance_by_its_doubt() -> None:
    mu = [0.0, 1.0, 5.0]
    cov = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 2.0]]
    wrong = NormalDist().cdf
    doubts = pair_doubts(mu, cov)
    expected = [(0, 1, wrong(-1.0)), (0, 2, wrong(-5 / 2**0.5)), (1, 2, wrong(-4 / 2**0.5))]
    for (i, j, w), (a, b, want) in zip(doubts, expected, strict=True):
        assert (i, j) == (a, b) and w == pytest.approx(want)
    after = [[0.0, 0.0, 0.0], [0.0, 0.5, 0.25], [0.0, 0.25, 1.0]]  # every variance halved
    drop = log_spread(doubts, cov) - log_spread(doubts, after)
    assert drop == pytest.approx(math.log(2) * sum(w for _, _, w in doubts))


def _members(covariance: Covariance) -> list[Member]:
    return [
        Member(
            b, covariance.mu[i], covariance.rating(b)[1], 0, room=0 if i == 0 else 1, house=i == 0
        )
        for i, b in enumerate(covariance.bots)
    ]


def test_gain_tables_seat_the_pair_in_most_doubt_together() -> None:
    bots = [e.bot_id for e in ladder.field(8)]
    covariance = Covariance(bots)
    twins = (bots[2], bots[5])  # equal means, unknown difference; the others far apart and known
    for i, b in enumerate(bots[1:], start=1):
        covariance.mu[i] = 0.0 if b in twins else 300.0 * i
        covariance.cov[i][i] = 900.0 if b in twins else 1.0
    members = _members(covariance)
    for seed in range(4):
        start = choose_tables(members, tables=8, rng=random.Random(seed))
        tables = GainTables(covariance, 4, duplicate=True)(
            members, tables=8, rng=random.Random(seed)
        )
        assert sorted(b for t in tables for b in t) == sorted(b for t in start for b in t)
        assert all(len(set(t)) == 4 for t in tables)
        assert any(set(twins) <= set(t) for t in tables), tables


def test_swapping_participants_between_tables_never_leaves_more_doubt() -> None:
    bots = [e.bot_id for e in ladder.field(10)]
    covariance = Covariance(bots)
    rng = random.Random(7)
    for i in range(1, len(bots)):
        covariance.mu[i] = rng.gauss(0, 30)
    members = _members(covariance)
    factor = table_factor(covariance.scale, 4, True)
    gain = GainTables(covariance, 4, duplicate=True)
    kept = 0
    for seed in range(5):
        index = covariance.index
        tables = [
            [index[b] for b in t]
            for t in choose_tables(members, tables=10, rng=random.Random(seed))
        ]
        before = misordered(covariance.mu, after_round(covariance.cov, tables, factor))
        seated = sorted(b for t in tables for b in t)
        kept += gain.improve(tables, gain.loss(), covariance.cov)
        after = misordered(covariance.mu, after_round(covariance.cov, tables, factor))
        assert after <= before and sorted(b for t in tables for b in t) == seated
        assert all(len(set(t)) == 4 for t in tables)
    assert kept  # some swap was worth it


def test_hand_measures() -> None:
    assert placed([-100, 0, 0, 50]) == (-1.5, 0.0, 0.0, 1.5)
    assert clipped([-200, 0, 0, 40]) == (-100.0, 40.0, 40.0, 80.0)  # margins -160, 40, 40, 80
    assert rooted([-100, 0, 0, 0]) == pytest.approx((-(75**0.5), 5.0, 5.0, 5.0))


def test_points_per_hand_are_the_matchs_totals_over_its_hands(
    played: dict[bool, tuple[list[MatchLog], list[MatchLog]]],
) -> None:
    for log in played[True][1]:
        hands = log.outcome.hands_played
        assert SCALES["points"].observed(log) == pytest.approx(
            [t / hands for t in log.outcome.totals]
        )


def test_the_gain_and_scales_experiments_run_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    tiny = ["--size", "6", "--matches", "8", "--seeds", "1", "--jobs", "1", "--no-arena-arms"]
    named = ("gain", "scales", "variance")
    ladder.main([*tiny, *(x for name in named for x in ("--experiment", name))])
    out = capsys.readouterr().out
    arms = [arm for name in named for arm in ladder.EXPERIMENTS[name]]
    for arm in arms:
        assert any(line.startswith(f"| {arm.name} | 1 |") for line in out.splitlines()), arm.name
    assert "gain, duplicate deals, full covariance" in out and "hands placed" in out
    with pytest.raises(ValueError, match="covariance"):
        ladder.chooser(ladder.Arm("gain", duplicate=True), None)


def test_update_cost_prints_a_row_per_ladder_size(capsys: pytest.CaptureFixture[str]) -> None:
    ladder.main(["--update-cost", "5", "40"])
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines()[2:]]
    assert [(row[0], row[1]) for row in rows] == [("| 5", "0"), ("| 40", "7")]  # 820 × 8 bytes
    assert all(float(row[2].rstrip(" |")) > 0 for row in rows)
