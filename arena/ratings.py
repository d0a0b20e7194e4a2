"""The ladder's ratings: openskill's Plackett-Luce model over a match's final places, kept per
version of each participant, on a scale anchored by house Normal.

**The anchor.** House Normal's rating is fixed at ``μ = ANCHOR_MU`` and ``σ = ANCHOR_SIGMA``:
every other participant (house Easy and Hard included) is rated against it, and it is never
moved. A Plackett-Luce update is not zero-sum (each participant moves by its own ``σ²``), and
new participants enter at the default mean, so without a fixed point the whole scale wanders;
with one, a rating of 25 always means "as strong as house Normal", today and a season from
now. Its matches, points and seats are counted like anyone's.

**No drift.** openskill adds a little uncertainty before every match (its ``tau``), so that a
rating can follow a player who improves. A version of a bot is a fixed program (a bot that
changes answers a new version, below), so the arena sets ``tau`` to 0: σ only shrinks as a
version's matches add up, and its rating settles instead of wandering. (In
benchmarks/ladder.py, with the matchmaker before the present one, the shown order of a
simulated ladder then stays right, Kendall τ ≥ 0.9 for good, after 1,061 matches instead of
1,955: docs/BENCHMARKS.md.)

Measured in simulation (the field of tests/workers/test_ratings.py: house bots and five bots
of fixed strengths, 3,000 matches, then 3,000 more, means over each last 500): with the anchor,
house Normal stays at exactly 25 and the others' means move 0.13 points on average (1.04 at
most); without it, Normal's own number ends at 25.22. When eight much weaker newcomers join
for the second 3,000, the others' means move 0.96 points on average with the anchor and 1.32
without (Normal then at 26.08): the anchor fixes the scale's zero, and the model still
stretches the gaps a little when the field changes a lot.

**Provisional.** A rating is provisional while its ``σ`` is above
:data:`~arena.records.PROVISIONAL_SIGMA`: a new participant starts at ``σ`` = 8.33 and comes
below 5 after about 22 rated matches (median of 50 simulated bots, 16 to 30, against opponents
of ``σ`` 2 to 8.3).

**Versions.** A participant's rating belongs to the version it answered in ``hello`` (the
match log names it, seat by seat). A version not rated before starts a new history: at the
previous version's ``μ`` (its strength is the best guess there is) with ``σ`` raised to at
least :data:`NEW_VERSION_SIGMA` (so it is provisional again until its own matches say more).
A version rated before (a bot rolled back) continues its own history.

>>> from arena.records import Rating
>>> first = starting_rating("bot_a", "1.0", None)
>>> (first.mu, round(first.sigma, 2), first.version)
(25.0, 8.33, '1.0')
>>> seeded = starting_rating("bot_a", "2.0", Rating("bot_a", 31.0, 2.0, matches=90))
>>> (seeded.mu, seeded.sigma, seeded.matches)
(31.0, 6.0, 0)
>>> starting_rating("house:normal", "1", None).sigma == ANCHOR_SIGMA
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from openskill.models import PlackettLuce

from arena.records import Rating, SeatFigures
from arena.results import asked
from replays.log import MatchLog

MODEL = PlackettLuce(tau=0.0)
"""Plackett-Luce without drift (see **No drift** above)."""
DEFAULT_MU: float = MODEL.mu
DEFAULT_SIGMA: float = MODEL.sigma
ANCHOR = "house:normal"
ANCHOR_MU = 25.0
ANCHOR_SIGMA = 1.0
"""The anchor's fixed uncertainty: small, so that the others learn from it as from a bot
whose strength is known, and not zero, which the model cannot take."""
NEW_VERSION_SIGMA = 6.0
"""The least ``σ`` a new version of a rated participant starts with."""


def is_rated(log: MatchLog) -> bool:
    """A match moves the ladder if it is marked rated and four distinct participants played it
    (a participant twice at one table, as a house bot filling seats, cannot be rated)."""
    return log.rated and len({seat.bot_id for seat in log.seats}) == len(log.seats)


def starting_rating(bot_id: str, version: str, previous: Rating | None) -> Rating:
    """The rating a version starts from: the anchor's, the previous version's ``μ`` with a
    wider ``σ``, or the model's default for a participant never rated."""
    if bot_id == ANCHOR:
        return Rating(bot_id, ANCHOR_MU, ANCHOR_SIGMA, version=version)
    if previous is None:
        return Rating(bot_id, DEFAULT_MU, DEFAULT_SIGMA, version=version)
    return Rating(bot_id, previous.mu, max(previous.sigma, NEW_VERSION_SIGMA), version=version)


def rate(log: MatchLog, before: Sequence[Rating], *, at: str = "") -> list[Rating]:
    """Each seat's rating after the match, from ``before`` (one per seat, in seat order: the
    rating of the version that sat there, :func:`starting_rating` if it is new), with the match
    added to its counts; the anchor's ``μ`` and ``σ`` stay as they are. ``at`` is when the
    match was recorded."""
    if len(before) != len(log.seats):
        raise ValueError(f"{len(before)} ratings for {len(log.seats)} seats")
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = MODEL.rate(teams, ranks=[float(p) for p in log.places])
    rated = []
    for seat, (old, team) in enumerate(zip(before, after, strict=True)):
        now = counted(log, seat, old, at)
        moved = old.bot_id != ANCHOR
        rated.append(replace(now, mu=team[0].mu, sigma=team[0].sigma) if moved else now)
    return rated


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
