"""The ladder's ratings: the anchor holds the scale still over long runs and newcomers, a new
version starts a new history seeded from the last, and the head-to-head and seat figures add
up (the model of :mod:`arena.ratings`, on synthetic results, and as the store keeps them)."""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from collections.abc import Sequence

import pytest

from arena import ratings
from arena.config import Config
from arena.records import Rating
from arena.store import Store
from replays.log import MatchLog, SeatInfo
from tests.workers.test_store_mutants import _log, _sealed

BASE = _log("base")
STRENGTH = {"house:normal": 0.0, "house:easy": -1.5, "house:hard": 1.0}
STRENGTH |= {"bot_0": -2.5, "bot_1": -0.75, "bot_2": 0.5, "bot_3": 1.75, "bot_4": 2.5}
"""True strengths (log-odds of a better place) of a field that never changes."""


def _result(seats: Sequence[str], rng: random.Random, match_id: str) -> MatchLog:
    """A match among ``seats`` whose places follow their strengths (Plackett-Luce, by Gumbel
    noise): what the ladder would see of bots that never change."""
    noisy = [STRENGTH[s] - math.log(-math.log(rng.random())) for s in seats]
    order = sorted(range(4), key=lambda seat: -noisy[seat])
    places = [0, 0, 0, 0]
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    totals = tuple(-100 * p for p in places)
    outcome = BASE.outcome._replace(places=tuple(places), totals=totals)
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
    """``matches`` random tables of ``entrants`` rated into ``field``; each match's μ of all."""
    seen = []
    for n in range(matches):
        seats = rng.sample(list(entrants), 4)
        log = _result(seats, rng, f"m{n}")
        before = [field.get(s) or ratings.starting_rating(s, "1", None) for s in seats]
        for rating in ratings.rate(log, before):
            field[rating.bot_id] = rating
        seen.append({b: r.mu for b, r in field.items()})
    return seen


def _window(seen: list[dict[str, float]], bot_id: str) -> float:
    return statistics.fmean(step[bot_id] for step in seen)


def test_the_anchor_holds_the_scale_of_a_field_of_unchanged_bots_over_many_matches() -> None:
    rng = random.Random(7)
    field: dict[str, Rating] = {}
    entrants = [*STRENGTH]  # the house bots and five bots, none of them ever changing
    early = _play(field, entrants, 3000, rng)[-500:]
    settled = {b: field[b].sigma for b in entrants}
    late = _play(field, entrants, 3000, rng)[-500:]
    anchor = field["house:normal"]
    assert (anchor.mu, anchor.sigma) == (ratings.ANCHOR_MU, ratings.ANCHOR_SIGMA)
    assert anchor.matches > 2500  # it played and was counted: only its rating never moves
    # everyone else keeps their numbers: the means over 500 matches, 2,500 apart, differ by
    # less than two of its sigmas, and its sigma only shrinks (a version does not change)
    moved = {b: round(_window(late, b) - _window(early, b), 2) for b in entrants}
    assert all(abs(moved[b]) < 2 * settled[b] for b in entrants), moved
    assert all(field[b].sigma < settled[b] for b in entrants if b != "house:normal")
    # and the order of the field is its true order
    assert sorted(entrants, key=lambda b: _window(late, b)) == sorted(entrants, key=STRENGTH.get)


def test_a_new_version_starts_from_the_last_one_with_a_wider_sigma() -> None:
    settled = Rating("bot_a", 31.0, 2.5, matches=80, version="1.0")
    fresh = ratings.starting_rating("bot_a", "2.0", settled)
    assert (fresh.mu, fresh.sigma, fresh.matches, fresh.version) == (31.0, 6.0, 0, "2.0")
    unsure = Rating("bot_a", 20.0, 7.5, version="1.0")
    assert ratings.starting_rating("bot_a", "2.0", unsure).sigma == 7.5
    new = ratings.starting_rating("bot_b", "1", None)
    assert (new.mu, new.sigma) == (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)


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
