"""The arithmetic of a voided result (docs/DISPUTES.md): what one recorded match added to a
tournament's standings and to the ladder's ratings, taken away again.

**Ratings.** When a rated match is recorded, the store keeps, with the match, each seat's
rating before and after it (:meth:`arena.store.Store.record_result`: the match's
``rating_effect``). Voiding the match subtracts that difference, field by field, from the
version's rating as it is now: its ``μ`` and ``σ`` move back by what the match moved them,
its counts (matches, points, hands, faults, decisions, its figures by seat) lose what the match
added, and ``amended`` counts the withdrawal. :func:`withdrawn_rating` is the one place this is
done; the replay that follows is rated like any match, from the ratings as they are then.
Ratings moved by later matches keep those moves: the withdrawal is the match's own step, not
a re-rating of the history since.

>>> from arena.records import Rating
>>> before = Rating("b", 25.0, 8.0, matches=3, points=10)
>>> after = Rating("b", 27.0, 7.5, matches=4, points=16)
>>> now = Rating("b", 28.0, 7.0, matches=5, points=20)
>>> back = withdrawn_rating(now, before, after)
>>> (back.mu, back.sigma, back.matches, back.points, back.amended)
(26.0, 7.5, 4, 14, 1)
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TypeVar

from arena.records import Rating, SeatFigures, Standing
from arena.results import add_to_standing
from replays.log import MatchLog

R = TypeVar("R", Standing, SeatFigures)

_RATING_NUMBERS = ("mu", "sigma", "matches", "points", "hands", "faults", "decisions")


def withdrawn_rating(current: Rating, before: Rating, after: Rating) -> Rating:
    """``current`` without what one match did to it (``before`` → ``after``), marked amended."""
    moved = {name: getattr(current, name) - (getattr(after, name) - getattr(before, name))
             for name in _RATING_NUMBERS}  # fmt: skip
    seats = tuple(
        _minus(now, _minus(a, b))
        for now, a, b in zip(current.seats, after.seats, before.seats, strict=True)
    )
    assert len(seats) == 4
    return replace(
        current,
        **moved,
        seats=(seats[0], seats[1], seats[2], seats[3]),
        amended=current.amended + 1,
    )


def withdrawn_standing(current: Standing, log: MatchLog) -> Standing:
    """``current`` without what the match of ``log`` added to it (each seat its participant
    sat in), marked amended."""
    added = Standing(current.bot_id)
    for seat, info in enumerate(log.seats):
        if info.bot_id == current.bot_id:
            added = add_to_standing(added, log, seat)
    return replace(_minus(current, added), amended=current.amended + 1)


def _minus(current: R, less: R) -> R:
    """``current`` with each counter of ``less`` subtracted (ids and ranks kept)."""
    numbers = {
        f.name: getattr(current, f.name) - getattr(less, f.name)
        for f in fields(current)
        if f.name not in ("bot_id", "rank", "amended")
    }
    return replace(current, **numbers)
