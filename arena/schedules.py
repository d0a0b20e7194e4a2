"""Schedules: a cron expression and a tournament template; each time the expression fires, a
round among the bots active then is played (:func:`arena.tournaments.play_scheduled_round`)."""

from __future__ import annotations

from croniter import croniter

from arena.context import Arena
from arena.errors import InvalidError, NotFoundError
from arena.records import Schedule, TournamentSpec


def create(arena: Arena, cron: str, template: TournamentSpec) -> Schedule:
    """A new schedule of ``template`` (its participants are ignored) at ``cron``, which must be
    five-field cron syntax."""
    cron = cron.strip()
    if len(cron.split()) != 5 or not croniter.is_valid(cron):
        raise InvalidError(
            f"{cron!r} is not a five-field cron expression such as '0 3 * * *'", field="cron"
        )
    return arena.store.create_schedule(cron, template)


def delete(arena: Arena, schedule_id: str) -> None:
    """Remove a schedule (the tournaments it already created stay)."""
    if not arena.store.delete_schedule(schedule_id):
        raise NotFoundError(f"there is no schedule {schedule_id}")
