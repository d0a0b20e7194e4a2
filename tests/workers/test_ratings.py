"""The ladder's ratings: the scale, anchored by showing every rating relative to house Normal,
holds still over long runs and newcomers; a new version starts a new history seeded from the
last; the head-to-head and seat figures add up; and a store whose ratings were made on another
scale is re-rated to exactly the ratings its matches give (the model of :mod:`arena.ratings`,
on synthetic results, and as the store keeps them)."""

from __future__ import annotations

import dataclasses
import random
import statistics
from collections.abc import Sequence
from typing import Any

import pytest

from arena import ratings
from arena.config import Config
from arena.records import Rating
from arena.store import Store, codecs, keys, replies
from arena.store.rerating import rerate
from replays.log import MatchLog, SeatInfo
from tests.workers.test_store_mutants import _log, _sealed

BASE = _log("base")
STRENGTH = {"house:normal": 0.0, "house:easy": -40.0, "house:hard": 15.0}
STRENGTH |= {"bot_0": -60.0, "bot_1": -20.0, "bot_2": 8.0, "bot_3": 30.0, "bot_4": 45.0}
"""True strengths, in points per hand above house Normal, of a field that never changes."""
NEWCOMERS = {f"new_{i}": -10.0 - 8.0 * i for i in range(8)}
"""Bots weaker than house Normal, all of them, that join later."""


def _result(seats: Sequence[str], rng: random.Random, match_id: str) -> MatchLog:
    """A match of one hand among ``seats`` whose points are their strengths plus the model's
    noise (and a common term): what the ladder would see of bots that never change."""
    strength = STRENGTH | NEWCOMERS
    common = rng.gauss(0.0, 50.0)
    totals = tuple(round(strength[s] + common + rng.gauss(0.0, ratings.NOISE)) for s in seats)
    places = tuple(1 + sum(o > t for o in totals) for t in totals)
    outcome = BASE.outcome._replace(places=places, totals=totals)
    return dataclasses.replace(
        BASE,
        match_id=match_id,
        seats=tuple(SeatInfo(i, s, s, "1") for i, s in enumerate(seats)),
        places=(places[0], places[1], places[2], places[3]),
        outcome=outcome,
    )


def _play(
    field: dict[str, Rating], entrants: Sequence[str], matches: int, rng: random.Random
) -> list[dict[str, float]]:
    """``matches`` random tables of ``entrants`` rated into ``field``, a newcomer starting as
    the store starts it; after each match, every shown μ (relative to house Normal's)."""
    seen = []
    for n in range(matches):
        seats = rng.sample(list(entrants), 4)
        log = _result(seats, rng, f"m{n}")
        level = field["house:normal"].mu if "house:normal" in field else 0.0
        before = [field.get(s) or ratings.starting_rating(s, "1", None, level=level) for s in seats]
        for rating in ratings.rate(log, before):
            field[rating.bot_id] = rating
        level = field["house:normal"].mu if "house:normal" in field else 0.0
        seen.append({b: ratings.shown(r, level=level).mu for b, r in field.items()})
    return seen


def _window(seen: list[dict[str, float]], bot_id: str) -> float:
    return statistics.fmean(step[bot_id] for step in seen)


def test_the_shown_scale_holds_still_for_a_field_of_unchanged_bots_over_many_matches() -> None:
    rng = random.Random(7)
    field: dict[str, Rating] = {}
    entrants = [*STRENGTH]  # the house bots and five bots, none of them ever changing
    early = _play(field, entrants, 3000, rng)[-500:]
    settled = {b: field[b].sigma for b in entrants}
    late = _play(field, entrants, 3000, rng)[-500:]
    anchor = field["house:normal"]
    assert anchor.matches > 2500 and anchor.sigma < 5.0  # rated like everyone
    assert all(step["house:normal"] == 0.0 for step in late)  # and shown as the zero
    # everyone keeps their shown numbers: the means over 500 matches, 2,500 apart, differ by
    # less than two of its sigmas, and its sigma only shrinks (a version does not change)
    moved = {b: round(_window(late, b) - _window(early, b), 2) for b in entrants}
    assert all(abs(moved[b]) < 2 * settled[b] for b in entrants), moved
    assert all(field[b].sigma < settled[b] for b in entrants)
    # each shown near its true strength relative to house Normal, in the true order
    assert all(abs(_window(late, b) - STRENGTH[b]) < 3 * field[b].sigma for b in entrants)
    assert sorted(entrants, key=lambda b: _window(late, b)) == sorted(entrants, key=STRENGTH.get)


def test_weaker_newcomers_end_below_house_normal_and_the_field_keeps_its_numbers() -> None:
    """Every newcomer starts at house Normal's level; rated like everyone, house Normal is
    shown above every one of these weaker ones after their matches, and the settled field's
    shown numbers stay within two sigmas of where they were."""
    rng = random.Random(11)
    field: dict[str, Rating] = {}
    _play(field, [*STRENGTH], 3000, rng)
    before = {b: ratings.shown(field[b], level=field["house:normal"].mu) for b in STRENGTH}
    late = _play(field, [*STRENGTH, *NEWCOMERS], 3000, rng)[-500:]
    assert all(_window(late, b) < 0.0 for b in NEWCOMERS), {b: _window(late, b) for b in NEWCOMERS}
    moved = {b: round(_window(late, b) - before[b].mu, 2) for b in STRENGTH}
    assert all(abs(moved[b]) < 2 * before[b].sigma for b in STRENGTH), moved


def test_a_new_version_starts_from_the_last_one_with_a_wider_sigma() -> None:
    settled = Rating("bot_a", 31.0, 2.5, matches=80, version="1.0")
    fresh = ratings.starting_rating("bot_a", "2.0", settled)
    assert (fresh.mu, fresh.sigma, fresh.matches, fresh.version) == (
        31.0,
        ratings.NEW_VERSION_SIGMA,
        0,
        "2.0",
    )
    unsure = Rating("bot_a", 20.0, 30.0, version="1.0")
    assert ratings.starting_rating("bot_a", "2.0", unsure).sigma == 30.0
    new = ratings.starting_rating("bot_b", "1", None, level=-4.5)
    assert (new.mu, new.sigma) == (-4.5, ratings.PRIOR_SIGMA)  # at house Normal's level


def test_a_new_bot_comes_below_the_provisional_threshold_after_the_documented_matches() -> None:
    """docs/LADDER.md: 62 matches of 4 hands against settled opponents, 67 against opponents
    as new as itself; 16 of 16 hands (21). The threshold is crossed there and not before."""
    assert ratings.matches_to_settle(4) == 62 and ratings.matches_to_settle(4, 40.0) == 67
    assert ratings.matches_to_settle(16) == 16 and ratings.matches_to_settle(16, 40.0) == 21
    sigma = ratings.PRIOR_SIGMA
    for _ in range(61):
        variances = [sigma**2, 100.0, 100.0, 100.0]
        sigma = (
            ratings.margin_update([0.0] * 4, variances, [0.0] * 4, ratings.NOISE**2 / 4)[1][0]
            ** 0.5
        )
    assert sigma > 10.0


def _rated(store: Store, config: Config, match_id: str, versions: dict[str, str]) -> MatchLog:
    log = _log(match_id)
    seats = tuple(dataclasses.replace(s, version=versions.get(s.bot_id, "1")) for s in log.seats)
    log = dataclasses.replace(log, seats=seats)
    assert store.record_result(match_id, _sealed(config, log))
    return log


def test_the_store_keeps_a_history_per_version_and_a_rollback_continues_its_own(
    config: Config, store: Store
) -> None:
    for n in range(3):
        _rated(store, config, f"a{n}", {"bot_a": "1.0"})
    v1 = store.rating("bot_a")
    assert v1 is not None and (v1.version, v1.matches) == ("1.0", 3)
    _rated(store, config, "b0", {"bot_a": "2.0"})
    v2 = store.rating("bot_a")
    assert v2 is not None and (v2.version, v2.matches) == ("2.0", 1)
    assert [p.match_id for p in store.rating_history("bot_a")] == ["b0"]
    assert [p.match_id for p in store.rating_history("bot_a", "1.0")] == ["a0", "a1", "a2"]
    assert [r.version for r in store.rating_versions("bot_a")] == ["2.0", "1.0"]
    # seeded from 1.0: its mean before its first match, a wider sigma
    seeded = ratings.starting_rating("bot_a", "2.0", v1)
    assert v2.sigma < seeded.sigma and seeded.mu == v1.mu
    _rated(store, config, "c0", {"bot_a": "1.0"})  # rolled back: 1.0 goes on where it was
    back = store.rating("bot_a")
    assert back is not None and (back.version, back.matches) == ("1.0", 4)
    assert [p.match_id for p in store.rating_history("bot_a", "1.0")] == ["a0", "a1", "a2", "c0"]
    assert store.rating_versions("bot_a")[0].version == "1.0"


def test_head_to_head_and_seat_figures_add_up_over_rated_matches(
    config: Config, store: Store
) -> None:
    logs = [_rated(store, config, f"m{n}", {}) for n in range(3)]
    rows = {h.opponent: h for h in store.head_to_head("bot_a")}
    assert set(rows) == {s.bot_id for s in logs[0].seats} - {"bot_a"}
    for opponent, row in rows.items():
        seat_a = [s.bot_id for s in logs[0].seats].index("bot_a")
        seat_o = [s.bot_id for s in logs[0].seats].index(opponent)
        ahead = sum(log.places[seat_a] < log.places[seat_o] for log in logs)
        behind = sum(log.places[seat_a] > log.places[seat_o] for log in logs)
        diff = sum(log.outcome.totals[seat_a] - log.outcome.totals[seat_o] for log in logs)
        assert (row.matches, row.ahead, row.behind, row.level) == (
            3,
            ahead,
            behind,
            3 - ahead - behind,
        )
        assert row.points == diff and row.hands == 3
    rating = store.rating("bot_a")
    assert rating is not None
    seat_a = [s.bot_id for s in logs[0].seats].index("bot_a")
    assert rating.seats[seat_a].matches == 3
    assert sum(f.matches for f in rating.seats) == 3
    assert store.head_to_head("nobody") == []


@pytest.mark.parametrize("unrated", ["rated flag off", "a house bot twice"])
def test_an_unrated_match_adds_no_head_to_head(config: Config, store: Store, unrated: str) -> None:
    if unrated == "rated flag off":
        log = dataclasses.replace(_log("u1"), rated=False)
    else:
        log = _log("u1", ["bot_a", "house:easy", "house:easy", "bot_b"])
    assert store.record_result("u1", _sealed(config, log))
    assert store.head_to_head("bot_a") == [] and store.rating("bot_a") is None


def _ratings_state(store: Store) -> dict[str, Any]:
    """Everything the store keeps of the ratings: each rating key's value, the ladder's order
    and scores, and each match's rating effect."""
    state: dict[str, Any] = {}
    for key in sorted(replies.texts(store.redis.keys(keys.RATING_PATTERN))):
        kind = replies.text(store.redis.type(key))
        if kind == "string":
            state[key] = store.redis.get(key)
        elif kind == "hash":
            state[key] = store.redis.hgetall(key)
        else:
            state[key] = store.redis.lrange(key, 0, -1)
    state[keys.LADDER] = store.redis.zrange(keys.LADDER, 0, -1, withscores=True)
    for match_id in replies.texts(store.redis.zrange(keys.MATCHES, 0, -1)):
        state[match_id] = store.redis.hget(keys.match(match_id), "rating_effect")
    return state


def test_a_store_of_old_scale_ratings_is_re_rated_to_exactly_what_its_matches_give(
    config: Config, store: Store
) -> None:
    """The same matches recorded on the current scale give the ratings; turned into a store
    of openskill's ratings from before the scale was named, re-rating gives back exactly
    those (every rating, version, history point, ladder score and rating effect)."""
    for n in range(4):
        _rated(store, config, f"a{n}", {"bot_a": "1.0"})
    _rated(store, config, "b0", {"bot_a": "2.0", "bot_b": "7"})
    _rated(store, config, "c0", {"bot_a": "1.0"})
    fresh = _ratings_state(store)
    assert store.ratings_scale() == ratings.SCALE
    store.redis.delete(keys.RATINGS_SCALE, keys.RATED)
    for bot_id in ("bot_a", "bot_b", "house:easy", "house:hard"):  # openskill's numbers
        kept = store.rating(bot_id)
        assert kept is not None
        store.redis.set(keys.rating(bot_id), codecs.to_json(dataclasses.replace(kept, mu=25.0)))
    assert store.ratings_scale() == ratings.OLD_SCALE  # ratings and no name: the old scale
    assert store.rating_level() is None  # not shown
    assert rerate(store) == 6
    assert _ratings_state(store) == fresh
    assert store.ratings_scale() == ratings.SCALE
    assert rerate(store) == 6 and _ratings_state(store) == fresh  # from the journal alone


def test_matches_recorded_while_awaiting_re_rating_move_nothing_then_are_rated(
    config: Config, store: Store
) -> None:
    logs = [_rated(store, config, f"a{n}", {}) for n in range(2)]
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
    waiting = _ratings_state(store)
    logs += [_rated(store, config, f"w{n}", {}) for n in range(2)]
    assert {k: v for k, v in _ratings_state(store).items() if k not in ("w0", "w1")} == waiting
    assert store.head_to_head("bot_a")[0].matches == 4  # counted there all the same
    assert rerate(store) == 4
    rerated = _numbers(store)
    store.redis.flushdb()
    for log in logs:
        assert store.record_result(log.match_id, _sealed(config, log))
    assert rerated == _numbers(store)


def _numbers(store: Store) -> dict[tuple[str, str], tuple[float, float, int, int]]:
    """Every version's μ, σ, matches and points (a second store records at other times)."""
    bots = {s.bot_id for s in _log("any").seats}
    return {
        (r.bot_id, r.version): (r.mu, r.sigma, r.matches, r.points)
        for bot_id in bots
        for r in store.rating_versions(bot_id)
    }


def test_a_re_rating_rates_what_is_recorded_meanwhile_and_starts_again_after_a_void(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the re-rating reads the logs, a match is recorded (it is rated too before the
    ratings are written), then a rated match is voided (the re-rating starts again)."""
    logs = [_rated(store, config, f"a{n}", {}) for n in range(2)]
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
    read = store.replay_blob
    calls: list[str] = []

    def reading(match_id: str, *, keep: bool = True) -> bytes | None:
        assert not keep  # a re-rating reads every log: none is kept in Redis
        calls.append(match_id)
        if len(calls) == 1:  # recorded meanwhile: it joins the journal
            logs.append(_rated(store, config, "late", {}))
        if len(calls) == 3:  # reading it, a ruling voids a rated match meanwhile
            store.redis.incr(keys.RATINGS_CHANGED)
        return read(match_id, keep=keep)

    monkeypatch.setattr(store, "replay_blob", reading)
    assert rerate(store) == 3
    # the late match read once the journal grew, then everything again after the void
    assert calls == ["a0", "a1", "late", "a0", "a1", "late"]
    rerated = _numbers(store)
    store.redis.flushdb()
    for log in logs:
        assert store.record_result(log.match_id, _sealed(config, log))
    assert rerated == _numbers(store)


def test_two_re_ratings_at_once_rate_every_match_once(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator's ``gongzhu rerate`` while the matchmaker's round re-rates: the second one
    written starts the other again (the journal it was reading was rewritten, the matches from
    before the journal put first), so no match is rated twice."""
    logs = [_rated(store, config, f"a{n}", {}) for n in range(3)]
    store.redis.delete(keys.RATED)  # rated before the journal: known from their histories
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
    read = store.replay_blob
    calls: list[str] = []

    def reading(match_id: str, *, keep: bool = True) -> bytes | None:
        calls.append(match_id)
        if len(calls) == 2:  # the outer one is reading: a match comes in, another re-rates
            logs.append(_rated(store, config, "late", {}))
            monkeypatch.setattr(store, "replay_blob", read)
            assert rerate(store) == 4
            monkeypatch.setattr(store, "replay_blob", reading)
        return read(match_id, keep=keep)

    monkeypatch.setattr(store, "replay_blob", reading)
    assert rerate(store) == 4
    assert replies.number(store.redis.llen(keys.RATED)) == 4
    rerated = _numbers(store)
    store.redis.flushdb()
    for log in logs:
        assert store.record_result(log.match_id, _sealed(config, log))
    assert rerated == _numbers(store)
