"""Tournaments, from creation to their matches: create, start, cancel, play failed matches
again, and expand a started tournament into match jobs (how a tournament becomes matches:
:func:`expand`, with the tables of :mod:`arena.pairing`). A scheduled round is one more
tournament, among the bots active when it fires."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from arena.context import Arena
from arena.errors import InvalidError, NotFoundError, WrongStateError
from arena.pairing import PlannedMatch, plan
from arena.queue import (
    cancel_tournament_job,
    enqueue_match,
    enqueue_tournament,
    release_match,
    requeue_matches,
)
from arena.records import (
    HOUSE_PARTICIPANTS,
    BotStatus,
    Standing,
    Tournament,
    TournamentSpec,
    TournamentStatus,
)
from arena.store import Store

LIVE: tuple[TournamentStatus, ...] = (
    TournamentStatus.CREATED,
    TournamentStatus.QUEUED,
    TournamentStatus.RUNNING,
)
"""A tournament that may still be started or expanded."""


@dataclass(frozen=True)
class Shown:
    """A tournament as anyone may see it: with its deal secret once it is revealed (when the
    tournament is over, :meth:`~arena.store.Store.revealed_secret`)."""

    tournament: Tournament
    deal_secret: bytes | None

    @property
    def progress(self) -> dict[str, int]:
        """Its matches done (recorded), failed and total (planned)."""
        record = self.tournament
        return {"done": record.done, "failed": len(record.failures), "total": record.total}

    @property
    def deal_secret_hex(self) -> str | None:
        return None if self.deal_secret is None else self.deal_secret.hex()


def get(arena: Arena, tournament_id: str) -> Tournament:
    found = arena.store.get_tournament(tournament_id)
    if found is None:
        raise NotFoundError(f"there is no tournament {tournament_id}")
    return found


def shown(arena: Arena, tournament: Tournament) -> Shown:
    """The tournament as anyone may see it: with its deal secret once it is over."""
    return Shown(tournament, arena.store.revealed_secret(tournament))


def standings(arena: Arena, tournament_id: str) -> list[Standing]:
    """Its entrants ranked (rank, matches, wins, placement, points per hand, faults)."""
    get(arena, tournament_id)
    return arena.store.standings(tournament_id)


def check_participants(arena: Arena, participants: Sequence[str]) -> None:
    """Every participant is a house bot or an active registered bot, and at least one is a
    registered bot; else an :class:`InvalidError` on ``participants`` listing each problem."""
    bots = [p for p in participants if p not in HOUSE_PARTICIPANTS]
    found = arena.store.get_bots(bots)
    problems = [f"{p} is not a registered bot" for p in bots if p not in found]
    problems += [
        f"{p} is {found[p].status.value}, not active"
        for p in bots
        if p in found and found[p].status is not BotStatus.ACTIVE
    ]
    if not bots:
        problems.append("name at least one registered bot (house bots fill the other seats)")
    if problems:
        raise InvalidError(
            "participants: " + "; ".join(problems), errors={"participants": problems}
        )


def create(arena: Arena, spec: TournamentSpec) -> Tournament:
    """A new tournament of ``spec`` (it starts when asked to)."""
    check_participants(arena, spec.participants)
    return get(arena, arena.store.create_tournament(spec))


def start(arena: Arena, tournament_id: str) -> Tournament:
    """Queue a created tournament for the workers."""
    tournament = arena.store.move_tournament(
        tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
    )
    enqueue_tournament(arena.queue, tournament_id)
    return tournament


def cancel(arena: Arena, tournament_id: str) -> Tournament:
    """Stop the tournament: no more of its matches are played; recorded ones stay. (Also ends
    a tournament done with failures whose failed matches will not be played again.)"""
    tournament = arena.store.move_tournament(
        tournament_id,
        TournamentStatus.CANCELLED,
        allowed_from=[*LIVE, TournamentStatus.DONE_WITH_FAILURES],
    )
    cancel_tournament_job(arena.queue, tournament_id)
    return tournament


def requeue_failed(arena: Arena, tournament_id: str) -> Tournament:
    """Play the tournament's failed matches again: each is queued afresh, with all its
    retries, and the tournament is running until they end."""
    get(arena, tournament_id)
    failed = arena.store.failed_matches(tournament_id)
    if not failed:
        raise WrongStateError(f"tournament {tournament_id} has no failed match to queue again")
    requeue(arena, tournament_id, failed)
    return get(arena, tournament_id)


def requeue(arena: Arena, tournament_id: str, match_ids: Sequence[str]) -> None:
    """Queue the tournament's failed ``match_ids`` afresh, each with all its retries; the
    tournament is running until they end."""
    # jobs first: a crash in between leaves the matches failed, to be queued again by a retry
    requeue_matches(arena.queue, match_ids)
    arena.store.unfail_matches(tournament_id, match_ids)


def expand(arena: Arena, tournament_id: str) -> None:
    """Plan the tournament's matches, store them, and queue one job per match (a job run
    twice plans and queues nothing twice: match ids and job ids are deterministic)."""
    store = arena.store
    tournament = store.get_tournament(tournament_id)
    if tournament is None or tournament.status.is_over or tournament.gauntlet:
        return  # a gauntlet deals its own deals (arena.gauntlets)
    spec = tournament.spec
    matches = plan(
        spec.participants,
        seed=tournament_id,
        duplicate=spec.format.duplicate,
        matches_per_table=spec.format.matches_per_table,
    )
    store_planned(store, tournament_id, matches)
    try:
        store.move_tournament(tournament_id, TournamentStatus.RUNNING, allowed_from=list(LIVE))
    except WrongStateError:  # cancelled meanwhile
        return
    queue = arena.queue
    if tournament.ladder:  # its rotations one after another (arena.ladder)
        release_match(queue, matches[0].match_id(tournament_id))
        return
    for planned in matches:
        enqueue_match(queue, planned.match_id(tournament_id))


def store_planned(store: Store, tournament_id: str, matches: Sequence[PlannedMatch]) -> None:
    """Store the tournament's planned matches (again: each is created once) and their count."""
    for planned in matches:
        store.create_match(
            planned.match_id(tournament_id),
            seats=planned.seats,
            tournament_id=tournament_id,
            table_id=planned.table_id,
            deal_label=planned.deal_label,
        )
    store.set_tournament_total(tournament_id, len(matches))


def play_scheduled_round(arena: Arena, schedule_id: str) -> None:
    """One round of a schedule (rq's cron queues it): a tournament among the bots active now,
    expanded at once."""
    schedule = next((s for s in arena.store.list_schedules() if s.id == schedule_id), None)
    if schedule is None:
        return
    spec = dataclasses.replace(schedule.template, participants=tuple(active_bots(arena.store)))
    tournament_id = arena.store.create_tournament(spec, schedule_id=schedule_id)
    arena.store.move_tournament(
        tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
    )
    expand(arena, tournament_id)


def active_bots(store: Store) -> list[str]:
    """The ids of every active registered bot, sorted."""
    found: list[str] = []
    page = 1
    while True:
        listed = store.list_bots(page=page, per_page=100)
        found += [b.id for b in listed.items if b.status is BotStatus.ACTIVE]
        if page * 100 >= listed.total:
            return sorted(found)
        page += 1
