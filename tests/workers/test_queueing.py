"""How match jobs are queued, released and settled, in one process on the tests' Redis: the job's
options (its id, retries without interval, time limit), which existing jobs block a second
queueing, the parked jobs of an older arena, failed jobs marked failed with their reason, and the
worker's heartbeat. (tests/workers/test_crash_recovery.py and test_failed_matches.py show the
same with real worker processes.)"""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from rq import Queue, SimpleWorker
from rq.exceptions import StopRequested
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry
from rq.utils import utcformat

from arena.config import Config
from arena.failures import REASON_CHARS, failure_reason, settle_failed_matches
from arena.queue import (
    MATCH_JOB_TIMEOUT_S,
    MATCH_RETRIES,
    RUN_MATCH,
    enqueue_match,
    give_back,
    give_back_orphans,
    match_job_id,
    release_parked_match_jobs,
    take,
    workers_and_depth,
)
from arena.records import Format, MatchStatus, TournamentSpec, TournamentStatus
from arena.store import Store
from referee import Rules
from referee.build import describe
from replays.log import TimeControl
from tests.workers.conftest import ROOT, environment
from workers.worker import ArenaWorker, make_worker

SEATS = ["bot_a", "bot_b", "bot_c", "house:easy"]


@pytest.fixture
def queue(config: Config, store: Store) -> Queue:
    return Queue(config.queue_name, connection=store.redis)


def _tournament(store: Store, match_ids: list[str]) -> str:
    spec = TournamentSpec("q", tuple(SEATS), Format(), Rules(), TimeControl(1000, 30000, 5))
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, len(match_ids))
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    for match_id in match_ids:
        store.create_match(match_id, seats=SEATS, tournament_id=tid)
    return tid


def _fail(queue: Queue, job_id: str, message: str) -> None:
    """A job that raises ``ValueError(message)``, run to failure by an in-process worker."""
    queue.enqueue("builtins.exec", f"raise ValueError({message!r})", job_id=job_id)
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    assert job_id in FailedJobRegistry(queue=queue).get_job_ids()


def test_a_match_job_has_the_match_id_retries_without_interval_and_a_time_limit(
    queue: Queue,
) -> None:
    enqueue_match(queue, "m1")
    job = Job.fetch("match-m1", connection=queue.connection)
    assert match_job_id("m1") == "match-m1"
    assert (job.func_name, job.args) == (RUN_MATCH, ("m1",)) == ("workers.jobs.run_match", ("m1",))
    assert job.timeout == MATCH_JOB_TIMEOUT_S == 3 * 3600
    assert job.retries_left == MATCH_RETRIES == 3
    assert job.retry_intervals == [0]  # straight back on the queue, never the scheduler
    assert queue.job_ids == ["match-m1"]


@pytest.mark.parametrize(
    ("status", "again"),
    [
        (JobStatus.QUEUED, False),
        (JobStatus.STARTED, False),
        (JobStatus.DEFERRED, False),
        (JobStatus.SCHEDULED, False),
        (JobStatus.FINISHED, False),
        (JobStatus.FAILED, True),  # ended without a result: queued again, with its retries
        (JobStatus.STOPPED, True),
        (JobStatus.CANCELED, True),
    ],
)
def test_a_match_job_queued_running_or_done_is_not_queued_again(
    queue: Queue, status: JobStatus, again: bool
) -> None:
    enqueue_match(queue, "m1")
    job = Job.fetch("match-m1", connection=queue.connection)
    job.set_status(status)
    queue.remove(job)
    enqueue_match(queue, "m1")
    assert queue.job_ids == (["match-m1"] if again else [])
    job = Job.fetch("match-m1", connection=queue.connection)
    assert (job.get_status(), job.retries_left) == (
        (JobStatus.QUEUED, MATCH_RETRIES) if again else (status, MATCH_RETRIES)
    )


def test_match_jobs_parked_in_the_scheduled_registry_are_queued_again(queue: Queue) -> None:
    for job_id in ("match-m1", "match-m2", "other-1"):
        queue.enqueue_in(timedelta(hours=1), "builtins.print", job_id=job_id)
    registry = ScheduledJobRegistry(queue=queue)
    registry.remove("match-m2")
    Job.fetch("match-m2", connection=queue.connection).delete()
    gone = Job.create("builtins.print", id="match-m2", connection=queue.connection)
    registry.schedule(gone, datetime.now(UTC) + timedelta(hours=1))  # parked, its job gone
    assert sorted(release_parked_match_jobs(queue)) == ["match-m1", "match-m2"]
    assert queue.job_ids == ["match-m1"]
    assert registry.get_job_ids() == ["other-1"]  # not a match job: left alone
    assert release_parked_match_jobs(queue) == []


def test_failed_match_jobs_mark_their_matches_failed_with_the_reason(
    queue: Queue, store: Store
) -> None:
    tid = _tournament(store, ["m1", "m2", "m3"])
    store.mark_match_running("m2")
    for match_id in ("m3", "m1", "m2"):  # the one not to settle first: the others still are
        _fail(queue, match_job_id(match_id), f"not a number {match_id}")
    _fail(queue, "other-1", "not a match")
    store.mark_match_failed("m3", "failed before")  # already marked: not settled again
    assert sorted(settle_failed_matches(queue, store)) == ["m1", "m2"]
    for match_id in ("m1", "m2"):
        match = store.get_match(match_id)
        assert match is not None and match.status is MatchStatus.FAILED
        assert match.failure == f"ValueError: not a number {match_id}"
    tournament = store.get_tournament(tid)
    assert tournament is not None and tournament.status is TournamentStatus.DONE_WITH_FAILURES
    assert settle_failed_matches(queue, store) == []


def test_a_failed_match_job_of_no_tournament_is_not_settled(queue: Queue, store: Store) -> None:
    store.create_match("m9", seats=SEATS)
    _fail(queue, match_job_id("m9"), "x")
    assert settle_failed_matches(queue, store) == []


def test_a_failure_reason_is_the_last_line_of_the_error_cut_to_500_characters(
    queue: Queue,
) -> None:
    _fail(queue, "match-long", "y" * 1000)
    assert REASON_CHARS == 500
    assert failure_reason(queue, "match-long") == "ValueError: " + "y" * 488
    _fail(queue, "match-lines", "the first line\n   the last line   \n \n")
    assert failure_reason(queue, "match-lines") == "the last line"


def test_a_failure_reason_without_details(queue: Queue) -> None:
    assert failure_reason(queue, "match-gone") == "its job failed (rq no longer has the details)"
    Job.create("builtins.print", id="match-quiet", connection=queue.connection).save()
    assert failure_reason(queue, "match-quiet") == "its job failed with no error recorded"


def test_the_worker_is_made_from_the_configuration(config: Config, store: Store) -> None:
    worker = make_worker(config, store.redis)
    assert [q.name for q in worker.queues] == [config.queue_name]
    assert worker.worker_ttl == config.worker_ttl_s
    assert worker.job_monitoring_interval == config.job_heartbeat_s
    assert worker.maintenance_interval == config.maintenance_interval_s
    assert worker.abandoned_after_s == config.abandoned_after_s
    assert worker.store.redis is store.redis and not worker.stop_signalled


def test_the_heartbeat_allows_the_configured_grace(config: Config, store: Store) -> None:
    worker = make_worker(config, store.redis)
    worker.job_monitoring_interval, worker.abandoned_after_s = 15, 60

    def job(timeout: int | None) -> Job:
        return Job.create("builtins.print", timeout=timeout, connection=store.redis)

    assert worker.get_heartbeat_ttl(job(MATCH_JOB_TIMEOUT_S)) == 15 + 60
    assert worker.get_heartbeat_ttl(job(MATCH_JOB_TIMEOUT_S), 100.0) == 15 + 60
    assert worker.get_heartbeat_ttl(job(20), 10.0) == 10 + 60  # the job's own limit is nearer
    assert worker.get_heartbeat_ttl(job(20), 12.5) == 7 + 60
    assert worker.get_heartbeat_ttl(job(10)) == 10 + 60  # not yet working on it
    assert worker.get_heartbeat_ttl(job(1)) == 1 + 60
    assert worker.get_heartbeat_ttl(job(-1)) == 15 + 60  # no time limit


def test_a_job_is_abandoned_60_s_after_its_heartbeat_by_default(queue: Queue, store: Store) -> None:
    assert ArenaWorker([queue], connection=store.redis, store=store).abandoned_after_s == 60


def test_a_stop_on_request_is_told_from_a_lost_redis(config: Config, store: Store) -> None:
    worker = make_worker(config, store.redis)
    with pytest.raises(StopRequested):
        worker.request_stop(signal.SIGTERM, None)
    assert worker.stop_signalled


def test_the_registry_sweep_releases_parked_jobs_and_settles_failed_ones(
    queue: Queue, config: Config, store: Store
) -> None:
    _tournament(store, ["m1"])
    _fail(queue, match_job_id("m1"), "z")
    queue.enqueue_in(timedelta(hours=1), "builtins.print", job_id="match-m2")
    make_worker(config, store.redis).clean_registries()
    assert queue.job_ids == ["match-m2"]
    match = store.get_match("m1")
    assert match is not None and match.status is MatchStatus.FAILED


def test_jobs_taken_by_a_gone_worker_go_back_to_the_front_in_order_and_a_live_ones_stay(
    queue: Queue, config: Config, store: Store
) -> None:
    """What a work horse took off the queue and never registered (it died in between) is on
    its worker's list of jobs taken: the worker gives it back when it sees its horse dead; the
    registry sweep gives back the lists of workers that are gone."""
    for job_id in ("match-m1", "match-m2", "match-m3", "match-m4"):
        queue.enqueue("builtins.print", job_id=job_id)
    alive = SimpleWorker([queue], connection=queue.connection, name="alive")
    alive.register_birth()
    assert [take(queue, "gone", 1), take(queue, "gone", 1)] == ["match-m1", "match-m2"]
    assert take(queue, "alive", 1) == "match-m3"
    assert give_back_orphans(queue) == ["match-m1", "match-m2"]
    assert queue.job_ids == ["match-m1", "match-m2", "match-m4"]  # where they were taken from
    make_worker(config, store.redis).clean_registries()  # the sweep: nothing more to give back
    assert queue.job_ids == ["match-m1", "match-m2", "match-m4"]
    assert give_back(queue, "alive") == ["match-m3"]  # its worker's, once its horse is dead
    assert queue.job_ids == ["match-m3", "match-m1", "match-m2", "match-m4"]
    assert take(queue, "idle", 1) == "match-m3"
    assert [take(queue, "idle", 1) for _ in range(3)] == ["match-m1", "match-m2", "match-m4"]
    assert take(queue, "idle", 1) is None  # the queue empty for a second


def test_a_job_failed_before_it_started_is_taken_off_rqs_intermediate_list(
    queue: Queue, config: Config, store: Store
) -> None:
    """Taken off the queue, a job waits on rq's intermediate list until it starts; one whose
    start failed (its horse killed first, Redis gone as it began) is failed from there, and
    left on the list, rq's sweep of it would fail it once more a minute on."""
    enqueue_match(queue, "m1")
    taken = Queue.dequeue_any([queue], 1, connection=queue.connection)
    assert taken is not None and queue.intermediate_queue.get_job_ids() == ["match-m1"]
    make_worker(config, store.redis).handle_job_failure(taken[0], queue, exc_string="no start")
    assert queue.intermediate_queue.get_job_ids() == []
    assert queue.job_ids == ["match-m1"]  # queued again, one retry spent
    assert Job.fetch("match-m1", connection=queue.connection).retries_left == MATCH_RETRIES - 1


def test_only_workers_with_a_recent_heartbeat_are_counted_live(queue: Queue) -> None:
    """What ``/ready`` reports: rq lists a dead worker for a minute after its last beat."""
    fresh, stale, silent = (
        SimpleWorker([queue], connection=queue.connection, name=name)
        for name in ("fresh", "stale", "silent")
    )
    for worker in (fresh, stale, silent):
        worker.register_birth()
    fresh.heartbeat()
    beat = datetime.now(UTC) - timedelta(seconds=100)
    queue.connection.hset(stale.key, "last_heartbeat", utcformat(beat))
    queue.connection.hdel(silent.key, "last_heartbeat")
    queue.enqueue("builtins.print", "waiting")
    assert workers_and_depth(queue, live_within_s=60) == (1, 1)
    assert workers_and_depth(queue, live_within_s=120) == (2, 1)


def test_a_worker_says_which_referee_it_plays_with(config: Config) -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "workers", "worker", "--burst"],
        check=False,
        cwd=ROOT,
        env=environment(config),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert f"worker: referee {describe()}\n" in finished.stderr
