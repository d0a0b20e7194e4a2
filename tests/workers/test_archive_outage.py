"""An archive outage costs no match, and what an outage failed heals by itself: real `python -m
workers worker` and `cron` processes, a real Redis, real bots on loopback, the archive taken
away for real (a directory's gone; an S3 bucket's server behind a proxy that refuses
connections) while a tournament plays. Every match is recorded once and played once, its replay
served and verified meanwhile, ``/ready`` says ``degraded`` with the logs waiting, and the logs
move into the archive once it is back. With no room in Redis for held logs, the matches fail,
and are queued again by the cron's recovery once the archive takes writes; a match failed for
another reason is left to the operator."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from rq import SimpleWorker
from rq.job import Job

from arena import archive as archive_module
from arena import archiving, gauntlets, healing, ladder, tournaments
from arena.config import Config
from arena.context import Arena
from arena.errors import ArchiveError
from arena.failures import settle_failed_matches
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import OPERATOR, Format, MatchStatus, TournamentStatus
from arena.store import Store, keys
from bot_sdk.examples.lowest_card import LowestCard
from replays.integrity import canonical, pack, unpack
from service import create_app
from tests.reliability.accounting import account
from tests.service.service_support import sealed_log
from tests.workers.archive_outage import DirectoryOutage, Proxy
from tests.workers.conftest import environment, start_worker_process, stop_workers
from tests.workers.crashes import running_matches, wait_for
from tests.workers.ladder_support import enter, ladder_config
from tests.workers.test_archive import make_bucket, s3_credentials, s3_endpoint
from tests.workers.test_worker_tournaments import Deliberate, _done, _logs, _register, _start

__all__ = ["s3_credentials", "s3_endpoint"]  # the S3 server's fixtures, used here too


QUICK_HOUSE = ["house:easy", "house:normal"]
"""House bots that answer at once (Hard thinks 150 ms a card): with two bots, a table of four."""


@pytest.fixture(autouse=True)
def probe_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """``/ready`` asked here probes the archive on every call (a process keeps it 5 s)."""
    monkeypatch.setattr(archive_module, "PROBE_S", 0.0)


def _ready(client: FlaskClient) -> tuple[str, dict[str, Any]]:
    answer = client.get("/ready")
    assert answer.status_code == 200
    return answer.json["status"], answer.json["archive"]


def _status(store: Store, tournament_id: str) -> TournamentStatus | None:
    tournament = store.get_tournament(tournament_id)
    return None if tournament is None else tournament.status


def _away(
    kind: str, config: Config, stack: ExitStack, request: pytest.FixtureRequest
) -> tuple[Config, Callable[[], None], Callable[[], None]]:
    """The archive of ``kind`` for ``config``, and how to take it away and put it back."""
    if kind == "directory":
        outage = DirectoryOutage(Path(config.archive))
        return config, outage.begin, outage.end
    endpoint = request.getfixturevalue("s3_endpoint")
    request.getfixturevalue("s3_credentials")
    bucket = f"outage-{int(time.time() * 1000)}"
    make_bucket(endpoint, bucket)
    host, port = endpoint.removeprefix("http://").split(":")
    proxy = Proxy((host, int(port))).start()
    stack.callback(proxy.stop)
    s3 = dataclasses.replace(config, archive=f"s3://{bucket}/logs", s3_endpoint=proxy.url)
    return s3, proxy.stop, lambda: proxy.start() and None


@pytest.mark.parametrize("kind", ["directory", "s3"])
def test_a_tournament_played_while_the_archive_is_away_loses_no_match_and_plays_none_twice(
    kind: str, config: Config, stack: ExitStack, request: pytest.FixtureRequest
) -> None:
    config, take_away, put_back = _away(
        kind, dataclasses.replace(config, recovery_s=1), stack, request
    )
    store = Store.from_config(config)
    client = create_app(config).test_client()
    bots = [
        _register(store, stack, Deliberate, "deliberate"),
        _register(store, stack, LowestCard, "lowest"),
    ]
    tournament_id = _start(config, store, [*bots, *QUICK_HOUSE])  # 4 matches of a second or so
    processes = [start_worker_process(config), start_worker_process(config, "cron")]
    stack.callback(stop_workers, processes)
    wait_for(lambda: bool(running_matches(store, tournament_id)), 30, "a match to start")
    take_away()
    wait_for(lambda: _done(store, tournament_id), 60, "the tournament to finish")

    held = store.held_logs()
    assert len(held) >= 3  # those recorded after the archive went (the first one, if it ended)
    copies = {digest: store.held_log(digest) for digest in held}
    status, archive = _ready(client)
    assert status == "degraded" and archive["writable"] is False
    assert archive["logs_waiting"] == len(held)
    assert archive["bytes_waiting"] == sum(len(blob or b"") for blob in copies.values())
    for match in store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items:
        digest = store.redis.hget(keys.match(match.id), "log_sha256").decode()
        store.redis.delete(keys.log_cache(digest))
        if digest in held:
            with pytest.raises(ArchiveError):  # not in the archive, which is away anyway
                store.archive.get(digest)
        replay = client.get(f"/api/matches/{match.id}/replay")
        assert replay.status_code == 200, replay.data
        verified = client.post(f"/api/matches/{match.id}/verify").json
        assert verified["ok"] and verified["integrity"] == "ok", verified
    time.sleep(2)  # the cron's recovery runs, and finds the archive still away
    assert store.held_logs() == held

    put_back()
    wait_for(lambda: store.held_logs() == [], 30, "the held logs to move into the archive")
    assert _ready(client) == ("ready", {"writable": True, "logs_waiting": 0, "bytes_waiting": 0})
    for digest, blob in copies.items():
        assert store.archive.get(digest) == blob  # the very bytes the record names
    for match in store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items:
        store.redis.delete(keys.log_cache(store.redis.hget(keys.match(match.id), "log_sha256")))
        job = Job.fetch(match_job_id(match.id), connection=store.redis)
        assert job.retries_left == MATCH_RETRIES  # played once: its job never ran again
    assert len(_logs(config, store, tournament_id)) == 4  # read back from the archive, verified
    accounting = account(store, tournament_id)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)


def test_matches_an_archive_outage_failed_are_played_again_by_themselves_and_no_others(
    config: Config, store: Store, stack: ExitStack
) -> None:
    config = dataclasses.replace(config, archive_hold_mb=0, recovery_s=1, heal_after_s=1)
    outage = DirectoryOutage(Path(config.archive))
    client = create_app(config).test_client()
    bots = [_register(store, stack, LowestCard, f"lowest-{n}") for n in (1, 2)]
    missing = _register(store, stack, LowestCard, "missing")
    store.redis.rename(keys.bot(missing), "hidden")  # its matches fail, whatever the archive
    outage.begin()  # no log can be archived, nor held: every match fails its every run
    failing = _start(config, store, [*bots, *QUICK_HOUSE])  # 4 matches
    once = Format(duplicate=False, matches_per_table=1, hands=1)
    broken = _start(config, store, [missing, *bots, QUICK_HOUSE[0]], format=once)  # 1 match
    processes = [start_worker_process(config), start_worker_process(config, "cron")]
    stack.callback(stop_workers, processes)
    for tournament_id in (failing, broken):
        wait_for(
            lambda: _status(store, tournament_id) is TournamentStatus.DONE_WITH_FAILURES,  # noqa: B023
            90,
            "the tournament to end with failures",
        )
    tournament = store.get_tournament(failing)
    assert tournament is not None and len(tournament.failures) == 4
    assert all(f.reason.startswith("arena.errors.ArchiveError: ") for f in tournament.failures)
    assert _ready(client)[0] == "degraded"
    time.sleep(2)  # recovery sweeps run: nothing is queued again while the archive is away
    assert _status(store, failing) is TournamentStatus.DONE_WITH_FAILURES
    assert all(count == 0 for count, _ in store.heals().values())

    outage.end()
    wait_for(lambda: _done(store, failing), 60, "the failed matches to be played again")
    assert len(_logs(config, store, failing)) == 4  # every replay verifies
    accounting = account(store, failing)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    done = store.get_tournament(failing)
    assert done is not None and done.failures == () and done.done == 4
    left = store.get_tournament(broken)  # a bot missing from the store is not an outage
    assert left is not None and left.status is TournamentStatus.DONE_WITH_FAILURES
    assert all(f.reason.startswith("LookupError: ") for f in left.failures)
    for failure in left.failures:
        assert Job.fetch(match_job_id(failure.match_id), connection=store.redis).retries_left == 0


def _failures(store: Store, tournament_id: str) -> tuple[Any, ...]:
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None
    return tournament.failures


def _jobs_here(
    config: Config, monkeypatch: pytest.MonkeyPatch, **changes: Any
) -> tuple[Config, Arena]:
    """``config`` with ``changes`` and no log held in Redis, set for the jobs this process runs
    (:func:`_work`), and its arena."""
    config = dataclasses.replace(config, archive_hold_mb=0, **changes)
    for name, value in environment(config).items():
        monkeypatch.setenv(name, value)
    return config, Arena.from_config(config)


def _one_match(config: Config, store: Store, stack: ExitStack) -> tuple[str, list[str]]:
    """A tournament of one quick match (two bots on loopback, house Easy and Normal), and the
    bots."""
    bots = [_register(store, stack, LowestCard, f"lowest-{n}") for n in (1, 2)]
    once = Format(duplicate=False, matches_per_table=1, hands=1)
    return _start(config, store, [*bots, *QUICK_HOUSE], format=once), bots


def _work(arena: Arena) -> None:
    """What the workers do, in this process: every queued job run (retries too), the failed
    matches settled."""
    SimpleWorker([arena.queue], connection=arena.store.redis).work(burst=True)
    settle_failed_matches(arena.queue, arena.store)


def test_a_ladder_rotation_an_outage_failed_is_played_again_when_its_bots_have_room(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, arena = _jobs_here(ladder_config(config), monkeypatch, heal_after_s=1)
    enter(store, stack, "first")
    enter(store, stack, "second")
    [table] = ladder.matchmake(arena)
    rotations = store.list_matches(page=1, per_page=4, tournament_id=table).items
    first = min(m.id for m in rotations)  # the one released first
    outage = DirectoryOutage(Path(config.archive))
    outage.begin()
    _work(arena)  # the first rotation fails every run
    outage.end()
    assert store.get_match(first).status is MatchStatus.FAILED  # type: ignore[union-attr]
    now = time.time()
    assert healing.heal(arena, now=now) == []  # first found
    ladder.matchmake(arena)  # the round moves the table on: its next rotation released
    assert healing.heal(arena, now=now + 2) == []  # due, but the table plays another rotation
    while _status(store, table) is not TournamentStatus.DONE_WITH_FAILURES:
        _work(arena)  # its other rotations play, one after another
        ladder.matchmake(arena)
    assert table not in store.open_ladder_tables()
    [busy] = store.open_ladder_tables()  # its bots are free, and seated at a new table
    assert healing.heal(arena, now=now + 2) == []  # due, but its bots have no room
    assert _status(store, table) is TournamentStatus.DONE_WITH_FAILURES
    while _status(store, busy) is not TournamentStatus.DONE:
        ladder.matchmake(arena)  # moves the new table on; its bots are busy: no other table
        _work(arena)
    assert healing.heal(arena, now=now + 3) == [first]
    assert table in store.open_ladder_tables()  # its bots count it against their limits
    _work(arena)
    assert _status(store, table) is TournamentStatus.DONE
    assert table not in store.open_ladder_tables()
    assert store.embargo(store.get_match(first)) is None  # type: ignore[arg-type]
    assert len(_logs(config, store, table)) == 4


def test_a_match_an_outage_keeps_failing_is_queued_again_with_back_off_then_left(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, arena = _jobs_here(config, monkeypatch, heal_after_s=10)
    monkeypatch.setattr(healing, "ATTEMPTS", 2)
    tournament_id, _ = _one_match(config, store, stack)
    outage = DirectoryOutage(Path(config.archive))

    def fail_again() -> str:
        outage.begin()
        _work(arena)  # every run of its job fails
        outage.end()
        [failure] = _failures(store, tournament_id)
        return failure.match_id

    match_id = fail_again()
    now = time.time()
    outage.begin()
    assert healing.heal(arena, now=now) == []  # first found
    assert healing.heal(arena, now=now + 10) == []  # due, but the archive is still away
    outage.end()
    assert healing.heal(arena, now=now + 9) == []  # not due yet
    assert healing.heal(arena, now=now + 10) == [match_id]
    assert _status(store, tournament_id) is TournamentStatus.RUNNING
    assert fail_again() == match_id
    assert healing.heal(arena, now=now + 10 + 19) == []  # twice as long this time
    assert healing.heal(arena, now=now + 10 + 20) == [match_id]
    assert fail_again() == match_id
    assert healing.heal(arena, now=now + 10**6) == []  # its attempts spent: the operator's
    assert _status(store, tournament_id) is TournamentStatus.DONE_WITH_FAILURES


def test_a_cancelled_tournaments_match_and_a_gauntlets_are_left_failed(
    config: Config, store: Store, stack: ExitStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, arena = _jobs_here(config, monkeypatch, heal_after_s=1)
    cancelled, bots = _one_match(config, store, stack)
    question = gauntlets.Request("house:normal", bots[0], ("house:easy", "house:easy"), hands=1)
    gauntlet = gauntlets.create(arena, question, started_by=OPERATOR, manages=[]).id
    outage = DirectoryOutage(Path(config.archive))
    outage.begin()
    _work(arena)  # the tournament's match and the gauntlet's first rotation fail every run
    outage.end()
    tournaments.cancel(arena, cancelled)  # its failed match will not be played
    failed = [f.match_id for t in (cancelled, gauntlet) for f in _failures(store, t)]
    assert len(failed) == 2
    now = time.time()
    assert healing.heal(arena, now=now) == []
    assert healing.heal(arena, now=now + 60) == []
    assert set(store.match_statuses(failed).values()) == {MatchStatus.FAILED}


@pytest.mark.parametrize(
    ("reason", "outage"),
    [
        ("arena.errors.ArchiveError: cannot write to the archive /a: [Errno 28] No space", True),
        ("redis.exceptions.ConnectionError: Error 111 connecting to 127.0.0.1:6379.", True),
        ("redis.exceptions.TimeoutError: Timeout reading from socket", True),
        ("redis.exceptions.BusyLoadingError: Redis is loading the dataset in memory", True),
        ("redis.exceptions.ReadOnlyError: You can't write against a read only replica.", True),
        ("redis.sentinel.MasterNotFoundError: No master found for 'arena'", True),
        ("Moved to FailedJobRegistry, due to AbandonedJobError, at 2026-12-07 10:00:00", True),
        ("redis.exceptions.AuthenticationError: invalid username-password pair", False),
        ("LookupError: participant 'bot_x' is neither a house bot nor a stored bot", False),
        ("Work-horse terminated unexpectedly; waitpid returned 9 (signal 9); ", False),
        ("referee.errors.IllegalMoveError: seat 2 does not hold QS", False),
        ("ValueError: arena.errors.ArchiveError: a message naming it", False),
    ],
)
def test_which_failures_are_an_outages(reason: str, outage: bool) -> None:
    assert healing.by_outage(reason) is outage


def test_an_upload_broken_off_records_the_match_with_its_log_held_never_named_missing(
    config: Config, s3_endpoint: str, s3_credentials: None
) -> None:
    bucket = f"cut-{int(time.time() * 1000)}"
    make_bucket(s3_endpoint, bucket)
    host, port = s3_endpoint.removeprefix("http://").split(":")
    proxy = Proxy((host, int(port))).start()
    try:
        s3 = dataclasses.replace(config, archive=f"s3://{bucket}/logs", s3_endpoint=proxy.url)
        store = Store.from_config(s3)
        log = sealed_log(s3, "m1", ["bot_a", "bot_b", "bot_c", "house:easy"])
        proxy.cut_after = len(pack(log)) // 2
        assert store.record_result("m1", log)
        digest = store.redis.hget(keys.match("m1"), "log_sha256").decode()
        assert store.held_logs() == [digest]
        store.redis.delete(keys.log_cache(digest))
        assert unpack(store.replay_blob("m1") or b"") == log
        proxy.cut_after = None
        with pytest.raises(ArchiveError, match="missing"):
            store.archive.get(digest)  # nothing of it reached the bucket
        assert archiving.move_held(Arena.from_config(s3)) == 1
        assert canonical(unpack(store.archive.get(digest))) == canonical(log)
    finally:
        proxy.stop()
