"""Redis killed with SIGKILL mid-tournament and started again on its data: a real
`python -m workers worker` process against the arena's own Redis (append-only, ``appendfsync
always``). No finished match is lost, the interrupted one is played again, every match is
recorded once, and the same worker process finishes the tournament (the restarted one, when the
worker and its horse were killed with Redis: every process of the machine restarted)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, ClassVar, get_args

import pytest
import simple_websocket
from rq.job import Job

from arena.config import Config
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import Format, MatchStatus
from arena.redis_server import RedisProcess, start_redis
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.channels import Channel
from bot_sdk.protocol import Status
from bot_sdk.server import make_app
from referee import Card, Observation
from service.app import create_app
from tests.pages.pages_support import serving
from tests.service.service_support import bearer
from tests.workers.conftest import arena_config, start_worker_process, stop_workers
from tests.workers.crashes import (
    children,
    crash_config,
    recovery_bound_s,
    running_matches,
    sigkill,
    wait_for,
)
from tests.workers.pull_support import connect, register_pull
from tests.workers.test_pull_bots import _message
from tests.workers.test_pull_tournaments import _active
from tests.workers.test_worker_tournaments import (
    Deliberate,
    _assert_counted_once,
    _assert_nothing_lost_or_duplicated,
    _done,
    _logs,
    _register,
    _start,
)
from workers.outage import ride_out_s

HOUSE = ["house:easy", "house:normal", "house:hard"]


class Servers:
    """The test's Redis, which the test replaces by a restarted one."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.current: RedisProcess = start_redis(directory, fsync="always")

    def crash_and_restart(self, down_s: float = 0) -> None:
        """SIGKILL Redis and start it again on its data after ``down_s``."""
        self.current.kill()
        time.sleep(down_s)
        self.restart()

    def restart(self) -> None:
        """Start Redis again on its data and port (after :meth:`RedisProcess.kill`)."""
        self.current = start_redis(self.directory, port=self.current.port, fsync="always")


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    servers = Servers(tmp_path / "redis")
    yield servers
    servers.current.stop()


@pytest.fixture
def config(servers: Servers, tmp_path: Path) -> Config:
    return crash_config(arena_config(servers.current.url, tmp_path))


@pytest.mark.parametrize(
    "outage",
    [
        "instant",  # redis-py reconnects: nobody notices
        "past the ride-out",  # the worker's heartbeat fails for longer than it waits: its loop
        # ends, the horse is stopped
        "with every process",  # the worker and its horse SIGKILLed too, all started again
    ],
)
def test_a_redis_restart_mid_tournament_loses_no_match_and_the_tournament_completes(
    outage: str,
    config: Config,
    store: Store,
    servers: Servers,
    start_worker: Callable[[], Any],
) -> None:
    with ExitStack() as stack:
        bot = _register(store, stack, Deliberate, "deliberate")
        tournament_id = _start(config, store, [bot])  # filled with three house bots: 4 matches
        worker = start_worker()

        def matches() -> list[Any]:
            return store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items

        def mid_tournament() -> bool:
            statuses = {m.status for m in matches()}
            return {MatchStatus.DONE, MatchStatus.RUNNING} <= statuses

        wait_for(mid_tournament, 60, "a recorded match and one being played")
        time.sleep(0.3)
        before = {m.id: (m.result, store.replay_blob(m.id)) for m in matches() if m.result}
        down_s = outlasting_s(config) if outage == "past the ride-out" else 0
        if outage == "with every process":
            for pid in [*children(worker.pid), worker.pid]:
                sigkill(pid)
            worker.wait(5)
        servers.crash_and_restart(down_s)
        restarted_at = time.monotonic()
        if outage == "with every process":
            worker = start_worker()
        assert store.redis.config_get("appendonly") == {"appendonly": "yes"}
        assert store.redis.config_get("appendfsync") == {"appendfsync": "always"}
        running = {m.id for m in matches() if m.status is MatchStatus.RUNNING}
        assert running  # interrupted: it must be played again
        assert {m.id for m in matches() if m.status is MatchStatus.DONE} == set(before)
        [interrupted] = running

        def recorded() -> bool:
            match = store.get_match(interrupted)
            return match is not None and match.status is MatchStatus.DONE

        wait_for(recorded, recovery_bound_s(config), "the interrupted match to be recorded again")
        recovery_s = time.monotonic() - restarted_at
        print(f"Redis {outage}: the interrupted match recorded {recovery_s:.1f} s after restart")
        wait_for(
            lambda: _done(store, tournament_id), 90, "the tournament to finish after the restart"
        )
        assert worker.poll() is None  # it outlived Redis: no process manager needed
        _assert_counted_once(store, tournament_id, 4, 4)
        logs = _logs(config, store, tournament_id)
        assert len(logs) == 4 and running <= set(logs)
        for match_id, (result, blob) in before.items():  # untouched by what came after
            match = store.get_match(match_id)
            assert match is not None and match.result == result
            assert store.replay_blob(match_id) == blob
        assert len(store.rating_history(bot)) == 4
        retries_left = Job.fetch(match_job_id(interrupted), connection=store.redis).retries_left
        if outage != "instant":
            assert retries_left == MATCH_RETRIES - 1  # its horse was stopped: played again
        _assert_nothing_lost_or_duplicated(
            store,
            tournament_id,
            f"redis_sigkill_down_{outage.replace(' ', '_')}",
            len(running),
            recorded_after_restart_s=round(recovery_s, 1),
            down_s=down_s,
            retries_left=retries_left,
        )


class Held(Bot):
    """Plays its lowest card at once, but stops before the last card of a match (with
    :attr:`held_at` cards in its hand) until the test lets it go (:attr:`release`), so that
    the match ends while Redis is down."""

    name = "held"
    held_at: ClassVar[int] = 1
    reached: ClassVar[threading.Event]
    release: ClassVar[threading.Event]

    @staticmethod
    def reset() -> None:
        """New events, for the next test (one class of the two runs at a time)."""
        Held.reached, Held.release = threading.Event(), threading.Event()

    def play(self, obs: Observation) -> Card:
        if len(obs.hand) == self.held_at:
            Held.reached.set()
            Held.release.wait(30)
        return obs.legal.lowest()


class HeldMidway(Held):
    """:class:`Held`, stopping before its fifth card instead."""

    held_at: ClassVar[int] = 9


RIDDEN_OUT_S = 2.0
"""The outage a worker rides out, as a restart of the arena's Redis takes."""


OUTAGES = {
    "ridden out": 10,  # the worker rides out 5 s, Redis is down 2 s: recorded once it is back
    "longer than the ride-out": 2,  # it rides out 1 s, Redis is down 3 s: played again
}
"""Each case's abandoned-job grace (the worker rides out half of it)."""


def outlasting_s(config: Config) -> float:
    """An outage the worker does not ride out: from its last heartbeat, the next one is sent
    within a heartbeat, fails, and is given up ``ride_out_s`` later; a second more."""
    return config.job_heartbeat_s + ride_out_s(config) + 1


@pytest.mark.parametrize("outage", list(OUTAGES))
def test_a_match_ending_while_redis_restarts_is_recorded_once_in_flight_in_a_horse(
    outage: str, config: Config, store: Store, servers: Servers, tmp_path: Path
) -> None:
    """Redis SIGKILLed just before a match's last card, the match's work horse playing it as
    the Procfile runs matches (many in flight in one horse), and started again ``down_s``
    later: the match's result, ready while Redis is down, waits for it. Within the bound the
    worker rides out, nothing ends: the worker's loop goes on, the horse records the match,
    which is played once; past it, the loop ends and the match is played again, once."""
    config = dataclasses.replace(  # the tests' heartbeat, with the Procfile's settings too
        config, matches_per_worker=64, abandoned_after_s=OUTAGES[outage], job_heartbeat_s=1
    )
    ride_out = ride_out_s(config)
    down_s = RIDDEN_OUT_S if outage == "ridden out" else outlasting_s(config)
    Held.reset()
    log = tmp_path / "worker.log"
    with ExitStack() as stack:
        bot = _register(store, stack, Held, "held")
        tournament_id = _start(
            config, store, [bot, *HOUSE], format=Format(duplicate=False, hands=1)
        )
        worker = start_worker_process(config, output=stack.enter_context(log.open("wb")))
        stack.callback(stop_workers, [worker])
        assert Held.reached.wait(30), "the match never reached its last card"
        [match_id] = running_matches(store, tournament_id)
        servers.current.kill()
        Held.release.set()  # the last card: the match ends, and its result waits for Redis
        time.sleep(down_s)
        servers.restart()
        restarted_at = time.monotonic()

        def recorded() -> bool:
            match = store.get_match(match_id)
            return match is not None and match.status is MatchStatus.DONE

        wait_for(recorded, recovery_bound_s(config), "the match to be recorded")
        recorded_s = time.monotonic() - restarted_at
        wait_for(lambda: _done(store, tournament_id), 30, "the tournament to finish")
        assert worker.poll() is None
    said = log.read_text()
    retries_left = Job.fetch(match_job_id(match_id), connection=store.redis).retries_left
    if down_s < ride_out:
        assert "the work loop ended" not in said and "killed horse" not in said
        assert retries_left == MATCH_RETRIES  # played once: nothing was interrupted
    else:
        assert "the work loop ended" in said
        assert retries_left == MATCH_RETRIES - 1  # its horse was stopped: played again once
    _assert_counted_once(store, tournament_id, 1, 1)
    assert list(_logs(config, store, tournament_id)) == [match_id]
    print(
        f"Redis down {down_s:g} s (the worker rides out {ride_out:g} s): the match ending "
        f"meanwhile was recorded {recorded_s:.1f} s after the restart, its job run "
        f"{1 + MATCH_RETRIES - (retries_left or 0)} time(s)"
    )


@pytest.mark.parametrize("channel", get_args(Channel))
def test_a_pull_bot_answering_while_redis_restarts_is_asked_again_and_its_answer_stands(
    channel: Channel, config: Config, store: Store, servers: Servers
) -> None:
    """A pull bot's decision asked just before Redis is SIGKILLed, answered while it is down
    (the web process cannot take the answer) and Redis started again 2 s later: the worker's
    wait for the answer rides out the outage, the bot's stream sends the request again once
    the web process's subscription is back, the SDK gives the same answer again, and it
    stands: no fault, the match played once, its outage on the decision's clock."""
    config = dataclasses.replace(config, matches_per_worker=64, abandoned_after_s=10)
    Held.reset()
    with ExitStack() as stack:
        web = stack.enter_context(serving(create_app(config)))
        bot = register_pull(web, "pulled")
        connect(stack, bot, make_app(HeldMidway, bot.secret), channel)
        wait_for(lambda: _active(store, bot.id), 20, "the pull bot to verify itself")
        tournament_id = _start(
            config, store, [bot.id, *HOUSE], format=Format(duplicate=False, hands=1)
        )
        worker = start_worker_process(config)
        stack.callback(stop_workers, [worker])
        assert Held.reached.wait(30), "the bot was never asked its fifth card"
        [match_id] = running_matches(store, tournament_id)
        servers.current.kill()
        Held.release.set()  # it answers while Redis is down: the web process cannot take it
        time.sleep(RIDDEN_OUT_S)
        servers.restart()

        def recorded() -> bool:
            match = store.get_match(match_id)
            return match is not None and match.status is MatchStatus.DONE

        wait_for(recorded, 30, "the match to be recorded")
    job = Job.fetch(match_job_id(match_id), connection=store.redis)
    assert job.retries_left == MATCH_RETRIES  # played once
    log = _logs(config, store, tournament_id)[match_id]
    seat = next(s.seat for s in log.seats if s.bot_id == bot.id)
    decisions = [d for h in log.hands for d in h.decisions if d.seat == seat]
    assert [d.status for d in decisions] == [Status.OK] * len(decisions), [
        d.fault for d in decisions
    ]
    [held] = [d for d in decisions if d.latency_ms > RIDDEN_OUT_S * 1000]
    print(f"{channel}: the decision answered while Redis was down took {held.latency_ms} ms")


def test_a_websocket_answer_while_redis_is_away_is_refused_and_the_socket_stays_open(
    config: Config, servers: Servers
) -> None:
    """An answer sent over a pull bot's WebSocket while Redis is down cannot be taken: the bot
    is told so on the socket (``refused``, 503), which stays open for the request to come
    again once Redis is back; before, the web process's listener died with the Redis error and
    the connection was dropped."""
    with serving(create_app(dataclasses.replace(config, stream_heartbeat_s=0.5))) as web:
        bot = register_pull(web, "away")
        url = bot.base.replace("http://", "ws://") + f"/api/bots/{bot.id}/ws"
        socket = simple_websocket.Client.connect(url, headers=bearer(bot.token))
        try:
            assert _message(socket)["type"] == "welcome"
            assert socket.receive(3) == ""  # the stream sent what waited: it is listening
            servers.current.kill()
            answer = {"type": "answer", "id": "r_1", "body": '{"card": "QS"}'}
            socket.send(json.dumps(answer))
            refused = _message(socket)
            assert (refused["type"], refused["id"], refused["status"]) == ("refused", "r_1", 503)
            assert "sent again" in refused["message"]
            assert socket.receive(3) == ""  # a keep-alive: the stream goes on
            assert socket.receive(3) == ""  # and on, past its presence's refresh
        finally:
            with contextlib.suppress(simple_websocket.ConnectionClosed):
                socket.close()
            servers.restart()
