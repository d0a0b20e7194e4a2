"""The RQ jobs, ids only: each finds the arena from the environment and runs one use case.

A job can run twice (a retry, a re-queued crash) without counting twice: matches are created
idempotently, match jobs have deterministic ids (``match-{match_id}``), and
:meth:`~arena.store.Store.record_result` records a match exactly once. A cancelled
tournament's match jobs find its status and do nothing.
"""

from __future__ import annotations

from arena import archiving, disputes, gauntlets, healing, ladder, matches, tournaments
from arena.context import Arena


def run_tournament(tournament_id: str) -> None:
    """Plan the tournament's matches, store them, and queue one job per match."""
    tournaments.expand(Arena.from_environment(), tournament_id)


def run_match(match_id: str) -> None:
    """Play a planned match from its deals, seal its log and record it (once)."""
    matches.play(Arena.from_environment(), match_id)


def run_ladder() -> None:
    """One round of the ladder's matchmaker (``rq cron`` queues this every
    ``GONGZHU_LADDER_INTERVAL_S``)."""
    ladder.matchmake(Arena.from_environment())


def run_gauntlets() -> None:
    """Move every live gauntlet on (``rq cron`` queues this every
    ``GONGZHU_GAUNTLET_SWEEP_S``)."""
    gauntlets.sweep(Arena.from_environment())


def run_archive_sweep() -> None:
    """Remove the archive's blobs a day old that no match references, and the temporary files
    of writes cut short (``rq cron`` queues this every ``GONGZHU_ARCHIVE_SWEEP_S``)."""
    archiving.sweep(Arena.from_environment())


def run_recovery() -> None:
    """Move the logs held in Redis into the archive if it takes them, and queue again the
    matches an outage failed (``rq cron`` queues this every ``GONGZHU_RECOVERY_S``)."""
    healing.recover(Arena.from_environment())


def run_schedule(schedule_id: str) -> None:
    """One round of a scheduled tournament (``rq cron`` queues this)."""
    tournaments.play_scheduled_round(Arena.from_environment(), schedule_id)


def build_evidence(dispute_id: str) -> None:
    """Build a dispute's evidence report and keep it with the dispute (once)."""
    disputes.build_evidence(Arena.from_environment(), dispute_id)


def apply_remedy(dispute_id: str) -> None:
    """Apply an upheld ruling's remedy (once), then queue the replacement match."""
    disputes.apply_remedy(Arena.from_environment(), dispute_id)
