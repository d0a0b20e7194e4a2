"""Counting a tournament's results in the store: none lost, none counted twice."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from arena.records import MatchStatus
from arena.store import Store


@dataclass(frozen=True)
class Accounting:
    planned: int
    """Matches the tournament planned (its total)."""
    recorded: int
    """Matches with a result and a stored replay."""
    lost: int
    """Planned matches with no result or no replay, and results missing from the standings or
    a bot's rating history."""
    duplicated: int
    """Results counted more than once: in the tournament's progress, its standings or a bot's
    rating history."""


def account(store: Store, tournament_id: str) -> Accounting:
    """What the store holds of the tournament's results, in every place a result is counted:
    the matches and replays, the tournament's progress and standings, the bots' ratings."""
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None
    matches = store.list_matches(page=1, per_page=10_000, tournament_id=tournament_id).items
    recorded = [
        m
        for m in matches
        if m.status is MatchStatus.DONE and m.result and store.replay_blob(m.id) is not None
    ]
    ids = {m.id for m in recorded}
    seats = Counter(bot for m in recorded for bot in m.seats)
    standings = Counter({s.bot_id: s.matches for s in store.standings(tournament_id)})
    expected, counted = [Counter(seats)], [standings]
    if tournament.spec.rated:  # a match rates its bots when they are four different ones
        rated = [m for m in recorded if len(set(m.seats)) == len(m.seats)]
        expected.append(Counter((bot, m.id) for m in rated for bot in m.seats))
        counted.append(
            Counter(
                (bot, point.match_id)
                for bot in seats
                for point in store.rating_history(bot)
                if point.match_id in ids
            )
        )
    missing = sum(sum((want - got).values()) for want, got in zip(expected, counted, strict=True))
    extra = sum(sum((got - want).values()) for want, got in zip(expected, counted, strict=True))
    return Accounting(
        planned=tournament.total,
        recorded=len(recorded),
        lost=tournament.total - len(recorded) + missing,
        duplicated=max(0, tournament.done - len(recorded)) + extra,
    )
