"""The arithmetic of results: a tournament's standings and when it ends, and the faults of a
match (the ladder's ratings are :mod:`arena.ratings`).

Pure functions; the store's transactions (:meth:`arena.store.Store.record_result`,
:meth:`~arena.store.Store.mark_match_failed`, :meth:`~arena.store.Store.unfail_matches`) read
what they need, and write what these compute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from arena.records import BotFault, Standing, TournamentStatus
from bot_sdk.protocol import Status, is_fallback_note
from referee import Play
from replays.log import MatchLog


def asked(log: MatchLog, seat: int) -> int:
    """How many decisions ``seat`` was asked (auto-played ones after a forfeit do not count)."""
    return sum(
        1
        for hand in log.hands
        for record in hand.decisions
        if record.seat == seat and record.status is not Status.FORFEIT_AUTOPLAY
    )


OWN_FALLBACK = "fallback"
"""How the fault list names an answer the bot itself says was its fallback (not a log status)."""


def own_fallbacks(log: MatchLog, seat: int) -> int:
    """How many of ``seat``'s answers were the bot's own fallback, by its note: not faults, but
    its author wants to know."""
    return sum(
        1
        for hand in log.hands
        for record in hand.decisions
        if record.seat == seat and record.status is Status.OK and is_fallback_note(record.note)
    )


def add_to_standings(stored: Mapping[str, Standing | None], log: MatchLog) -> dict[str, Standing]:
    """The standings of the match's participants after it, from ``stored`` (by participant; None
    for one without a standing yet). A participant in two seats (a house bot filling a table)
    counts each seat."""
    after = {bot_id: standing or Standing(bot_id) for bot_id, standing in stored.items()}
    for seat, info in enumerate(log.seats):
        after[info.bot_id] = add_to_standing(after[info.bot_id], log, seat)
    return after


def add_to_standing(standing: Standing, log: MatchLog, seat: int) -> Standing:
    place = log.places[seat]
    return replace(
        standing,
        matches=standing.matches + 1,
        wins=standing.wins + (place == 1),
        placement_sum=standing.placement_sum + place,
        points=standing.points + log.outcome.totals[seat],
        hands=standing.hands + log.outcome.hands_played,
        faults=standing.faults + log.faults[seat],
        forfeits=standing.forfeits + (seat in log.forfeited),
    )


def tournament_status(
    status: TournamentStatus, *, total: int, done: int, failed: int
) -> TournamentStatus:
    """The status of a tournament whose ``total`` matches are now ``done`` recorded and
    ``failed`` failed. A running one (or one done with failures) is done when they are all
    recorded, done with failures when the rest failed, and unchanged while matches are still to
    play (or none is planned yet); any other status (created, cancelled, …) is left as it is.

    >>> tournament_status(TournamentStatus.RUNNING, total=3, done=2, failed=1).value
    'done_with_failures'
    >>> tournament_status(TournamentStatus.CANCELLED, total=3, done=3, failed=0).value
    'cancelled'
    """
    ending = (TournamentStatus.RUNNING, TournamentStatus.DONE_WITH_FAILURES)
    if status not in ending or not total or done + failed < total:
        return status
    return TournamentStatus.DONE_WITH_FAILURES if failed else TournamentStatus.DONE


def requeued_status(status: TournamentStatus) -> TournamentStatus:
    """The status of a tournament some of whose failed matches are queued again: one done with
    failures is running again until they end."""
    if status is TournamentStatus.DONE_WITH_FAILURES:
        return TournamentStatus.RUNNING
    return status


def ranked(standings: Sequence[Standing]) -> list[Standing]:
    """Standings in order: most wins, then best average placement, then most points per hand;
    equal records share a rank."""

    def key(s: Standing) -> tuple[int, float, float]:
        return (-s.wins, s.average_placement, -s.points_per_hand)

    ordered = sorted(standings, key=lambda s: (key(s), s.bot_id))
    result: list[Standing] = []
    for index, standing in enumerate(ordered):
        tied = result and key(result[-1]) == key(standing)
        result.append(replace(standing, rank=result[-1].rank if tied else index + 1))
    return result


def faults_of(log: MatchLog) -> dict[str, list[BotFault]]:
    """Each participant's faults in the match, and the answers it says were its own fallback
    (by its note), in the log's order (house bots' too)."""
    found: dict[str, list[BotFault]] = {seat.bot_id: [] for seat in log.seats}
    for hand in log.hands:
        plays = 0
        for index, record in enumerate(hand.decisions):
            is_play = isinstance(record.applied, Play)
            plays += is_play
            own = record.status is Status.OK and is_fallback_note(record.note)
            if not (record.status.is_fault or own):
                continue
            found[log.seats[record.seat].bot_id].append(
                BotFault(
                    match_id=log.match_id,
                    hand=hand.hand_number,
                    decision=index,
                    trick=(plays + 3) // 4 if is_play else 0,
                    kind=record.kind.value,
                    status=OWN_FALLBACK if own else record.status.value,
                    message=(record.note if own else record.fault) or "",
                    latency_ms=record.latency_ms,
                )
            )
    return found
