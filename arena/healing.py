"""Matches an outage failed, queued again without an operator (:func:`heal`, in the ``cron``
process's recovery job every ``GONGZHU_RECOVERY_S``: :func:`recover`).

A match job that fails every one of its runs is left failed, with the last line of its error
(:mod:`arena.failures`), and its tournament ends ``done_with_failures``. When that error is an
outage's (:func:`by_outage`: the archive refusing a log past the bound of the logs Redis may
hold for it, Redis unreachable, timing out, loading its data or read-only during a failover,
or the job's worker gone without a word), the match is queued again with all its retries:
first ``GONGZHU_HEAL_AFTER_S`` after :func:`heal` first finds it failed, then after twice as
long each time, :data:`ATTEMPTS` times at most; one that the archive failed, only while the
archive takes writes. Its tournament is ``running`` again, and ``done`` once the match is
recorded. A ladder table's rotation is played again only when the table plays no other and
each of its bots has room for one more table (:func:`arena.ladder.replay_rotation`).

Left to the operator (``gongzhu tournaments requeue-failed``), as before: every other failure
(an error of the referee or of the arena's code, a bot missing from the store, a work horse
killed, which the match itself may cause), a match of a cancelled tournament, a gauntlet's
(its deal was voided and the next one dealt, docs/GAUNTLETS.md), and a match still failing
after its :data:`ATTEMPTS`.
"""

from __future__ import annotations

import logging
import time

import redis
from redis.sentinel import MasterNotFoundError
from rq.exceptions import AbandonedJobError

from arena import archiving, ladder, tournaments
from arena.context import Arena
from arena.errors import ArchiveError
from arena.failures import MATCH_JOB_PREFIX, failed_match_jobs
from arena.records import Match, MatchStatus, TournamentStatus

logger = logging.getLogger(__name__)

ATTEMPTS = 5
"""How often a match an outage failed is queued again before it is left to the operator (with
``GONGZHU_HEAL_AFTER_S`` at 60 s: after 1, 2, 4, 8 and 16 minutes, 31 in all)."""

OUTAGES: tuple[type[Exception], ...] = (
    ArchiveError,
    redis.ConnectionError,
    redis.TimeoutError,
    redis.BusyLoadingError,
    redis.ReadOnlyError,
    MasterNotFoundError,
)
"""The errors of an outage, by their exact class: not their subclasses (Redis refusing the
arena's password, an ``AuthenticationError``, is a ``ConnectionError`` that waiting does not
mend)."""


def _name(kind: type[Exception]) -> str:
    """How the last line of a traceback names an error of ``kind``."""
    return f"{kind.__module__}.{kind.__qualname__}"


def _raised(reason: str) -> str:
    """The name of the error a failed match's ``reason`` gives (rq writes the last line of its
    traceback: ``module.Class: message``)."""
    return reason.partition(":")[0]


def by_outage(reason: str) -> bool:
    """Whether a failed match's ``reason`` is an outage's error, or rq's note that the job's
    worker vanished."""
    named = {_name(kind) for kind in OUTAGES}
    return _raised(reason) in named or f"due to {AbandonedJobError.__name__}" in reason


def recover(arena: Arena) -> None:
    """The recovery after an outage: the logs held in Redis moved into the archive if it takes
    them (:func:`arena.archiving.move_held`), then the matches an outage failed queued again
    when their time has come (:func:`heal`)."""
    archiving.move_held(arena)
    heal(arena)


def heal(arena: Arena, *, now: float | None = None) -> list[str]:
    """Queue again the matches an outage failed whose time has come; returns their ids."""
    store = arena.store
    now = time.time() if now is None else now
    job_ids = failed_match_jobs(arena.queue)
    failed = [
        match
        for match in store.get_matches([j.removeprefix(MATCH_JOB_PREFIX) for j in job_ids])
        if match.status is MatchStatus.FAILED and by_outage(match.failure or "")
    ]
    seen = store.heals()
    healed = []
    for match in failed:
        count, due = seen.get(match.id, (0, None))
        if due is None:  # first found: queued again after the first wait
            store.note_heal(match.id, 0, now + arena.config.heal_after_s)
        elif count < ATTEMPTS and due <= now and _requeue(arena, match):
            wait_s = arena.config.heal_after_s * 2 ** (count + 1)
            store.note_heal(match.id, count + 1, now + wait_s)
            healed.append(match.id)
            logger.warning(
                "match %s failed by an outage: queued again (%s)", match.id, match.failure
            )
    statuses = store.match_statuses(list(seen))
    store.forget_heals([m for m, status in statuses.items() if status is MatchStatus.DONE])
    return healed


def _requeue(arena: Arena, match: Match) -> bool:
    """Queue the match again if nothing holds it back; whether it was."""
    if match.tournament_id is None:
        return False
    tournament = arena.store.get_tournament(match.tournament_id)
    if tournament is None or tournament.status is TournamentStatus.CANCELLED:
        return False
    if tournament.gauntlet is not None:
        return False
    if _raised(match.failure or "") == _name(ArchiveError) and not arena.archive_probe.writable():
        return False
    if tournament.ladder:
        return ladder.replay_rotation(arena, tournament.id, match.id)
    tournaments.requeue(arena, tournament.id, [match.id])
    return True
