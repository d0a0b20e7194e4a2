"""The ladder runs itself: matchmaking rounds seat tables of ladder members by need, a table's
rotations are played one after another (so a bot's limit on concurrent matches holds), a round
picks up what a crash left, and a paused or departed bot plays no more: in-process, one step at
a time, with real bot servers on loopback (test_ladder_running.py runs the real processes)."""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack

import pytest

from arena import ladder, matches, ratings
from arena.config import Config
from arena.context import Arena
from arena.queue import match_job_id
from arena.records import BotStatus, Rating, TournamentStatus
from arena.store import Store, codecs, keys
from tests.workers.ladder_support import HOUSE, enter, ladder_config


@pytest.fixture
def config(config: Config) -> Config:
    return ladder_config(config)


def _queued(arena: Arena) -> list[str]:
    return [job.id for job in arena.queue.get_jobs()]


def _rotations(store: Store, table_id: str) -> list[str]:
    found = store.list_matches(page=1, per_page=10, tournament_id=table_id).items
    return sorted(m.id for m in found)


def test_a_table_plays_its_rotations_one_after_another_and_a_round_picks_up_after_a_crash(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = Arena.from_config(config)
    first, second = enter(store, stack, "first"), enter(store, stack, "second")
    [table_id] = ladder.matchmake(arena)  # each has room for one table: one table of four
    table = store.get_tournament(table_id)
    assert table is not None and table.ladder and table.spec.rated
    assert sorted(table.spec.participants) == sorted([first, second, *HOUSE])
    assert store.list_tournaments(page=1, per_page=10).total == 0  # listed with the ladder
    assert [t.id for t in store.list_tournaments(page=1, per_page=10, ladder=True).items] == [
        table_id
    ]
    r1, r2, r3, r4 = _rotations(store, table_id)
    assert _queued(arena) == [match_job_id(r1)]  # only the first rotation is released
    assert ladder.matchmake(arena) == []  # both bots are at their one table
    assert _queued(arena) == [match_job_id(r1)]

    matches.play(arena, r1)  # a worker plays it: recorded, the next rotation released
    assert _queued(arena) == [match_job_id(r1), match_job_id(r2)]
    rating = store.rating(first)
    assert rating is not None and (rating.matches, rating.version) == (1, "2.5")
    played = store.get_match(r1)
    assert played is not None  # each seat's version, as it answered in hello
    assert dict(zip(played.seats, played.versions, strict=True)) == {
        first: "2.5",
        second: "2.5",
        "house:easy": "1",
        "house:normal": "1",
    }

    # a worker dies after recording r2 and before releasing r3: the next round releases it
    with monkeypatch.context() as patched:
        patched.setattr(ladder, "advance", lambda arena, table_id: None)
        matches.play(arena, r2)
    assert match_job_id(r3) not in _queued(arena)
    assert ladder.matchmake(arena) == []
    assert _queued(arena)[-1] == match_job_id(r3)

    # its owner pauses the second bot: the table stops before its next rotation
    matches.play(arena, r3)
    assert _queued(arena)[-1] == match_job_id(r4)
    store.set_bot_status(second, BotStatus.PAUSED)
    matches.play(arena, r4)  # already released: it plays
    tournament = store.get_tournament(table_id)
    assert tournament is not None and tournament.status is TournamentStatus.DONE
    assert ladder.matchmake(arena) == []  # three members left: no table
    assert store.open_ladder_tables() == {}
    rating = store.rating(first)
    assert rating is not None and rating.matches == 4
    assert [f.matches for f in rating.seats] == [1, 1, 1, 1]  # every seat once: a duplicate


def test_a_table_whose_bot_leaves_the_ladder_is_cancelled_before_its_next_rotation(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    first, second = enter(store, stack, "first"), enter(store, stack, "second")
    [table_id] = ladder.matchmake(arena)
    r1, r2, *_ = _rotations(store, table_id)
    store.update_bot(second, ladder=False)
    matches.play(arena, r1)
    tournament = store.get_tournament(table_id)
    assert tournament is not None and tournament.status is TournamentStatus.CANCELLED
    assert match_job_id(r2) not in _queued(arena)
    assert store.open_ladder_tables() == {}
    assert store.deal_secret(table_id) == store.revealed_secret(tournament)  # shown when over
    assert first in store.ratings([first])


def test_the_neediest_bot_is_seated_first_and_paused_or_disconnected_bots_never(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(dataclasses.replace(config, ladder_tables=1))
    settled = [enter(store, stack, f"settled{n}") for n in range(3)]
    paused = enter(store, stack, "paused", status=BotStatus.PAUSED)
    pending = enter(store, stack, "pending", status=BotStatus.PENDING)
    for bot_id in settled:
        # settled at the level a newcomer starts at (house Normal's), as 25 was on the scale
        # before: σ 5 points per hand, where a newcomer's is 40
        store.redis.set(f"gz:rating:{bot_id}", codecs.to_json(Rating(bot_id, 0.0, 5.0)))
    newcomer = enter(store, stack, "newcomer")
    [table_id] = ladder.matchmake(arena)
    table = store.get_tournament(table_id)
    assert table is not None and newcomer in table.spec.participants
    members = {m.bot_id for m in ladder.ladder_members(arena)}
    assert members == {*settled, newcomer, *HOUSE}
    assert paused not in members and pending not in members


def test_a_table_left_unplanned_by_a_dead_round_is_planned_by_the_next(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    first, second = enter(store, stack, "first"), enter(store, stack, "second")
    # a round that died after storing its table: stored and open, never planned
    spec = ladder.table_spec(config, (first, second, *HOUSE))
    orphan = store.create_tournament(spec, ladder=True)
    assert orphan in store.open_ladder_tables() and _rotations(store, orphan) == []
    assert ladder.matchmake(arena) == []  # its bots are at their one table: the orphan
    o1, *_ = _rotations(store, orphan)
    assert _queued(arena) == [match_job_id(o1)]  # planned, and its first rotation released
    tournament = store.get_tournament(orphan)
    assert tournament is not None and tournament.status is TournamentStatus.RUNNING


def _three_rotations_played(arena: Arena, stack: ExitStack) -> tuple[str, str, str]:
    """Two bots entered, the round's table seated and its first three rotations played: the
    first bot, the table and its last rotation."""
    store = arena.store
    first, _ = enter(store, stack, "first"), enter(store, stack, "second")
    [table_id] = ladder.matchmake(arena)
    *played, last = _rotations(store, table_id)
    for match_id in played:
        matches.play(arena, match_id)
    return first, table_id, last


def test_a_table_whose_last_match_failed_for_good_is_closed(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    first, table_id, last = _three_rotations_played(arena, stack)
    assert store.mark_match_failed(last, "the workers' sweep gave up on it")
    [seated] = ladder.matchmake(arena)  # closed: its bots have room for a new table again
    assert seated != table_id and list(store.open_ladder_tables()) == [seated]
    rating = store.rating(first)
    assert rating is not None and rating.matches == 3


def test_a_round_re_rates_ratings_of_another_scale_before_it_seats(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    first, _, _ = _three_rotations_played(arena, stack)
    rated = store.rating(first)
    assert rated is not None and rated.matches == 3
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)  # as an upgraded arena holds
    store.redis.set(keys.rating(first), codecs.to_json(dataclasses.replace(rated, mu=25.0)))
    assert ladder.status(arena).rerating
    ladder.matchmake(arena)
    assert store.ratings_scale() == ratings.SCALE and not ladder.status(arena).rerating
    assert store.rating(first) == rated  # the same matches, rated again: the same rating


def test_a_round_whose_re_rating_cannot_read_a_log_seats_its_tables_and_says_why(
    config: Config, store: Store, stack: ExitStack
) -> None:
    """A rated match whose stored log is gone: the re-rating stops, changing nothing, and the
    round seats its tables all the same (the ladder is not held up), saying why."""
    arena = Arena.from_config(config)
    _, table_id, last = _three_rotations_played(arena, stack)
    matches.play(arena, last)  # the table is played out: the round closes it
    lost = _rotations(store, table_id)[0]
    store.redis.hdel(keys.match(lost), "log_sha256")  # neither in the archive nor in Redis
    store.redis.delete(keys.replay(lost))
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
    seated = ladder.matchmake(arena)
    assert seated  # its bots, free again, are seated
    status = ladder.status(arena)
    assert status.rerating and lost in status.last_round["rerating_error"]


def test_a_round_keeps_whom_it_passed_over_and_the_next_round_seats_them_first(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(dataclasses.replace(config, ladder_tables=1))
    bots = [enter(store, stack, f"bot{n}", max_concurrent=3) for n in range(6)]
    passed: dict[str, int] = {}
    for _ in range(3):  # each bot has room for three tables: all have room in every round
        [table_id] = ladder.matchmake(arena)
        table = store.get_tournament(table_id)
        assert table is not None
        host, *_ = table.spec.participants
        if passed:  # a bot passed over before hosts, whatever the others' doubt
            assert passed.get(host) == max(passed.values())
        seated = set(table.spec.participants)
        passed = {b: passed.get(b, 0) + 1 for b in bots if b not in seated}
        assert passed and store.passed_over() == passed
        members = {m.bot_id: m.passed_over for m in ladder.ladder_members(arena)}
        assert members == {b: passed.get(b, 0) for b in [*bots, *HOUSE]}
