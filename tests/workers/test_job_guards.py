"""The jobs' guards, in one process: a job for something missing, finished or cancelled does
nothing; a scheduled round finds every active bot however many pages they fill; an HTTP seat's
connection is closed after its match."""

from __future__ import annotations

from typing import Any

import pytest
from rq import Queue

from arena import matches
from arena.config import Config
from arena.errors import WrongStateError
from arena.http_seat import HttpSeat
from arena.records import BotStatus, MatchStatus, TournamentStatus
from arena.store import Store
from arena.tournaments import active_bots
from tests.workers.conftest import environment
from tests.workers.test_worker_tournaments import _start
from workers import jobs


@pytest.fixture(autouse=True)
def _arena(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)


def _bot(store: Store, name: str, endpoint: str = "http://127.0.0.1:9/bot") -> str:
    bot, _ = store.create_bot(
        name=name, endpoint=endpoint, description="", contact="t@example.com", version="1",
        secret="s3cret",
    )  # fmt: skip
    return bot.id


def _no_play(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("this match must not be played")

    monkeypatch.setattr(matches, "play_match", refuse)


@pytest.mark.parametrize("count", [100, 101])
def test_a_scheduled_round_finds_every_active_bot_on_every_page(store: Store, count: int) -> None:
    made = sorted(_bot(store, f"bot{n}") for n in range(count))
    store.set_bot_status(_bot(store, "paused"), BotStatus.PAUSED)
    assert active_bots(store) == made


def test_a_job_of_an_unknown_schedule_starts_nothing(store: Store) -> None:
    from tests.workers.test_cron import TEMPLATE

    store.create_schedule("* * * * *", TEMPLATE)
    jobs.run_schedule("s_")  # sorts before every schedule id
    jobs.run_schedule("zzz")  # and after
    assert store.list_tournaments(page=1, per_page=10).total == 0


def test_a_missing_or_finished_tournament_is_not_expanded(config: Config, store: Store) -> None:
    jobs.run_tournament("t_missing")
    tournament_id = _start(config, store, ["house:easy"])
    store.move_tournament(
        tournament_id, TournamentStatus.CANCELLED, allowed_from=[TournamentStatus.QUEUED]
    )
    jobs.run_tournament(tournament_id)
    assert store.list_matches(page=1, per_page=10, tournament_id=tournament_id).total == 0


def test_a_tournament_cancelled_while_it_is_expanded_queues_no_match(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    tournament_id = _start(config, store, ["house:easy"])
    queue = Queue(config.queue_name, connection=store.redis)
    queue.empty()

    def cancelled(*args: Any, **kwargs: Any) -> None:
        raise WrongStateError("cancelled meanwhile")

    monkeypatch.setattr(Store, "move_tournament", cancelled)
    jobs.run_tournament(tournament_id)
    assert queue.job_ids == []


def test_a_match_job_for_nothing_playable_plays_nothing(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    seats = ["house:easy"] * 4
    store.create_match("m_alone", seats=seats)  # no tournament's: a human game's, say
    tournament_id = _start(config, store, ["house:easy"])
    jobs.run_tournament(tournament_id)
    done = f"{tournament_id}-t1-d1-r1"
    jobs.run_match(done)
    assert store.get_match(done).status is MatchStatus.DONE  # type: ignore[union-attr]
    store.create_match("m_unlabelled", seats=seats, tournament_id=tournament_id)  # no deals
    _no_play(monkeypatch)
    jobs.run_match("m_missing")
    jobs.run_match("m_alone")
    jobs.run_match("m_unlabelled")
    jobs.run_match(done)  # recorded already


def test_an_http_seat_is_closed_after_its_match(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[int] = []
    original = HttpSeat.close

    def close(self: HttpSeat) -> None:
        closed.append(self.info.seat)
        original(self)

    monkeypatch.setattr(HttpSeat, "close", close)
    bot = _bot(store, "unreachable")  # nothing listens on port 9: every decision faults
    tournament_id = _start(config, store, [bot])
    jobs.run_tournament(tournament_id)
    match = store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items[0]
    jobs.run_match(match.id)
    assert closed == [match.seats.index(bot)]
    assert store.get_match(match.id).status is MatchStatus.DONE  # type: ignore[union-attr]
