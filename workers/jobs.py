"""The RQ jobs, ids only: each finds the arena from the environment and runs one use case.

A job can run twice (a retry, a re-queued crash) without counting twice: matches are created
idempotently, match jobs have deterministic ids (``match-{match_id}``), and
:meth:`~arena.store.Store.record_result` records a match exactly once. A cancelled
tournament's match jobs find its status and do nothing.
"""

from __future__ import annotations

from arena import archiving, disputes, gauntlets, healing, ladder, matches, tournaments
from arena.config import Config
from arena.context import Arena
from arena.store import Store
from workers.outage import connect_riding_out


def _arena() -> Arena:
    """The arena the environment configures, on a Redis client that rides out an outage
    (:mod:`workers.outage`): a match whose result is ready while Redis restarts records it
    once Redis answers."""
    config = Config.from_environment()
    return Arena(config, Store.from_config(config, client=connect_riding_out(config)))


def run_tournament(tournament_id: str) -> None:
    """Plan the tournament's matches, store them, and queue one job per match."""
    tournaments.expand(_arena(), tournament_id)


def run_match(match_id: str) -> None:
    """Play a planned match from its deals, seal its log and record it (once)."""
    matches.play(_arena(), match_id)


def run_ladder() -> None:
    """One round of the ladder's matchmaker (``rq cron`` queues this every
    ``GONGZHU_LADDER_INTERVAL_S``)."""
    ladder.matchmake(_arena())


def run_gauntlets() -> None:
    """Move every live gauntlet on (``rq cron`` queues this every
    ``GONGZHU_GAUNTLET_SWEEP_S``)."""
    gauntlets.sweep(_arena())


def run_archive_sweep() -> None:
    """Remove the archive's blobs a day old that no match references, and the temporary files
    of writes cut short (``rq cron`` queues this every ``GONGZHU_ARCHIVE_SWEEP_S``)."""
    archiving.sweep(_arena())


def run_recovery() -> None:
    """Move the logs held in Redis into the archive if it takes them, and queue again the
    matches an outage failed (``rq cron`` queues this every ``GONGZHU_RECOVERY_S``)."""
    healing.recover(_arena())


def run_schedule(schedule_id: str) -> None:
    """One round of a scheduled tournament (``rq cron`` queues this)."""
    tournaments.play_scheduled_round(_arena(), schedule_id)


def build_evidence(dispute_id: str) -> None:
    """Build a dispute's evidence report and keep it with the dispute (once)."""
    disputes.build_evidence(_arena(), dispute_id)


def apply_remedy(dispute_id: str) -> None:
    """Apply an upheld ruling's remedy (once), then queue the replacement match."""
    disputes.apply_remedy(_arena(), dispute_id)
