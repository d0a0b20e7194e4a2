"""Gauntlets play deal after deal until their test knows: in-process, one match at a time, with
real bot servers on loopback (test_gauntlet_crash.py kills a real worker's horse)."""

from __future__ import annotations

import hashlib
from contextlib import ExitStack

import pytest

from arena import gauntlets, matches
from arena.config import Config
from arena.context import Arena
from arena.errors import InvalidError, NotAllowedError, TooManyError
from arena.queue import match_job_id
from arena.records import OPERATOR, BotStatus, MatchStatus, TournamentStatus
from arena.store import Store
from arena.store import store as store_module
from bot_sdk.sequential import MIN_DEALS, Verdict
from referee import Rules, Variant
from tests.workers.ladder_support import enter

SECRET = hashlib.sha256(b"0").digest()
"""The deal secret of the gauntlets of Normal against the lowest card (drawn at random
otherwise): deals on which Normal is called better after 12 deals (on another secret's, 36).
Each run then plays the same deals, in the same time."""


@pytest.fixture
def fixed_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "draw_secret", lambda: SECRET)


def _queued(arena: Arena) -> list[str]:
    return [job.id for job in arena.queue.get_jobs()]


def play_out(arena: Arena, gauntlet_id: str, *, limit: int = 400) -> list[str]:
    """Play the gauntlet's queued matches one at a time, as a worker would, until none is
    queued; return the matches played, checking that never more than one was queued."""
    played: list[str] = []
    while (queued := _queued(arena)) and len(played) < limit:
        assert len(queued) == 1, queued  # one rotation at a time
        job = arena.queue.fetch_job(queued[0])
        assert job is not None
        match_id = job.args[0]
        job.delete()
        matches.play(arena, match_id)
        played.append(match_id)
    return played


@pytest.mark.usefixtures("fixed_deals")
def test_a_stronger_candidate_is_called_better_deal_by_deal(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    weak = enter(store, stack, "weak")  # plays its lowest legal card
    request = gauntlets.Request("house:normal", weak, ("house:easy", "house:easy"), hands=1)
    shown = gauntlets.create(arena, request, started_by=OPERATOR, manages=[])
    assert shown.tournament.status is TournamentStatus.RUNNING and shown.verdict == "running"
    assert shown.tournament.spec.participants == ("house:normal", "house:easy", weak, "house:easy")
    assert _queued(arena) == [match_job_id(gauntlets.match_id(shown.id, 1, 0))]
    assert store.list_tournaments(page=1, per_page=10).total == 0  # listed with the gauntlets
    assert [g.id for g in gauntlets.listing(arena, page=1, per_page=10).items] == [shown.id]

    played = play_out(arena, shown.id)
    done = gauntlets.progress(arena, shown.id)
    assert done.verdict == Verdict.BETTER.value
    assert done.tournament.status is TournamentStatus.DONE
    deals = len(done.deals)
    assert deals >= MIN_DEALS and len(played) == 4 * deals
    assert done.tournament.done == done.tournament.total == 4 * deals
    assert done.state.verdict is Verdict.BETTER and done.state.low > 0
    assert len(done.trajectory) == deals
    # the rotations of each deal in order, everyone one seat on each time
    assert played[:4] == [gauntlets.match_id(shown.id, 1, r) for r in range(4)]
    first = store.get_match(played[1])
    assert first is not None and first.seats == ("house:easy", weak, "house:easy", "house:normal")
    # each deal's result is the two bots' points over its four rotations
    rotations = store.get_matches(played[:4])
    normal = sum(
        m.result.totals[m.seats.index("house:normal")] for m in rotations if m.result is not None
    )
    assert done.deals[0].candidate_points == normal
    assert store.rating(weak) is None and store.rating("house:normal") is None  # unrated
    assert store.live_gauntlets() == {}
    gauntlets.advance(arena, shown.id)  # moving a finished gauntlet on changes nothing
    assert gauntlets.progress(arena, shown.id) == done and _queued(arena) == []


def test_a_bot_against_its_copy_shows_no_difference(
    config: Config, store: Store, stack: ExitStack
) -> None:
    """Two servers of the same deterministic bot score alike on every deal: Δ is 0 each time."""
    arena = Arena.from_config(config)
    one, two = enter(store, stack, "one"), enter(store, stack, "two")
    request = gauntlets.Request(one, two, hands=1)
    shown = gauntlets.create(arena, request, started_by=one, manages=[one, two])
    assert shown.gauntlet.opponents == ("house:normal", "house:normal")
    play_out(arena, shown.id)
    done = gauntlets.progress(arena, shown.id)
    assert done.verdict == Verdict.NO_DIFFERENCE.value
    assert len(done.deals) == MIN_DEALS
    assert {d.candidate_points - d.baseline_points for d in done.deals} == {0}


def test_a_crash_before_moving_on_is_caught_up_by_the_retry_and_the_sweep(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    arena = Arena.from_config(config)
    weak = enter(store, stack, "weak")
    request = gauntlets.Request("house:normal", weak, ("house:easy", "house:easy"), hands=1)
    shown = gauntlets.create(arena, request, started_by=OPERATOR, manages=[])
    first, second = (gauntlets.match_id(shown.id, 1, r) for r in range(2))

    with monkeypatch.context() as patched:  # the worker dies between recording and moving on
        patched.setattr(gauntlets, "advance", lambda arena, tid: None)
        arena.queue.empty()
        matches.play(arena, first)
    assert _queued(arena) == []  # stalled
    matches.play(arena, first)  # the match job's retry finds it recorded and moves on
    assert _queued(arena) == [match_job_id(second)]

    arena.queue.empty()  # the release lost too: the sweep releases it again
    gauntlets.sweep(arena)
    assert _queued(arena) == [match_job_id(second)]
    matches.play(arena, second)
    record = store.get_match(first)
    assert record is not None and record.status is MatchStatus.DONE
    assert store.get_tournament(shown.id).done == 2  # type: ignore[union-attr]  # recorded once


@pytest.mark.usefixtures("fixed_deals")
def test_a_failed_rotation_voids_its_deal_and_the_next_is_dealt(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    weak = enter(store, stack, "weak")
    request = gauntlets.Request("house:normal", weak, ("house:easy", "house:easy"), hands=1)
    shown = gauntlets.create(arena, request, started_by=OPERATOR, manages=[])
    first = gauntlets.match_id(shown.id, 1, 0)
    arena.queue.empty()
    assert store.mark_match_failed(first, "killed every time")
    gauntlets.advance(arena, shown.id)
    [void] = gauntlets.progress(arena, shown.id).deals
    assert void.deal == 1 and "killed every time" in void.void
    assert _queued(arena) == [match_job_id(gauntlets.match_id(shown.id, 2, 0))]
    play_out(arena, shown.id)
    done = gauntlets.progress(arena, shown.id)
    assert done.verdict == Verdict.BETTER.value
    assert done.state.deals == len(done.deals) - 1  # the void deal is not counted


def test_the_cap_ends_a_gauntlet_that_cannot_tell(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    one, two = enter(store, stack, "one"), enter(store, stack, "two")
    cap = MIN_DEALS  # every deal void: nothing is ever counted, and the cap still ends it
    request = gauntlets.Request(one, two, max_deals=cap, hands=1)
    shown = gauntlets.create(arena, request, started_by=OPERATOR, manages=[])
    for deal in range(1, cap + 1):
        arena.queue.empty()
        assert store.mark_match_failed(gauntlets.match_id(shown.id, deal, 0), "lost")
        gauntlets.advance(arena, shown.id)
    done = gauntlets.progress(arena, shown.id)
    assert done.verdict == Verdict.CAP.value and len(done.deals) == cap
    assert done.state.deals == 0 and done.tournament.status is TournamentStatus.DONE
    assert _queued(arena) == []


def test_what_a_gauntlet_may_be_asked(config: Config, store: Store, stack: ExitStack) -> None:
    arena = Arena.from_config(config)
    mine, other = enter(store, stack, "mine"), enter(store, stack, "other")

    def refused(request: gauntlets.Request, *, manages: tuple[str, ...] = (mine,)) -> str:
        with pytest.raises((InvalidError, NotAllowedError)) as caught:
            gauntlets.create(arena, request, started_by=mine, manages=manages)
        return f"{caught.value.field}: {caught.value.message}"  # as the API says it

    assert "alpha: must be between 0.001 and 0.2, not 0.5" in refused(
        gauntlets.Request(mine, "house:normal", alpha=0.5)
    )
    assert "delta: must be between" in refused(gauntlets.Request(mine, "house:normal", delta=0))
    assert f"max_deals: must be between {MIN_DEALS} and 1000, not 2" in refused(
        gauntlets.Request(mine, "house:normal", max_deals=2)
    )
    assert "hands: must be between 1 and 20" in refused(
        gauntlets.Request(mine, "house:normal", hands=0)
    )
    assert "other than the candidate" in refused(gauntlets.Request(mine, mine))
    assert "not yours" in refused(gauntlets.Request(mine, other))
    assert "not yours" in refused(gauntlets.Request(other, mine))
    assert "not a registered bot" in refused(gauntlets.Request(mine, "bot_nope"))
    assert "house bots as opponents" in refused(
        gauntlets.Request(mine, "house:normal", (other, other)), manages=(mine, other)
    )
    assert "same bot twice" in refused(
        gauntlets.Request(mine, "house:hard", ("house:easy", "house:normal"))
    )
    assert "neither the candidate nor the baseline" in refused(
        gauntlets.Request(mine, "house:easy", ("house:easy", "house:easy"))
    )
    teams = Rules(variants=frozenset({Variant.TEAMS}))
    assert "teams" in refused(gauntlets.Request(mine, "house:normal", rules=teams))
    assert store.list_gauntlets(page=1, per_page=10).total == 0  # nothing stored

    # an owner's live gauntlets are limited; a cancelled one no longer counts
    live = [
        gauntlets.create(
            arena, gauntlets.Request(mine, "house:normal"), started_by=mine, manages=[mine]
        )
        for _ in range(config.gauntlets_per_bot)
    ]
    with pytest.raises(TooManyError, match="the most allowed at once is 2"):
        gauntlets.create(
            arena, gauntlets.Request(mine, "house:normal"), started_by=mine, manages=[mine]
        )
    with pytest.raises(NotAllowedError):
        gauntlets.cancel(arena, live[0].id, by=other)
    cancelled = gauntlets.cancel(arena, live[0].id, by=mine)
    assert cancelled.verdict == "cancelled"
    assert cancelled.tournament.status is TournamentStatus.CANCELLED
    gauntlets.create(
        arena, gauntlets.Request(mine, "house:normal"), started_by=mine, manages=[mine]
    )


def test_a_paused_bot_stops_its_gauntlet_before_the_next_rotation(
    config: Config, store: Store, stack: ExitStack
) -> None:
    arena = Arena.from_config(config)
    one, two = enter(store, stack, "one"), enter(store, stack, "two")
    shown = gauntlets.create(
        arena, gauntlets.Request(one, two, hands=1), started_by=one, manages=[one, two]
    )
    arena.queue.empty()
    matches.play(arena, gauntlets.match_id(shown.id, 1, 0))  # recorded, the next released
    assert _queued(arena) == [match_job_id(gauntlets.match_id(shown.id, 1, 1))]
    arena.queue.empty()
    store.set_bot_status(two, BotStatus.PAUSED)
    gauntlets.advance(arena, shown.id)
    stopped = gauntlets.progress(arena, shown.id)
    assert (
        stopped.verdict == "cancelled" and stopped.tournament.status is TournamentStatus.CANCELLED
    )
    assert _queued(arena) == [] and store.live_gauntlets() == {}
    assert stopped.tournament.done == 1  # what was played stays
