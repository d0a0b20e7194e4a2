"""The divergence index: written when a deal's last rotation is recorded, once, and still
written when the worker died between recording that rotation and indexing it."""

from __future__ import annotations

import pytest

from arena import divergence_index, matches, tournaments
from arena.config import Config
from arena.context import Arena
from arena.pairing import plan
from arena.records import Format, TournamentSpec, TournamentStatus
from arena.store import Store
from referee import Rules
from replays.log import TimeControl

SEATS = ("house:easy", "house:normal", "house:easy", "house:normal")


def _tournament(store: Store) -> tuple[str, list[str]]:
    """A running duplicate tournament of house bots, two deals of one table, its matches
    planned (not queued): their ids, in rotation order."""
    spec = TournamentSpec(
        "house cup", SEATS, Format(matches_per_table=2), Rules(fixed_hands=1),
        TimeControl(1000, 30000, 5), rated=False,
    )  # fmt: skip
    tid = store.create_tournament(spec)
    planned = plan(SEATS, seed=tid, duplicate=True, matches_per_table=2)
    tournaments.store_planned(store, tid, planned)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    return tid, [p.match_id(tid) for p in planned]


def _indexed(store: Store) -> dict[str, int]:
    return {p: store.divergences(p, page=1, per_page=100).total for p in set(SEATS)}


class WorkerDiedError(Exception):
    """The worker's process ends here (as a kill would): nothing after it runs."""


def test_a_deal_is_indexed_when_its_last_rotation_is_recorded_and_once(
    config: Config, store: Store
) -> None:
    arena = Arena(config, store)
    _, ids = _tournament(store)
    for match_id in ids[:3]:
        matches.play(arena, match_id)
        assert _indexed(store) == {"house:easy": 0, "house:normal": 0}  # the deal is unfinished
    matches.play(arena, ids[3])
    counts = _indexed(store)
    assert sum(counts.values()) > 0 and store.deals_to_index() == []
    every = store.divergences("house:easy", page=1, per_page=100).items
    assert [e.cost for e in every] == sorted((e.cost for e in every), reverse=True)
    assert all(e.deal_label == "t1:d1" and e.lines == 4 for e in every)
    divergence_index.index_recorded_deals(arena)  # nothing waits: nothing changes
    store.index_divergences(("x", "t1:d1"), {"house:easy": every})  # the same entries again
    assert _indexed(store) == counts


def test_a_worker_dying_between_record_and_index_leaves_the_deal_to_its_retry(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = Arena(config, store)
    tid, ids = _tournament(store)
    for match_id in ids[:3]:
        matches.play(arena, match_id)

    def die(arena: Arena) -> None:
        raise WorkerDiedError

    with monkeypatch.context() as patched:
        patched.setattr(divergence_index, "index_recorded_deals", die)
        with pytest.raises(WorkerDiedError):
            matches.play(arena, ids[3])
    assert store.deals_to_index() == [(tid, "t1:d1")]
    assert _indexed(store) == {"house:easy": 0, "house:normal": 0}
    matches.play(arena, ids[3])  # the job run again finds the match recorded and indexes it
    assert store.deals_to_index() == []
    assert sum(_indexed(store).values()) > 0
    indexed = _indexed(store)
    matches.play(arena, ids[4])  # the next match recorded (another deal's) adds nothing to it
    assert _indexed(store) == indexed
    labels = {
        e.deal_label for p in set(SEATS) for e in store.divergences(p, page=1, per_page=100).items
    }
    assert labels == {"t1:d1"}
