"""A tournament of hostile bots, played by real `python -m workers worker` processes against a
real Redis: eleven kinds of hostile bot (tests/reliability/hostile_bots.py), each its own HTTP
server on loopback, with an honest bot over HTTP and two house bots.

The tournament completes; every match is recorded once and its replay verifies; each hostile
bot's faults are recorded as what they were; the honest seats' scores are exactly those of the
same deals played with the fallback in the hostile seats; the time and memory a worker spends
are bounded by the time control and the answer size cap, whatever the attack; and no bot's
endpoint is shown anywhere public, though its faults quote what it and the network said.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Container, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
import redis
from rq import Worker
from rq.job import Job

from arena.config import Config
from arena.match_loop import InProcessSeat, SeatPlayer, play_match
from arena.matches import seat_player
from arena.queue import match_job_id
from arena.records import Format
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import DEFAULT_FAULT_LIMIT, Status
from referee import Game, Rules
from replays.deals import deal_seed
from replays.log import DecisionRecord, MatchLog, SeatInfo, TimeControl
from service import create_app
from tests.reliability.accounting import account
from tests.reliability.figures import record
from tests.reliability.hostile_bots import (
    ENDPOINT_PATH,
    HUGE_ANSWER_BYTES,
    LATE_BY_MS,
    FallbackBot,
    HostileBot,
    HostileServer,
    hostile_bots,
    serving,
)
from tests.reliability.peak_memory import PeakMemory, status_kib
from tests.workers.conftest import arena_config, start_worker_process, stop_workers
from tests.workers.crashes import wait_for
from tests.workers.test_worker_tournaments import _done, _logs, _register, _start

TIME_CONTROL = TimeControl(decision_ms=200, bank_ms=800, fault_limit=DEFAULT_FAULT_LIMIT)
HANDS = 2
RULES = Rules.with_variants("pass_3")
"""Passing, exposing and playing: every kind of decision is asked."""
HOUSE = ["house:easy", "house:normal"]
WORKERS = 2
SLACK_MS = 250
"""What a decision may take beyond the time it was allowed: the worker's own delays on a busy
machine (the answer is cut off at the deadline)."""
MATCH_OVERHEAD_S = 5.0
"""What a match job may take beyond its decisions: hellos, notices, sealing, recording."""
TOURNAMENT_TIMEOUT_S = 300


@dataclass
class Played:
    store: Store
    tournament_id: str
    hostile: dict[str, HostileBot]
    """By bot id."""
    honest: set[str]
    """The honest participants' ids: the bot over HTTP and the house bots."""
    logs: dict[str, MatchLog]
    wall_s: float
    job_s: dict[str, float]
    idle_kib: int
    """The largest resident set of a worker waiting for work."""
    memory: PeakMemory
    config: Config


def _register_url(store: Store, name: str, url: str) -> str:
    created, _ = store.create_bot(
        name=name, endpoint=url, description="", contact="t@example.com", version="1", secret="s"
    )
    return created.id


def _job_seconds(store: Store, match_id: str) -> float:
    """How long the match's job ran. Its match is recorded before the job ends: the work horse
    writes the job's end just after, so it is waited for."""
    job = Job.fetch(match_job_id(match_id), connection=store.redis)
    wait_for(lambda: job.refresh() or job.ended_at is not None, 30, f"the end of {job.id}")
    assert job.started_at is not None and job.ended_at is not None
    return (job.ended_at - job.started_at).total_seconds()


@pytest.fixture(scope="module")
def played(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    redis.Redis.from_url(redis_server).flushdb()
    config = arena_config(redis_server, tmp_path_factory.mktemp("hostile"))
    store = Store.from_config(config)
    bots = hostile_bots()
    with ExitStack() as stack:
        hostile = {_register_url(store, b.name, stack.enter_context(serving(b))): b for b in bots}
        honest = _register(store, stack, LowestCard, "lowest")
        workers = [start_worker_process(config) for _ in range(WORKERS)]
        stack.callback(stop_workers, workers)
        wait_for(lambda: Worker.count(connection=store.redis) == WORKERS, 30, "the workers")
        idle = max(status_kib(w.pid, "VmRSS") or 0 for w in workers)
        with PeakMemory({w.pid for w in workers}) as memory:
            start = time.monotonic()
            tournament_id = _start(
                config,
                store,
                [*hostile, honest, *HOUSE],
                format=Format(duplicate=False, hands=HANDS),
                rules=RULES,
                time_control=TIME_CONTROL,
            )
            wait_for(lambda: _done(store, tournament_id), TOURNAMENT_TIMEOUT_S, "the tournament")
            wall = time.monotonic() - start
        logs = _logs(config, store, tournament_id)  # every seal checked, every replay verified
        result = Played(
            store,
            tournament_id,
            hostile,
            {honest, *HOUSE},
            logs,
            wall,
            {m: _job_seconds(store, m) for m in logs},
            idle,
            memory,
            config,
        )
        _record_figures(result)
        yield result


# -- what a seat did ------------------------------------------------------------------------


def _records(log: MatchLog, seat: int) -> list[DecisionRecord]:
    return [d for hand in log.hands for d in hand.decisions if d.seat == seat]


def _asked(log: MatchLog, seat: int) -> list[DecisionRecord]:
    """The decisions the seat was asked (not those played for it after a forfeit)."""
    return [d for d in _records(log, seat) if d.status is not Status.FORFEIT_AUTOPLAY]


def _seats(
    played: Played, bot_ids: Container[str] | None = None
) -> Iterator[tuple[MatchLog, SeatInfo]]:
    """Every seat of every match (held by one of ``bot_ids``)."""
    for log in played.logs.values():
        for info in log.seats:
            if bot_ids is None or info.bot_id in bot_ids:
                yield log, info


def _ids_of(played: Played, name: str) -> set[str]:
    return {bot_id for bot_id, bot in played.hostile.items() if bot.name == name}


def _flooder(played: Played) -> HostileServer:
    server = next(b.server for b in played.hostile.values() if b.name == "flooder")
    assert server is not None
    return server


# -- the assertions -------------------------------------------------------------------------


def test_the_tournament_completes_with_every_match_recorded_once(played: Played) -> None:
    accounting = account(played.store, played.tournament_id)
    assert accounting.planned == accounting.recorded == len(played.logs) > 0
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    # each hostile bot sat at as many tables as every other participant
    seated = Counter(info.bot_id for _, info in _seats(played, played.hostile))
    assert set(seated) == set(played.hostile) and len(set(seated.values())) == 1


def test_each_hostile_bot_s_faults_are_recorded_as_what_they_were(played: Played) -> None:
    limit = TIME_CONTROL.fault_limit
    for log, info in _seats(played, played.hostile):
        bot = played.hostile[info.bot_id]
        asked = _asked(log, info.seat)
        faults = [d for d in asked if d.status is not Status.OK]
        assert all(d.status is bot.status for d in faults), (bot.name, faults)
        assert all(bot.matches(d.fault) for d in faults), (bot.name, [d.fault for d in faults])
        assert log.faults[info.seat] == len(faults)
        if bot.always_faults:
            assert len(asked) == len(faults) == limit, bot.name
            assert info.seat in log.forfeited  # ranked last, sharing it with other forfeits
            assert log.places[info.seat] == 5 - len(log.forfeited)
            assert _records(log, info.seat)[: len(asked)] == asked  # then only autoplay
        elif bot.status is Status.OK:
            assert not faults and info.seat not in log.forfeited, bot.name
        else:
            assert faults, bot.name
    for bot in played.hostile.values():  # the arena asked each decision once, ...
        total = sum(
            len(_asked(log, i.seat)) for log, i in _seats(played, _ids_of(played, bot.name))
        )
        assert bot.server is not None, bot.name
        if bot.name == "hang-up":  # ... but sent again a request its kept-alive connection lost
            assert total < bot.server.decisions <= 2 * total
        else:
            assert bot.server.decisions == total, bot.name


def test_a_late_answer_is_paid_from_the_bank_not_faulted(played: Played) -> None:
    """PROTOCOL.md: time beyond the limit comes out of the bank; only a decision that needs
    more than the limit and the rest of the bank is a timeout."""
    seen = 0
    for log, info in _seats(played, _ids_of(played, "late-once-a-hand")):
        asked = _asked(log, info.seat)
        assert all(d.status is Status.OK for d in asked)
        late = [d for d in asked if (d.latency_ms or 0) >= TIME_CONTROL.decision_ms + LATE_BY_MS]
        firsts = [next(d for d in hand.decisions if d.seat == info.seat) for hand in log.hands]
        assert late == firsts  # late once a hand, on the seat's first decision, and still ok
        for before, after in itertools.pairwise(asked):
            assert before.time_bank_ms is not None and before.latency_ms is not None
            assert (
                after.time_bank_ms == TIME_CONTROL.charge(before.time_bank_ms, before.latency_ms)[0]
            )
        assert asked[-1].time_bank_ms is not None and asked[-1].time_bank_ms < TIME_CONTROL.bank_ms
        seen += 1
    assert seen


def _fallback_replay(played: Played, log: MatchLog) -> MatchLog:
    """The same deals with the fallback in every hostile seat, the honest bots in process."""
    assert log.tournament_id is not None and log.deals.label is not None
    seed = deal_seed(played.store.deal_secret(log.tournament_id), log.deals.label)
    players: list[SeatPlayer] = []
    for info in log.seats:
        if info.bot_id in played.hostile:
            players.append(InProcessSeat(FallbackBot(), info))
        elif info.kind == "http":  # the honest bot over HTTP: LowestCard
            players.append(InProcessSeat(LowestCard(), info))
        else:  # a house bot, built as the worker builds it (seeded by the match and the seat)
            players.append(seat_player(played.store, played.config, info.seat, info.bot_id, seed))
    return play_match(
        Game(log.rules, seed=seed),
        players,
        match_id=log.match_id,
        deals=log.deals,
        time_control=log.time_control,
    )


def test_the_honest_bots_results_are_unaffected(played: Played) -> None:
    """Honest seats never fault, and score hand by hand exactly what they score when the same
    deals are played with the fallback in the hostile seats (which then score the same too)."""
    for log, info in _seats(played, played.honest):
        assert all(d.status is Status.OK for d in _records(log, info.seat)), info.name
    for log in played.logs.values():
        replayed = _fallback_replay(played, log)
        assert [h.deal for h in replayed.hands] == [h.deal for h in log.hands]
        assert _moves(replayed) == _moves(log)
        assert [h.result.scores for h in replayed.hands] == [h.result.scores for h in log.hands]
        assert replayed.outcome.totals == log.outcome.totals
    assert next(_seats(played, played.honest), None)


def _moves(log: MatchLog) -> list[object]:
    return [d.applied for hand in log.hands for d in hand.decisions]


def test_a_worker_s_time_is_bounded_by_the_time_control(played: Played) -> None:
    tc = TIME_CONTROL
    for log, info in _seats(played):
        asked = _asked(log, info.seat)
        for d in asked:
            assert d.latency_ms is not None and d.time_bank_ms is not None
            assert d.latency_ms <= tc.decision_ms + d.time_bank_ms + SLACK_MS
        spent = sum(d.latency_ms or 0 for d in asked)
        assert spent <= len(asked) * (tc.decision_ms + SLACK_MS) + tc.bank_ms
        if info.bot_id in played.hostile and played.hostile[info.bot_id].always_faults:
            assert spent <= tc.fault_limit * (tc.decision_ms + SLACK_MS) + tc.bank_ms
    for match_id, log in played.logs.items():
        asked = sum(len(_asked(log, seat)) for seat in range(4))
        bound = asked * tc.decision_ms / 1000 + 4 * tc.bank_ms / 1000 + MATCH_OVERHEAD_S
        assert played.job_s[match_id] <= bound, match_id


def test_a_worker_s_memory_is_bounded_by_the_answer_cap(played: Played) -> None:
    """No horse held the 50 MiB answer: its peak stays within half of it above an idle worker,
    and the flooding bot could not even send a quarter of it."""
    horses = played.memory.horses()
    assert len(horses) >= len(played.logs)  # a horse for each match job was measured
    assert max(horses.values()) <= played.idle_kib + HUGE_ANSWER_BYTES // 2 // 1024
    assert 0 < _flooder(played).most_bytes_sent < HUGE_ANSWER_BYTES // 4


def test_no_log_page_or_answer_shows_a_bot_s_endpoint(played: Played) -> None:
    """A bot's endpoint is its owner's to see. The hostile bots' faults quote what they and the
    network said (the server error page names the URL it was asked at, the redirect an
    address, the hang-up the connection's error): their endpoints, addresses and paths are in
    no sealed log, replay, match page, bot page (its fault feed) or bot listing."""
    private = {"127.0.0.1", ENDPOINT_PATH}
    for bot_id in played.hostile:
        bot = played.store.get_bot(bot_id)
        assert bot is not None and ENDPOINT_PATH in bot.endpoint
        private |= {bot.endpoint, urlsplit(bot.endpoint).netloc}
    client = create_app(played.config).test_client()
    shown = {"/api/bots?per_page=100": client.get("/api/bots?per_page=100").get_data(True)}
    for match_id in played.logs:
        for path in (f"/api/matches/{match_id}/replay", f"/matches/{match_id}"):
            answer = client.get(path)
            assert answer.status_code == 200, (path, answer.status_code)
            shown[path] = answer.get_data(as_text=True)
    for bot_id in played.hostile:
        shown[f"/bots/{bot_id}"] = client.get(f"/bots/{bot_id}").get_data(as_text=True)
        faults = played.store.faults(bot_id, page=1, per_page=1000)
        shown[f"fault feed of {bot_id}"] = " ".join(f.message for f in faults.items)
    leaks = {where: sorted(p for p in private if p in text) for where, text in shown.items()}
    assert not {where: found for where, found in leaks.items() if found}
    # and the faults did quote them, hidden: the check above looked where they would be
    feed = " ".join(shown[f"fault feed of {b}"] for b in _ids_of(played, "http-500"))
    assert "ZeroDivisionError at [hidden]" in feed


# -- the figures of docs/RELIABILITY.md ---------------------------------------------------


def _record_figures(played: Played) -> None:
    faults: Counter[str] = Counter()
    asked: Counter[str] = Counter()
    for log, info in _seats(played, played.hostile):
        name = played.hostile[info.bot_id].name
        asked[name] += len(_asked(log, info.seat))
        faults[name] += log.faults[info.seat]
    accounting = account(played.store, played.tournament_id)
    tc = TIME_CONTROL
    record(
        "hostile_bots",
        hostile_kinds=len(played.hostile),
        matches=len(played.logs),
        replays_verified=len(played.logs),  # _logs checked every seal and replay
        honest_seats=sum(1 for _ in _seats(played, played.honest)),
        results_lost=accounting.lost,
        results_duplicated=accounting.duplicated,
        faults_by_kind={
            b.name: f"{faults[b.name]} {b.status.value} of {asked[b.name]} asked"
            for b in played.hostile.values()
        },
        time_control=f"{tc.decision_ms} ms a decision, {tc.bank_ms} ms bank, "
        f"forfeit at {tc.fault_limit} faults, {HANDS} hands a match",
        tournament_s=round(played.wall_s, 1),
        longest_match_job_s=round(max(played.job_s.values()), 2),
        idle_worker_rss_mib=round(played.idle_kib / 1024, 1),
        peak_worker_rss_mib=round(max(played.memory.workers().values()) / 1024, 1),
        peak_horse_rss_mib=round(max(played.memory.horses().values()) / 1024, 1),
        flooder_most_bytes_sent=_flooder(played).most_bytes_sent,
    )
