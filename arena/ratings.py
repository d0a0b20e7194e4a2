"""The ladder's ratings: a Gaussian model of each match's point margins, in points per hand,
kept per version of each participant, shown relative to house Normal.

**The model.** A participant's strength is a number of points per hand. In a match of ``h``
hands, each seat's points per hand are its strength, plus its own noise of variance
``NOISE² / h``, plus a term common to the whole table (the deal's points go somewhere: only
the differences between seats tell anything). Each rating is a normal ``N(μ, σ²)``; a rated
match updates its four seats by the exact Gaussian (Kalman) posterior of that observation
(:func:`margin_update`), and the four ratings' covariances are then cut to their own
variances, as openskill does, so that only the four seats' ratings change: each match is
rated in its own transaction. ``σ`` after a match does not depend on its result, only on the
seats' ``σ`` before it and the match's number of hands.

**The noise.** :data:`NOISE` is 140 points per hand: a seat's points in one hand, less its
table's mean in that hand, vary about their expectation by about 122 on the simulated
ladder's random tables (benchmarks/ladder.py, 2,000 matches each with plain and duplicate
deals), a seat's own noise of 122 × √(4/3) before the table's mean is taken away. The hands
of a match are taken as independent, so a match of ``h`` hands has noise ``NOISE / √h`` per
hand: a 4-hand match (the ladder's default ``GONGZHU_LADDER_HANDS``) counts a quarter of a
16-hand one. A match's number of hands is read from its log, so a ladder of longer matches
(``GONGZHU_LADDER_HANDS``, 0 for the rules' end) needs no other setting.

**The anchor, by rescaling.** House Normal (:data:`ANCHOR`) is rated like every participant:
held fixed instead, the best of a field of weaker newcomers stayed above it for long (every
newcomer starts at its level, and only matches against it could lower their common level) and
the simulated ladder's order held for good after 462 matches instead of 289 (medians of 6
runs, docs/BENCHMARKS.md). The scale is anchored by showing every rating relative to house
Normal's current ``μ`` (:func:`shown`): a shown ``μ`` of 0 means "as strong as house Normal",
+10 "10 points per hand better than house Normal". The stored ``μ`` stays absolute; the shift
is the same for everyone, so the ladder's order does not depend on it.

**Starting points.** A participant never rated starts at house Normal's current ``μ`` (shown
0) with ``σ`` :data:`PRIOR_SIGMA` (the simulated field of 16 bots spans about 100 points per
hand). A version not rated before starts a new history at the previous version's ``μ`` (its
strength is the best guess there is) with ``σ`` raised to at least :data:`NEW_VERSION_SIGMA`.
A version rated before (a bot rolled back) continues its own history.

**Provisional.** A rating is provisional while its ``σ`` is above
:data:`~arena.records.PROVISIONAL_SIGMA`, 10 points per hand: where, in the simulated ladder,
the order held for good (after about 290 matches of 16 bots, some 70 matches each). A new
participant comes below it after 62 matches of 4 hands against settled opponents (67 against
opponents as new as itself; :func:`matches_to_settle`); against settled opponents a match
of ``h`` hands counts as about ``h / 4`` matches of 4 there: 16 matches of 16 hands do.

>>> from arena.records import Rating
>>> first = starting_rating("bot_a", "1.0", None, level=3.5)
>>> (first.mu, first.sigma, first.version)
(3.5, 40.0, '1.0')
>>> seeded = starting_rating("bot_a", "2.0", Rating("bot_a", 31.0, 2.0, matches=90))
>>> (seeded.mu, seeded.sigma, seeded.matches)
(31.0, 20.0, 0)
>>> shown(Rating("bot_a", 31.0, 2.0), level=3.5).mu
27.5
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from arena.records import PROVISIONAL_SIGMA, Rating, RatingPoint, SeatFigures
from arena.results import asked
from replays.log import MatchLog

SCALE = "points-per-hand-1"
"""The name of the stored ratings' model and scale (what the store's ratings were made by:
a store whose ratings are on another scale is re-rated, :mod:`arena.rerating`)."""
OLD_SCALE = "openskill-places"
"""The name given to ratings stored before their scale was named: openskill's Plackett-Luce
over places, house Normal fixed at 25."""
ANCHOR = "house:normal"
NOISE = 140.0
"""A seat's own noise in one hand, in points (see **The noise** above)."""
PRIOR_SIGMA = 40.0
"""A never-rated participant's ``σ``, in points per hand."""
NEW_VERSION_SIGMA = 20.0
"""The least ``σ`` a new version of a rated participant starts with: half a newcomer's."""


def is_rated(log: MatchLog) -> bool:
    """A match moves the ladder if it is marked rated and four distinct participants played it
    (a participant twice at one table, as a house bot filling seats, cannot be rated)."""
    return log.rated and len({seat.bot_id for seat in log.seats}) == len(log.seats)


def starting_rating(
    bot_id: str, version: str, previous: Rating | None, *, level: float = 0.0
) -> Rating:
    """The rating a version starts from: the previous version's ``μ`` with a wider ``σ``, or,
    for a participant never rated, house Normal's current ``μ`` (``level``) and
    :data:`PRIOR_SIGMA`."""
    if previous is None:
        return Rating(bot_id, level, PRIOR_SIGMA, version=version)
    return Rating(bot_id, previous.mu, max(previous.sigma, NEW_VERSION_SIGMA), version=version)


def playing_rating(
    bot_id: str,
    version: str,
    current: Rating | None,
    kept: Rating | None,
    level: Callable[[], float],
) -> Rating:
    """The rating ``version`` of the participant plays a match from: ``current`` (the version
    it played last) if it is that version, else that version's ``kept`` rating, else where
    the version starts (:func:`starting_rating`; ``level`` gives house Normal's current ``μ``,
    read only for a participant never rated)."""
    if current is not None and current.version == version:
        return current
    if kept is not None:
        return kept
    if current is not None:
        return starting_rating(bot_id, version, current)
    return starting_rating(bot_id, version, None, level=level())


def margin_update(
    mus: Sequence[float], variances: Sequence[float], observed: Sequence[float], noise: float
) -> tuple[list[float], list[float]]:
    """The Gaussian posterior of four strengths (means, variances; priors independent) after
    seeing each seat's points per hand ``observed``, each its strength plus a noise of
    variance ``noise`` plus a term common to the table (unknown: only differences count).
    The exact rank-one form of the Kalman update, its covariance cut to its diagonal.

    With ``w`` each prior variance shrunk by the seat's own noise (``v·n / (v + n)``), the
    common term's posterior is a weighted mean of the seats' surprises, and each seat moves by
    its share of its surprise less that mean; a seat of variance 0 does not move."""
    shrunk = [v * noise / (v + noise) for v in variances]
    room = 4 * noise - sum(shrunk)
    surprise = [x - m for x, m in zip(observed, mus, strict=True)]
    centre = sum(surprise) / 4
    residual = [r - centre for r in surprise]
    shared = sum(w * r for w, r in zip(shrunk, residual, strict=True)) / room
    means = [m + w * (r + shared) / noise for m, w, r in zip(mus, shrunk, residual, strict=True)]
    return means, [w + w * w / room for w in shrunk]


def matches_to_settle(hands: int, opponents_sigma: float = PROVISIONAL_SIGMA) -> int:
    """How many rated matches of ``hands`` hands a new participant plays until its ``σ`` is at
    most :data:`~arena.records.PROVISIONAL_SIGMA`, against three opponents of ``σ``
    ``opponents_sigma`` each time (its results do not matter: a ``σ`` after a match depends
    only on the four ``σ`` before it and the hands)."""
    variance, played = PRIOR_SIGMA**2, 0
    others = [opponents_sigma**2] * 3
    while variance > PROVISIONAL_SIGMA**2:
        variance = margin_update([0.0] * 4, [variance, *others], [0.0] * 4, NOISE**2 / hands)[1][0]
        played += 1
    return played


def rate(log: MatchLog, before: Sequence[Rating], *, at: str = "") -> list[Rating]:
    """Each seat's rating after the match, from ``before`` (one per seat, in seat order: the
    rating of the version that sat there, :func:`starting_rating` if it is new), by each
    seat's points per hand (:func:`margin_update`), with the match added to its counts.
    ``at`` is when the match was recorded."""
    if len(before) != len(log.seats):
        raise ValueError(f"{len(before)} ratings for {len(log.seats)} seats")
    hands = log.outcome.hands_played
    counts = [counted(log, seat, old, at) for seat, old in enumerate(before)]
    if not hands:  # nothing was played: nothing to learn
        return counts
    means, variances = margin_update(
        [r.mu for r in before],
        [r.sigma**2 for r in before],
        [total / hands for total in log.outcome.totals],
        NOISE**2 / hands,
    )
    return [
        replace(now, mu=mu, sigma=variance**0.5)
        for now, mu, variance in zip(counts, means, variances, strict=True)
    ]


def shown(rating: Rating, *, level: float) -> Rating:
    """``rating`` as the ladder shows it: its ``μ`` less house Normal's current ``μ``
    (``level``)."""
    return replace(rating, mu=rating.mu - level)


def shown_point(point: RatingPoint, *, level: float) -> RatingPoint:
    """A point of a rating's history as the ladder shows it, as :func:`shown`."""
    return replace(point, mu=point.mu - level)


def counted(log: MatchLog, seat: int, old: Rating, at: str = "") -> Rating:
    """``old`` with the match its participant played in ``seat`` added to its counts (its
    matches, points, hands, faults, decisions, figures by seat and dates), μ and σ as they
    were."""
    hands = log.outcome.hands_played
    points = log.outcome.totals[seat]
    figures = old.seats[seat]
    seats = list(old.seats)
    seats[seat] = SeatFigures(
        figures.matches + 1,
        figures.placement_sum + log.places[seat],
        figures.points + points,
        figures.hands + hands,
    )
    return replace(
        old,
        matches=old.matches + 1,
        points=old.points + points,
        hands=old.hands + hands,
        faults=old.faults + log.faults[seat],
        decisions=old.decisions + asked(log, seat),
        seats=(seats[0], seats[1], seats[2], seats[3]),
        first_match=old.first_match or at,
        last_match=at,
    )


def head_to_head(log: MatchLog) -> Iterator[tuple[str, str, dict[str, int]]]:
    """What a rated match adds to each participant's figures against each other one:
    ``(participant, opponent, counters)``, for every ordered pair of seats."""
    hands = log.outcome.hands_played
    totals = log.outcome.totals
    for seat, info in enumerate(log.seats):
        for other, opponent in enumerate(log.seats):
            if other == seat:
                continue
            yield (
                info.bot_id,
                opponent.bot_id,
                {
                    "matches": 1,
                    "ahead": int(log.places[seat] < log.places[other]),
                    "behind": int(log.places[seat] > log.places[other]),
                    "points": totals[seat] - totals[other],
                    "hands": hands,
                },
            )
