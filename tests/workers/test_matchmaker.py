"""Choosing the ladder's tables (:mod:`arena.matchmaker`): those passed over first, then the
members whose order is most in doubt, with those they are most in doubt with, never past a
bot's room, four distinct members with a registered host, reproducible."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from arena.matchmaker import (
    Member,
    choose_tables,
    doubts,
    order_doubt,
    passed_over_after,
    random_tables,
)

HOUSE = [
    Member("house:easy", 18.0, 2.0, 500, house=True),
    Member("house:normal", 25.0, 1.0, 500, house=True),
    Member("house:hard", 31.0, 2.0, 500, house=True),
]


def _field(n: int, *, room: int = 1, sigma: float = 2.0) -> list[Member]:
    return [Member(f"bot_{i:02}", 10.0 + 2 * i, sigma, 40, room=room) for i in range(n)]


def test_every_table_has_four_distinct_members_and_a_registered_one() -> None:
    for seed in range(30):
        tables = choose_tables([*_field(9, room=2), *HOUSE], tables=10, rng=random.Random(seed))
        assert tables
        for table in tables:
            assert len(set(table)) == 4 and any(not b.startswith("house:") for b in table)


def test_no_member_is_seated_past_its_room_and_house_bots_have_no_limit() -> None:
    members = [*_field(6, room=1), Member("roomy", 20.0, 2.0, 40, room=3), *HOUSE]
    tables = choose_tables(members, tables=50, rng=random.Random(1))
    seated = Counter(b for t in tables for b in t)
    assert all(seated[m.bot_id] <= m.room for m in members if not m.house)
    assert seated["roomy"] == 3  # it was given all its room
    full = [Member("busy", 25.0, 8.0, 0, room=0), Member("over", 25.0, 8.0, 0, room=-1)]
    full += [*_field(3), *HOUSE]  # "over": its owner lowered the limit below its open tables
    for choose in (choose_tables, random_tables):
        chosen = choose(full, tables=5, rng=random.Random(2))
        assert chosen and all("busy" not in t and "over" not in t for t in chosen)
    busy = Counter(
        b
        for t in choose_tables([*_field(12, room=2), *HOUSE], tables=6, rng=random.Random(1))
        for b in t
    )
    assert max(busy[h.bot_id] for h in HOUSE) > 1  # a house bot sits at several tables


def test_the_neediest_bot_is_seated_first() -> None:
    settled = _field(4, sigma=2.0)
    new = Member("newcomer", 25.0, 8.33, 0, room=1)
    older_new = Member("unsure", 25.0, 6.0, 5, room=1)
    for seed in range(10):
        [first] = choose_tables(
            [*settled, older_new, new, *HOUSE], tables=1, rng=random.Random(seed)
        )
        assert "newcomer" in first
    same = [Member("a", 25.0, 5.0, 9, room=1), Member("b", 25.0, 5.0, 3, room=1), *HOUSE]
    [table] = choose_tables(same, tables=1, rng=random.Random(0))
    assert "b" in table  # equally unsure: the one with fewer matches
    unsure = [Member("old", 25.0, 7.0, 30, room=1), Member("young", 25.0, 4.0, 2, room=1)]
    [table] = choose_tables([*unsure, *HOUSE], tables=1, rng=random.Random(0))
    assert "old" in table  # the more uncertain first, even with more matches


def test_a_settled_bot_meets_bots_of_its_own_strength() -> None:
    field = [Member(f"bot_{i:02}", float(i), 0.5, 100, room=100) for i in range(40)]
    host = Member("host", 20.0, 0.6, 0, room=100)  # the neediest, by a little
    gaps = []
    for seed in range(20):
        [table] = choose_tables([host, *field], tables=1, rng=random.Random(seed))
        assert "host" in table
        gaps += [abs(float(b.removeprefix("bot_")) - 20.0) for b in table if b != "host"]
    assert max(gaps) <= 3.0  # its three nearest, give or take its small uncertainty


def test_order_doubt_is_the_chance_that_the_one_shown_higher_is_the_weaker() -> None:
    level = [Member("a", 25.0, 3.0, 9), Member("b", 25.0, 3.0, 9)]
    assert order_doubt(*level) == pytest.approx(0.5)
    apart = [Member("a", 40.0, 1.0, 9), Member("b", 10.0, 1.0, 9)]
    assert order_doubt(*apart) < 1e-9 and order_doubt(*reversed(apart)) < 1e-9
    # a strong new bot shown below a weaker settled one (μ − 3σ: 10 against 19)
    shown_low = [Member("new", 35.0, 8.33, 0), Member("old", 25.0, 2.0, 90)]
    assert order_doubt(*shown_low) == pytest.approx(0.878, abs=0.001)
    assert order_doubt(Member("a", 25.0, 0.0, 9), Member("b", 25.0, 0.0, 9)) == 0.0
    field = [*level, Member("far", 90.0, 1.0, 9)]
    assert doubts(field) == pytest.approx({"a": 0.5, "b": 0.5, "far": 0.0})


def test_a_members_doubt_is_exactly_the_sum_of_its_order_doubts() -> None:
    """Each pair is worked out once: the sums must be those of the definition, bit for bit,
    also for two members shown level with different μ (each is then the one shown higher when
    asked first) and for two of σ 0."""
    rng = random.Random(7)
    field = [
        Member("level_a", 28.0, 2.0, 9),  # shown 22, as level_b
        Member("level_b", 25.0, 1.0, 9),
        Member("certain_a", 22.0, 0.0, 9),
        Member("certain_b", 22.0, 0.0, 9),
        *(Member(f"bot_{i}", rng.gauss(25, 5), rng.uniform(0.5, 8.33), 9) for i in range(40)),
    ]
    by_definition = {
        m.bot_id: sum(order_doubt(m, o) for o in field if o.bot_id != m.bot_id) for m in field
    }
    assert doubts(field) == by_definition


def test_an_uncertain_bot_meets_those_it_is_most_likely_shown_wrongly_against() -> None:
    field = [Member(f"bot_{i:02}", float(i), 1.0, 100, room=100) for i in range(40)]
    host = Member("host", 20.0, 8.0, 0, room=100)  # shown at -4, below every bot
    for seed in range(5):
        [table] = choose_tables([host, *field], tables=1, rng=random.Random(seed))
        # weak bots: shown above the host, and most likely weaker than it
        assert "host" in table and all(float(b[4:]) < 5 for b in table if b != "host")


def test_a_bot_whose_place_is_sure_waits_while_others_are_in_doubt() -> None:
    close = [Member(f"bot_{i}", 25.0 + i / 2, 2.0, 40, room=1) for i in range(4)]
    sure = Member("sure", 60.0, 1.0, 40, room=1)  # far above everyone, and settled
    for seed in range(5):
        [table] = choose_tables([sure, *close, *HOUSE], tables=1, rng=random.Random(seed))
        assert "sure" not in table
    tables = choose_tables([sure, *close, *HOUSE], tables=3, rng=random.Random(0))
    assert "sure" in tables[2]  # once the others are seated, it plays


def test_a_bot_with_room_for_two_tables_meets_other_bots_at_its_second() -> None:
    members = [*_field(8, room=2), *HOUSE]
    for seed in range(5):
        tables = choose_tables(members, tables=8, rng=random.Random(seed))
        assert len(set(map(frozenset, tables))) == len(tables)  # no table twice in a round


def test_the_same_members_and_seed_give_the_same_tables() -> None:
    members = [*_field(12, room=2), *HOUSE]
    first = choose_tables(members, tables=6, rng=random.Random("round-3"))
    assert first == choose_tables(members, tables=6, rng=random.Random("round-3"))
    assert first != choose_tables(members, tables=6, rng=random.Random("round-4"))


@pytest.mark.parametrize("choose", [choose_tables, random_tables])
def test_too_few_members_with_room_seat_no_table(choose: object) -> None:
    assert callable(choose)
    assert choose(HOUSE, tables=3, rng=random.Random(0)) == []  # house bots alone
    three = [Member("solo", 25.0, 8.0, 0, room=1), *HOUSE[:2]]
    assert choose(three, tables=3, rng=random.Random(0)) == []
    assert choose([], tables=3, rng=random.Random(0)) == []
    assert choose([*_field(5), *HOUSE], tables=0, rng=random.Random(0)) == []


def test_random_tables_respect_room_and_seat_everyone_with_room() -> None:
    members = [*_field(7, room=1), Member("two", 20.0, 2.0, 40, room=2), *HOUSE]
    for seed in range(10):
        tables = random_tables(members, tables=20, rng=random.Random(seed))
        seated = Counter(b for t in tables for b in t)
        # until fewer than four members have room: with three house bots, all used up
        assert {m.bot_id: seated[m.bot_id] for m in members if not m.house} == {
            **{f"bot_{i:02}": 1 for i in range(7)},
            "two": 2,
        }
        assert all(len(set(t)) == 4 for t in tables)
    assert len(random_tables(members, tables=2, rng=random.Random(0))) == 2


def test_on_equal_doubt_the_less_certain_bot_hosts() -> None:
    # every μ at 25: every pair's doubt is one half, whatever the σ
    level = [Member(f"settled{i}", 25.0, 3.0, 0, room=1) for i in range(6)]
    anchor = Member("house:normal", 25.0, 1.0, 500, house=True)
    new = Member("new", 25.0, 8.33, 0, room=1)
    assert set(doubts([new, *level, anchor]).values()) == {3.5}
    for seed in range(5):
        [table] = choose_tables([*level, new, anchor], tables=1, rng=random.Random(seed))
        assert "new" in table


def test_a_bot_passed_over_is_seated_next_round_before_bots_in_more_doubt() -> None:
    close = [Member(f"bot_{i}", 25.0 + i / 2, 2.0, 40, room=1) for i in range(6)]
    sure = Member("sure", 60.0, 1.0, 40, room=1)  # far above everyone: it waits...
    for seed in range(5):
        [table] = choose_tables([sure, *close, *HOUSE], tables=1, rng=random.Random(seed))
        assert "sure" not in table
        passed = replace(sure, passed_over=1)  # ...one round, not two
        [table] = choose_tables([passed, *close, *HOUSE], tables=1, rng=random.Random(seed))
        assert "sure" in table


def test_who_was_passed_over_in_a_round() -> None:
    members = [
        Member("seated", 25.0, 2.0, 40, room=1),
        Member("left", 25.0, 2.0, 40, room=1, passed_over=2),
        Member("busy", 25.0, 2.0, 40, room=0, passed_over=3),  # at a table: not passed over
        Member("fresh", 25.0, 2.0, 40, room=2),
        *HOUSE,
    ]
    tables = [("seated", "house:easy", "house:normal", "house:hard")]
    assert passed_over_after(members, tables) == {"left": 3, "fresh": 1}


def test_on_a_ladder_with_more_bots_than_seats_nobody_waits_long_however_sure_its_place() -> None:
    # 24 bots spread far apart, each sure of its place but the close middle: 4 tables a round
    field = [Member(f"bot_{i:02}", 10.0 * i, 1.0, 100, room=1) for i in range(20)]
    field += [Member(f"mid_{i}", 95.0 + i / 4, 3.0, 40, room=1) for i in range(4)]
    members = [*field, HOUSE[1]]
    longest = 0
    for round_no in range(30):
        tables = choose_tables(members, tables=4, rng=random.Random(round_no))
        assert len(tables) == 4
        passed = passed_over_after(members, tables)
        longest = max(longest, *passed.values())
        members = [replace(m, passed_over=passed.get(m.bot_id, 0)) for m in members]
    # 8 of the 24 wait each round; by doubt alone the sure ones would wait all 30 rounds
    assert longest <= 3
