"""Two matches recorded at the same moment (of one tournament, or rated outside tournaments):
each result counts, whatever the interleaving. The race is forced, not hoped for: a second
connection records the other match between the first transaction's reads (under WATCH) and its
EXEC."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis

from arena.config import Config
from arena.records import Format, TournamentSpec, TournamentStatus
from arena.store import Store
from referee import Rules
from replays.log import TimeControl
from tests.service.service_support import sealed_log

BOTS = ["bot_a", "bot_b", "bot_c", "house:easy"]


def _tournament(store: Store, total: int) -> str:
    spec = TournamentSpec("race", tuple(BOTS), Format(), Rules(), TimeControl(1000, 30000, 5))
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, total)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    return tid


def _before_the_first_exec(monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any]) -> list[int]:
    """Run ``action`` once, just before the first EXEC of a watched transaction; returns a list
    that holds 1 once it has run."""
    original = redis.client.Pipeline.execute
    fired: list[int] = []

    def interleaved(self: redis.client.Pipeline, raise_on_error: bool = True) -> Any:
        if self.watching and self.explicit_transaction and not fired:
            fired.append(1)
            action()
        return original(self, raise_on_error)

    monkeypatch.setattr(redis.client.Pipeline, "execute", interleaved)
    return fired


def test_two_results_recorded_at_once_both_count(
    store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = _tournament(store, total=2)
    first, second = (sealed_log(config, f"m{n}", BOTS, tournament_id=tid, seed=n) for n in (1, 2))
    other = Store.from_config(config)  # another worker's connection
    fired = _before_the_first_exec(monkeypatch, lambda: other.record_result("m2", second))

    assert store.record_result("m1", first)
    assert fired == [1]
    tournament = store.get_tournament(tid)
    assert tournament is not None
    assert (tournament.done, tournament.status) == (2, TournamentStatus.DONE)
    standings = {s.bot_id: s for s in store.standings(tid)}
    assert {s.matches for s in standings.values()} == {2}
    for seat, bot_id in enumerate(BOTS):
        points = first["hands"][0]["result"]["scores"][seat]
        points += second["hands"][0]["result"]["scores"][seat]
        assert standings[bot_id].points == points
    for bot_id in BOTS:
        rating = store.rating(bot_id)
        assert rating is not None and rating.matches == 2
        assert len(store.rating_history(bot_id)) == 2


def test_the_same_result_recorded_twice_at_once_counts_once(
    store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = _tournament(store, total=1)
    log = sealed_log(config, "m1", BOTS, tournament_id=tid, seed=1)
    other = Store.from_config(config)
    results: list[bool] = []
    _before_the_first_exec(monkeypatch, lambda: results.append(other.record_result("m1", log)))

    results.append(store.record_result("m1", log))
    assert results == [True, False]  # the interleaved one won; the first saw it on its retry
    tournament = store.get_tournament(tid)
    assert tournament is not None and tournament.done == 1
    assert {s.matches for s in store.standings(tid)} == {1}
    assert len(store.rating_history("bot_a")) == 1


def test_two_rated_matches_outside_tournaments_recorded_at_once_both_move_the_ladder(
    store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No tournament key is shared here: only watching the players' ratings makes the first
    transaction read them again."""
    first, second = (sealed_log(config, f"f{n}", BOTS, seed=n) for n in (1, 2))
    other = Store.from_config(config)
    fired = _before_the_first_exec(monkeypatch, lambda: other.record_result("f2", second))

    assert store.record_result("f1", first)
    assert fired == [1]
    for bot_id in BOTS:
        rating = store.rating(bot_id)
        assert rating is not None and rating.matches == 2
        assert [p.match_id for p in store.rating_history(bot_id)] == ["f2", "f1"]
