"""The round-robin schedule: equal tables per participant, pairs balanced within one, duplicate
rotations."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.pairing import entrants, pair_counts, plan, round_robin


def _players(n: int) -> list[str]:
    return [f"bot_{i:02d}" for i in range(n)]


@pytest.mark.parametrize("n", range(4, 13))
def test_every_participant_plays_alike_and_every_pair_meets_within_one(n: int) -> None:
    players = _players(n)
    tables = round_robin(players, seed="t")
    assert all(len(set(t)) == 4 for t in tables)
    per_player = Counter(p for t in tables for p in t)
    assert set(per_player) == set(players)
    assert len(set(per_player.values())) == 1
    counts = pair_counts(players, tables).values()
    assert min(counts) >= 1
    assert max(counts) - min(counts) <= 1
    assert len(tables) <= 2 * n  # r stays near its minimum (N - 1) / 3
    assert round_robin(players, seed="t") == tables  # seeded: the same schedule again


def test_fifty_bots_are_scheduled_balanced() -> None:
    """The construction's work is bounded by its swap budget, not by a clock: a wall-clock
    bound here only measured how loaded the machine was."""
    players = _players(50)
    tables = round_robin(players, seed="t")
    assert len(set(Counter(p for t in tables for p in t).values())) == 1
    counts = pair_counts(players, tables).values()
    assert min(counts) >= 1
    assert max(counts) - min(counts) <= 1
    assert len(tables) <= 350


def test_fewer_than_four_entrants_are_filled_with_house_bots() -> None:
    assert entrants(["bot_a"]) == ["bot_a", "house:normal", "house:easy", "house:hard"]
    assert entrants(["bot_a", "house:normal"]) == [
        "bot_a",
        "house:normal",
        "house:easy",
        "house:hard",
    ]


def test_duplicate_rotations_share_the_deal_label_and_rotate_the_seats() -> None:
    matches = plan(_players(5), seed="t", duplicate=True, matches_per_table=2)
    assert len(matches) == 5 * 2 * 4
    by_deal: dict[tuple[int, int], list] = {}
    for m in matches:
        by_deal.setdefault((m.table, m.deal), []).append(m)
    for group in by_deal.values():
        assert len({m.deal_label for m in group}) == 1
        first = group[0].seats
        assert [m.seats for m in group] == [first[r:] + first[:r] for r in range(4)]
        for player in first:  # every participant holds every seat once
            assert sorted(m.seats.index(player) for m in group) == [0, 1, 2, 3]
    assert len({m.match_id("t") for m in matches}) == len(matches)
    assert len({m.deal_label for m in matches}) == 5 * 2
    assert len(plan(_players(5), seed="t", duplicate=False, matches_per_table=1)) == 5
