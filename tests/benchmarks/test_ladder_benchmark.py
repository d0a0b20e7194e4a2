"""The ladder benchmark runs end to end and prints its four arms (a tiny field and a few
matches: this checks that it works, not how fast the order becomes right)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest
from openskill.models import PlackettLuce

from arena import ratings
from arena.matchmaker import Member, Table, choose_tables
from arena.ratings import rate
from arena.records import Rating
from benchmarks import ladder, ladder_models
from replays.log import MatchLog


def test_ladder_prints_a_row_for_each_of_the_four_arms(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ladder.main(["--size", "6", "--matches", "8", "--seeds", "1", "--jobs", "1"])
    out = capsys.readouterr().out
    for arm in ladder.ARMS:
        row = next(line for line in out.splitlines() if line.startswith(f"| {arm.name} |"))
        assert "| 1 |" in row, row  # one run
    head = "matchmaker, duplicate deals ÷ random, plain deals"
    assert f"{head}, first reaches: " in out and f"{head}, holds for good: " in out
    assert out.index(f"{head}, first reaches") < out.index("| arm |")  # ratios first
    assert "μ falls as p grows" in out
    assert "Faults: 0;" in out


def test_kendall_tau_counts_pairs_right_and_wrong_and_ties_as_neither() -> None:
    assert ladder.kendall_tau([3.0, 2.0, 1.0]) == 1.0
    assert ladder.kendall_tau([1.0, 2.0, 3.0]) == -1.0
    assert ladder.kendall_tau([2.0, 2.0, 1.0]) == pytest.approx(2 / 3)


TABLE = ("house:normal", "bot_p25", "bot_p50", "bot_p75")


@pytest.fixture(scope="module")
def duplicate_logs() -> list[MatchLog]:
    entrants = {e.bot_id: e for e in ladder.field(5)}
    return ladder.play_table(TABLE, entrants, bytes(32), "t1", duplicate=True)


def test_a_duplicate_table_plays_one_deal_sequence_everyone_one_seat_on_each_time(
    duplicate_logs: list[MatchLog],
) -> None:
    assert {log.deals.label for log in duplicate_logs} == {"t1"}
    assert [tuple(s.bot_id for s in log.seats) for log in duplicate_logs] == [
        TABLE[r:] + TABLE[:r] for r in range(4)
    ]


def test_a_table_rated_as_one_match_is_placed_by_total_points(
    duplicate_logs: list[MatchLog],
) -> None:
    totals = dict.fromkeys(TABLE, 0)
    for log in duplicate_logs:
        for seat, info in enumerate(log.seats):
            totals[info.bot_id] += log.outcome.totals[seat]
    one = ladder.as_one_match(duplicate_logs)
    assert one.places == ladder.places_by([totals[info.bot_id] for info in one.seats])


def test_rated_by_the_same_cards_each_rotation_ranks_who_did_best_with_one_seats_cards(
    duplicate_logs: list[MatchLog],
) -> None:
    for k, rated in enumerate(ladder.by_cards(duplicate_logs)):
        held = {log.seats[k].bot_id: log.outcome.totals[k] for log in duplicate_logs}
        assert rated.places == ladder.places_by([held[info.bot_id] for info in rated.seats])
    assert ladder.places_by([10, -5, 10, -200]) == (1, 3, 1, 4)


def test_spread_tables_seat_distinct_members_within_their_room() -> None:
    members = [Member(f"bot_{i}", 20.0 + i, 8.0 - i / 4, i, room=1) for i in range(9)]
    members.append(Member("house:normal", 25.0, 1.0, 99, house=True))
    tables = ladder.spread_tables(members, tables=9, rng=random.Random(3))
    assert len(tables) in (2, 3)  # 9 registered bots with room for one, house Normal for any
    assert all(len(set(t)) == 4 for t in tables)
    seated = [b for t in tables for b in t if b != "house:normal"]
    assert len(seated) == len(set(seated))


def _exact_posterior(
    mus: list[float], variances: list[float], observed: list[float], noise: float
) -> list[float]:
    """The full Gaussian posterior's means by its information form, solved by elimination:
    precision diag(1/v) + (I − J/4)/noise, the table's common term taken away."""
    size = len(mus)
    rows = [
        [(1 / variances[i] if i == j else 0.0) + ((i == j) - 1 / size) / noise for j in range(size)]
        + [mus[i] / variances[i] + (observed[i] - sum(observed) / size) / noise]
        for i in range(size)
    ]
    for col in range(size):
        pivot = rows[col][col]
        rows[col] = [v / pivot for v in rows[col]]
        for r in range(size):
            if r != col:
                rows[r] = [a - rows[r][col] * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [row[-1] for row in rows]


def test_the_margin_update_is_the_gaussian_posterior_of_point_differences() -> None:
    mus, variances = [0.0, -10.0, 5.0, 20.0], [400.0, 900.0, 100.0, 1600.0]
    observed, noise = [30.0, -50.0, 10.0, -80.0], 4900.0
    means, after = ratings.margin_update(mus, variances, observed, noise)
    assert means == pytest.approx(_exact_posterior(mus, variances, observed, noise))
    assert all(a < v for a, v in zip(after, variances, strict=True))
    # only differences count: the same points with 100 more for every seat move nobody otherwise
    shifted, _ = ratings.margin_update(mus, variances, [x + 100 for x in observed], noise)
    assert shifted == pytest.approx(means)
    # a seat of no uncertainty (house Normal in the arena's anchor) does not move
    fixed, kept = ratings.margin_update(mus, [0.0, *variances[1:]], observed, noise)
    assert (fixed[0], kept[0]) == (0.0, 0.0) and fixed[1:] != means[1:]


def test_house_normal_moves_in_the_experiments_that_rate_it_like_everyone(
    duplicate_logs: list[MatchLog],
) -> None:
    log = duplicate_logs[0]
    assert log.seats[0].bot_id == "house:normal" and len(set(log.outcome.totals)) > 1
    for anchored in (False, True):  # the arena's margins: rated like everyone, or held at σ 0
        board = ladder.starting_board(ladder.Arm("matchmaker", True, anchored=anchored), TABLE)
        before = [board[s.bot_id] for s in log.seats]
        assert before[0].sigma == (0.0 if anchored else ratings.PRIOR_SIGMA)
        after = rate(log, before)
        assert [r.matches for r in after] == [1, 1, 1, 1]
        assert (after[0].mu == 0.0) == anchored
        assert all(r.mu != 0.0 for r in after[1:])
    for anchored in (True, False):  # openskill, as the arena rated before
        arm = ladder.Arm("matchmaker", True, openskill=True, anchored=anchored)
        board = ladder.starting_board(arm, TABLE)
        openskill = [board[s.bot_id] for s in log.seats]
        assert (openskill[0].mu, openskill[0].sigma) == (25.0, 1.0 if anchored else 25 / 3)
        moved = ladder.rate_openskill(log, openskill, ladder.OPENSKILL_MODEL, anchored=anchored)
        assert (moved[0].mu == openskill[0].mu) == anchored


def test_openskills_margin_rates_by_the_matchs_points_with_house_normal_held(
    duplicate_logs: list[MatchLog],
) -> None:
    log = duplicate_logs[0]  # points -140, -390, -310, -70: places 2, 4, 3, 1
    assert log.seats[0].bot_id == "house:normal" and len(set(log.outcome.totals)) == 4
    board = ladder.starting_board(ladder.OPENSKILL[0], TABLE)
    first = [board[s.bot_id] for s in log.seats]
    before = [first[0], *(replace(r, mu=r.mu - 3 * seat) for seat, r in enumerate(first[1:]))]
    placed = ladder.rate_openskill(log, before, ladder.OPENSKILL_MODEL, anchored=True)
    scored = {}
    for margin in (50.0, 1e6):
        model = ladder.openskill_model(replace(ladder.OPENSKILL[0], margin=margin))
        assert model.margin == margin
        scored[margin] = ladder.rate_openskill(log, before, model, anchored=True)
    assert ladder.OPENSKILL_MODEL.margin == 0.0  # the arena's model before is untouched
    assert all(r[0].mu == before[0].mu for r in scored.values())  # the anchor held
    assert [r.matches for r in scored[50.0]] == [1, 1, 1, 1]
    # points further apart than the margin move the μ otherwise than places alone ...
    assert all(s.mu != p.mu for s, p in zip(scored[50.0][1:], placed[1:], strict=True))
    # ... and under a margin no difference exceeds, the points rank the seats as the places do
    assert [r.mu for r in scored[1e6]] == pytest.approx([r.mu for r in placed])


def _winner_gain(margin: float, mus: Sequence[float], scores: Sequence[float]) -> float:
    """How far openskill's Plackett-Luce with ``margin`` moves the μ of the seat of most
    points (all four of σ 5)."""
    model = PlackettLuce(tau=0.0, margin=margin)
    teams = [[model.rating(mu=mu, sigma=5.0)] for mu in mus]
    after = model.rate(teams, scores=list(scores))
    winner = max(range(4), key=lambda seat: scores[seat])
    return after[winner][0].mu - mus[winner]


def test_openskills_margin_weighs_a_result_by_the_points_whoever_won() -> None:
    """What the margin does (the source of openskill 6.2): beyond ``margin`` points it moves
    the μ compared towards each other, or past each other, whoever won. So a favourite that
    wins by more gains more, an underdog that wins by more gains less, and among equal ratings
    the points change nothing: not a model of how much a stronger bot wins by."""
    mus = [30.0, 25.0, 25.0, 20.0]

    def favourite_first(d: float) -> list[float]:
        return [0.0, -d / 3, -2 * d / 3, -d]

    def underdog_first(d: float) -> list[float]:
        return [-d, -d / 3, -2 * d / 3, 0.0]

    plain = _winner_gain(0.0, mus, favourite_first(100))
    assert _winner_gain(100.0, mus, favourite_first(100)) == plain  # within the margin: places
    assert _winner_gain(100.0, mus, favourite_first(800)) > plain + 0.2
    upset = _winner_gain(0.0, mus, underdog_first(100))
    assert _winner_gain(100.0, mus, underdog_first(800)) < upset - 0.15
    level = [25.0] * 4
    assert _winner_gain(100.0, level, favourite_first(800)) == _winner_gain(
        0.0, level, favourite_first(800)
    )


def test_the_openskill_experiments_run_and_compare_with_random_tables_rated_alike(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tiny = ["--size", "6", "--matches", "8", "--seeds", "1", "--jobs", "1", "--no-arena-arms"]
    named = ("openskill_margin", "openskill_models", "openskill_best")
    ladder.main([*tiny, *(x for name in named for x in ("--experiment", name))])
    out = capsys.readouterr().out
    for arm in (arm for name in named for arm in ladder.EXPERIMENTS[name]):
        assert any(line.startswith(f"| {arm.name} | 1 |") for line in out.splitlines()), arm.name
    margin = "openskill over places, openskill margin 100"
    assert f"duplicate deals, {margin} ÷ random, plain deals, {margin}, first" in out
    # not run alike: against the arena's ratings before, openskill over places
    assert "BradleyTerryPart ÷ random, plain deals, openskill over places, first" in out


def test_drawn_tables_seat_distinct_members_within_their_room() -> None:
    members = [Member(f"bot_{i}", 20.0 + i, 8.0 - i / 4, i, room=1) for i in range(9)]
    members.append(Member("house:normal", 25.0, 1.0, 99, house=True))
    for seed in range(5):
        tables = ladder.drawn_tables(members, tables=9, rng=random.Random(seed))
        assert len(tables) in (2, 3) and all(len(set(t)) == 4 for t in tables)
        assert "bot_0" in tables[0]  # the largest σ hosts first
        seated = [b for t in tables for b in t if b != "house:normal"]
        assert len(seated) == len(set(seated))


def test_the_full_covariance_update_of_one_match_has_the_margin_updates_means(
    duplicate_logs: list[MatchLog],
) -> None:
    log = duplicate_logs[1]  # house Normal in seat 3
    covariance = ladder_models.Covariance(["house:normal", "bot_p25", "bot_p50", "bot_p75"])
    [rated] = covariance.rate_table([log], duplicate=False)
    assert rated is log
    before = [
        0.0 if s.bot_id == "house:normal" else ladder_models.MARGIN_SIGMA**2 for s in log.seats
    ]
    hands = log.outcome.hands_played
    means, variances = ratings.margin_update(
        [0.0] * 4,
        before,
        [t / hands for t in log.outcome.totals],
        ladder_models.MARGIN_NOISE**2 / hands,
    )
    for seat, info in enumerate(log.seats):
        mu, sigma = covariance.rating(info.bot_id)
        assert mu == pytest.approx(means[seat])
        assert sigma == pytest.approx(variances[seat] ** 0.5)  # one match: nothing cut yet
    assert covariance.rating("house:normal") == (0.0, 0.0)  # the anchor does not move


def test_a_duplicate_tables_shared_cards_luck_is_taken_out(
    duplicate_logs: list[MatchLog],
) -> None:
    bots = ["house:normal", "bot_p25", "bot_p50", "bot_p75"]
    plain, duplicate = ladder_models.Covariance(bots), ladder_models.Covariance(bots)
    assert len(list(plain.rate_table(duplicate_logs, duplicate=False))) == 4
    assert len(list(duplicate.rate_table(duplicate_logs, duplicate=True))) == 4
    for bot in bots[1:]:  # the luck rated as such: the four results tell more
        assert duplicate.rating(bot)[1] < plain.rating(bot)[1]
    assert len(duplicate.mu) == len(bots)  # the seats' luck is dropped with the table


def test_a_table_rated_together_moves_by_its_total_points(
    duplicate_logs: list[MatchLog],
) -> None:
    board = {b: Rating(b, 0.0, ladder_models.MARGIN_SIGMA) for b in TABLE}
    ladder.rate_margins_table(board, duplicate_logs)
    totals = dict.fromkeys(TABLE, 0)
    for log in duplicate_logs:
        for seat, info in enumerate(log.seats):
            totals[info.bot_id] += log.outcome.totals[seat]
    hands = 4 * duplicate_logs[0].outcome.hands_played
    means, _ = ratings.margin_update(
        [0.0] * 4,
        [ladder_models.MARGIN_SIGMA**2] * 4,
        [totals[b] / hands for b in TABLE],
        ladder.MARGIN_DUPLICATE_NOISE**2 / hands,
    )
    assert [board[b].mu for b in TABLE] == pytest.approx(means)
    assert all(board[b].matches == 4 for b in TABLE)


def test_noise_prints_plain_and_duplicate_side_by_side_in_every_measure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ladder.main(["--noise", "2"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.")]
    assert [tuple(row.split(" | ")[:2]) for row in rows] == [
        (p, name) for p in ("| 0.2", "| 0.6") for name in ladder_models.SCALES
    ]


def test_a_round_seats_at_most_the_tables_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    def recorded(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
        asked.append(tables)
        return choose_tables(members, tables=tables, rng=rng)

    monkeypatch.setitem(ladder.CHOOSERS, "matchmaker", recorded)
    ladder.run(ladder.Job(ladder.ARMS[0], 1, 12, 8, 1))
    ladder.run(ladder.Job(ladder.ARMS[0], 1, 12, 8, 12))
    assert asked == [1, 1, 12]  # one table a round: 2 rounds; room for 3 tables: 1 round
    ladder.main(["--size", "6", "--matches", "4", "--seeds", "1", "--jobs", "1", "--tables", "1"])
    assert "at most 1 tables a round" in capsys.readouterr().out


def test_first_seed_runs_the_seeds_from_it(capsys: pytest.CaptureFixture[str]) -> None:
    tiny = ["--size", "6", "--matches", "4", "--jobs", "1", "--no-arena-arms"]
    ladder.main([*tiny, "--seeds", "2", "--first-seed", "7", "--experiment", "floating"])
    out = capsys.readouterr().out
    assert "2 seeds per arm from 7," in out
    seeds = sorted(line.split(", seed ")[1][:2] for line in out.splitlines() if ", seed " in line)
    assert seeds == ["7:", "8:"]
