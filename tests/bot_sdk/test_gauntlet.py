"""The offline gauntlet: the arena's seats and rotations on duplicate deals, the sequential test
after every deal, its verdicts on bots of known strength, and its false positives on a bot
against a copy of itself."""

from __future__ import annotations

from click.testing import CliRunner

from bot_sdk.gauntlet import gauntlet, gauntlet_command, play_deal
from bot_sdk.house import HardBot
from bot_sdk.practice import Clock
from bot_sdk.sequential import Hypotheses, Verdict, table

CLOCK = Clock(10_000)


def test_a_deal_is_played_in_four_rotations_of_the_table_on_the_same_cards() -> None:
    seats = table(0, 1, (2, 3))  # candidate 0, baseline 1, opponents 2 and 3
    deal = play_deal(("easy", "normal", "easy", "easy"), 3, seed=1, hands=2, clock=CLOCK)
    assert [g.seating for g in deal.games] == [seats[r:] + seats[:r] for r in range(4)]
    assert all(len(g.hands) == 2 and g.deals == deal.games[0].deals for g in deal.games)
    points = [
        sum(h.scores[g.seating.index(p)] for g in deal.games for h in g.hands) for p in (0, 1)
    ]
    assert deal.difference == (points[0] - points[1]) / 8

    apart = play_deal(
        ("easy", "normal", "easy", "easy"), 3, seed=1, hands=2, clock=CLOCK, duplicate=False
    )
    assert len({g.deals for g in apart.games} | {deal.games[0].deals}) == 5


def test_a_gauntlet_is_the_same_for_the_same_seed() -> None:
    def differences(seed: int) -> list[float]:
        report = gauntlet("easy", "easy", hands=1, max_deals=10, seed=seed, out=None)
        return [d.difference for d in report.deals]

    assert differences(5) == differences(5)
    assert differences(5) != differences(6)


def test_normal_against_easy_stops_with_better() -> None:
    report = gauntlet("normal", "easy", ("easy", "easy"), hands=1, seed=2, out=None)
    assert report.state.verdict is Verdict.BETTER
    assert report.state.low > 0
    assert len(report.deals) == report.state.deals < 200


def test_hard_against_normal_stops_with_better() -> None:
    """Hard as its weights were tuned (20 sampled deals a decision, seeded: the same play on
    any machine) costs 0.2 to 0.3 s a match of one hand here; at its 150 ms budget a match of
    one hand took 1.6 s, and the least 10 deals of a verdict (40 matches) over a minute.
    Hard beats Normal by about 20 points per hand over Easy opponents, with a standard
    deviation of about 70 a deal of single hands, so at δ = 20 many seeds need more than 30
    deals; this one stops at 11."""
    report = gauntlet(
        HardBot(2, max_samples=20, budget_s=60.0),
        "normal",
        hands=1,
        max_deals=30,
        seed=2,
        test=Hypotheses(delta=20.0),
        out=None,
    )
    assert report.opponents == ("easy", "easy")  # the default: the baseline is house Normal
    assert report.state.verdict is Verdict.BETTER, report.state
    assert report.state.low > 0


def test_a_bot_against_its_copy_is_called_better_no_more_often_than_alpha() -> None:
    """100 seeded gauntlets of Normal against Normal (the Easy opponents' seeds differ, so
    the two do not play alike), at δ = 20: about half the spread of a deal of one hand, where a
    test that trusts its variance too early errs most."""
    test = Hypotheses(delta=20.0, alpha=0.05, beta=0.05)
    runs = [
        gauntlet("normal", "normal", hands=1, max_deals=20, seed=seed, test=test, out=None)
        for seed in range(100)
    ]
    better = sum(r.state.verdict is Verdict.BETTER for r in runs)
    worse = sum(r.state.verdict is Verdict.WORSE for r in runs)
    assert better / len(runs) <= test.alpha, better  # measured: 0 of 100
    assert worse / len(runs) <= test.alpha, worse


QUICK = ["--hands", "1", "--seed", "2"]


def test_the_gauntlet_command_prints_a_line_per_deal_and_the_verdict() -> None:
    result = CliRunner().invoke(
        gauntlet_command, ["normal", "easy", "--opponents", "easy,easy", *QUICK, "--delta", "20"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("normal (candidate) against easy (baseline), opponents easy and")
    deals = [line for line in lines if line.startswith("deal ")]
    assert deals and all("(stops at +2.30)" in d and "(no difference at -2.94)" in d for d in deals)
    assert lines[-2].startswith("verdict: better: Δ = +")
    assert f"after {len(deals)} deals ({4 * len(deals)} matches)" in lines[-2]
    assert lines[-1] == "every decision legal, in time and the bot's own"


def test_the_gauntlet_command_refuses_a_third_opponent_and_an_alpha_out_of_bounds() -> None:
    three = CliRunner().invoke(gauntlet_command, ["easy", "easy", "--opponents", "a,b,c"])
    assert three.exit_code == 2 and "name two opponents" in three.output
    alpha = CliRunner().invoke(gauntlet_command, ["easy", "easy", "--alpha", "0.5"])
    assert alpha.exit_code == 2 and "--alpha" in alpha.output
