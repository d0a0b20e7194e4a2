"""Pull bots in tournaments on real ``python -m workers worker`` processes, with the web app on
loopback holding their streams: a tournament mixing push, pull and house bots, a pull bot
killed in the middle of a match and started again, and one that never comes back."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from arena.config import Config
from arena.records import Format, MatchStatus
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status
from bot_sdk.server import make_app
from replays.log import TimeControl
from service.app import create_app
from tests.pages.pages_support import serving
from tests.workers.conftest import ROOT
from tests.workers.crashes import wait_for
from tests.workers.pull_support import PullBot, connect, register_pull
from tests.workers.test_worker_tournaments import (
    _assert_counted_once,
    _done,
    _logs,
    _register,
    _start,
)


@pytest.fixture
def web(config: Config) -> Iterator[str]:
    fast = dataclasses.replace(config, stream_heartbeat_s=0.5)
    with serving(create_app(fast)) as base:
        yield base


def _active(store: Store, bot_id: str) -> bool:
    found = store.get_bot(bot_id)
    return found is not None and found.status.value == "active"


def test_a_tournament_of_push_pull_and_house_bots_completes(
    config: Config, store: Store, web: str, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    pushed = [_register(store, stack, LowestCard, f"push-{i}") for i in range(2)]
    pulled = [register_pull(web, f"pull-{i}") for i in range(2)]
    for bot in pulled:
        connect(stack, bot, make_app(LowestCard, bot.secret))
    for bot in pulled:
        wait_for(lambda bot=bot: _active(store, bot.id), 10, "the pull bot to verify itself")
    participants = [*pushed, *(b.id for b in pulled), "house:easy"]
    tournament_id = _start(config, store, participants)
    start_worker()
    start_worker()
    wait_for(lambda: _done(store, tournament_id), 90, "the tournament to finish")
    _assert_counted_once(store, tournament_id, 20, 16)  # 5 tables, 4 rotations each
    logs = _logs(config, store, tournament_id)  # each sealed, and the referee agrees
    ids = {b.id for b in pulled}
    pulled_decisions = [
        d for log in logs.values() for h in log.hands for d in h.decisions
        if log.seats[d.seat].bot_id in ids
    ]  # fmt: skip
    assert len(pulled_decisions) >= 16 * 2 * 13  # each pull bot: 16 matches, 13 plays or more
    assert all(d.status is Status.OK for d in pulled_decisions)
    assert {s.version for log in logs.values() for s in log.seats if s.bot_id in ids} == {"1.0"}


def _connect_process(bot: PullBot) -> subprocess.Popen[bytes]:
    """``python -m bot_sdk connect`` of the Deliberate bot, as its author would run it."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot_sdk", "connect", "tests.workers.pull_bots:Deliberate",
         "--arena", bot.base, "--bot-id", bot.id],
        cwd=ROOT,
        env={**os.environ, "GONGZHU_BOT_SECRET": bot.secret, "GONGZHU_BOT_TOKEN": bot.token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


def _one_match(
    config: Config, store: Store, bot: PullBot, start_worker: Callable[[], Any], tc: TimeControl
) -> str:
    """A match of the pull bot against three house bots, two hands, started on a worker once
    the match is running: its id."""
    seats = [bot.id, "house:easy", "house:easy", "house:easy"]
    tournament_id = _start(
        config, store, seats, format=Format(duplicate=False, hands=2), time_control=tc
    )
    start_worker()

    def matches() -> list[Any]:
        return list(store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items)

    wait_for(lambda: any(m.status is MatchStatus.RUNNING for m in matches()), 30, "the match")
    found: str = matches()[0].id
    return found


def _asked_in_a_match(
    config: Config,
    store: Store,
    bot: PullBot,
    stack: ExitStack,
    start_worker: Callable[[], Any],
    *,
    tc: TimeControl,
) -> tuple[subprocess.Popen[bytes], str]:
    """``bot`` connected by its own process and verified, in a running match of
    :func:`_one_match` that has asked it a decision: the process and the match's id."""
    process = _connect_process(bot)
    stack.callback(_kill, process)
    wait_for(lambda: _active(store, bot.id), 20, "the bot to verify itself")
    match_id = _one_match(config, store, bot, start_worker, tc)
    wait_for(lambda: store.mailbox.waiting(bot.id), 10, "a decision of the bot's")
    return process, match_id


def _pulled_decisions(
    config: Config, store: Store, match_id: str, bot_id: str
) -> tuple[list[Any], Any]:
    """The bot's decisions in the match's sealed, verified log, and the log."""
    match = store.get_match(match_id)
    assert match is not None and match.tournament_id is not None
    logs = _logs(config, store, match.tournament_id)
    log = logs[match_id]
    seat = next(s.seat for s in log.seats if s.bot_id == bot_id)
    return [d for h in log.hands for d in h.decisions if d.seat == seat], log


def test_a_pull_bot_killed_mid_match_and_restarted_plays_on_within_its_bank(
    config: Config, store: Store, web: str, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    bot = register_pull(web, "phoenix")
    first, match_id = _asked_in_a_match(
        config, store, bot, stack, start_worker, tc=TimeControl(1000, 10_000, 5)
    )
    threading.Event().wait(1.0)  # a few of its decisions answered
    _kill(first)  # SIGKILL: no goodbye, the stream just drops
    threading.Event().wait(1.5)  # away longer than the decision's 1000 ms limit
    second = _connect_process(bot)
    stack.callback(_kill, second)
    wait_for(lambda: store.get_match(match_id).status is MatchStatus.DONE, 60, "the match")  # type: ignore[union-attr]
    decisions, log = _pulled_decisions(config, store, match_id, bot.id)
    assert all(d.status is Status.OK for d in decisions), [d.fault for d in decisions]
    assert log.forfeited == ()
    # the decision asked while the bot was away waited for the restart, past the limit, on the
    # bank, and was answered then
    assert max(d.latency_ms for d in decisions) > 1500


def test_a_pull_bot_that_never_comes_back_forfeits(
    config: Config, store: Store, web: str, stack: ExitStack, start_worker: Callable[[], Any]
) -> None:
    bot = register_pull(web, "gone")
    first, match_id = _asked_in_a_match(
        config, store, bot, stack, start_worker, tc=TimeControl(500, 1000, 3)
    )
    _kill(first)
    wait_for(lambda: store.get_match(match_id).status is MatchStatus.DONE, 60, "the match")  # type: ignore[union-attr]
    decisions, log = _pulled_decisions(config, store, match_id, bot.id)
    seat = decisions[0].seat
    assert log.forfeited == (seat,)
    faults = [d for d in decisions if d.status is Status.ERROR]
    assert len(faults) == 3  # the fault limit, then the rest auto-played
    assert all("not connected" in (d.fault or "") for d in faults)
    assert decisions[-1].status is Status.FORFEIT_AUTOPLAY
