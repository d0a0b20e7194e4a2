"""The ladder benchmark runs end to end and prints its four arms (a tiny field and a few
matches: this checks that it works, not how fast the order becomes right)."""

from __future__ import annotations

import pytest

from arena import ratings
from benchmarks import ladder
from replays.log import MatchLog


def test_ladder_prints_a_row_for_each_of_the_four_arms(
    capsys: pytest.CaptureFixture[str],
) -> None:
    ladder.main(["--size", "6", "--matches", "8", "--seeds", "1", "--jobs", "1"])
    out = capsys.readouterr().out
    for arm in ladder.ARMS:
        row = next(line for line in out.splitlines() if line.startswith(f"| {arm.name} |"))
        assert "| 1 |" in row, row  # one run
    baseline = ladder.ARMS[1].name
    assert f"{ladder.ARMS[0].name} ÷ {baseline}, first reaches: " in out
    assert f"{ladder.ARMS[0].name} ÷ {baseline}, holds for good: " in out
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


def test_a_table_is_rated_as_the_arena_rates_it_and_a_match_on_its_own(
    duplicate_logs: list[MatchLog],
) -> None:
    start = {e.bot_id: ratings.starting_rating(e.bot_id, "1", None) for e in ladder.field(5)}
    board = dict(start)
    assert list(ladder.rate_table_of(board, duplicate_logs, "table")) == [4]  # once, for 4
    rotations = [([s.bot_id for s in log.seats], log.outcome.totals) for log in duplicate_logs]
    moved = {r.bot_id: (r.mu, r.sigma) for r in ratings.rate_table(rotations, start)}
    assert {b: (board[b].mu, board[b].sigma) for b in TABLE} == moved
    assert all(board[b].matches == 4 for b in TABLE)  # every match counted
    each = dict(start)
    assert list(ladder.rate_table_of(each, duplicate_logs, "match")) == [1, 1, 1, 1]
    assert each["bot_p25"].matches == 4 and each["bot_p25"].mu != board["bot_p25"].mu
