"""Who plays next on the ladder, and with whom: tables of four chosen by need.

Every matchmaking round (:func:`arena.ladder.matchmake`) seats up to a number of new tables
among the ladder's members that have room: a registered bot plays at most its owner's
``max_concurrent`` tables at once (1 unless changed, :data:`MAX_CONCURRENT` at most); the
house bots have no limit. Each table is then played as a duplicate: its deals in all four
seat rotations, one after another, so every member holds every seat's cards once.

The matchmaker seeks what the ladder does not know yet: which way round to show two bots.
**Doubt.** Two members' :func:`order_doubt` is the chance that the one shown higher (by
``μ − 3σ``) is the weaker, their strengths taken as independent normals ``N(μ, σ²)``; a
member's doubt is the sum of its doubts with every other member: the pairs it may be shown
the wrong way round in. A new bot (large ``σ``) is in doubt with nearly everyone; a settled
bot far from the others' ratings with nobody. **By need.** Each table is built around its
*host*: the registered member with room of the most :func:`need`: first the one *passed over*
in the most rounds in a row (rounds in which it had room and was not seated,
:func:`passed_over_after`, kept by the ladder between rounds), then the largest doubt, the
largest ``σ``, the fewest rated matches. **Close ratings.** Each of its three other seats
goes to the member with room whose own doubt plus its doubts with those already seated is
largest: bots whose places are unsure, against those their order is least sure with, where a
result says the most. Ties are broken by a seeded generator, so a round is reproducible.

**Nobody waits for long.** By doubt alone a bot whose place looks sure is seated only once
those in doubt are, so on a ladder with more bots than a round's seats it may wait for ever.
A bot passed over hosts one of the next round's tables before any bot that was not. In a
simulated ladder of 24 bots and 4 tables a round (benchmarks/ladder.py ``--experiment
seating``, docs/BENCHMARKS.md, 12 runs of 2,000 matches) no registered bot was passed over
more than 3 rounds in a row, where by doubt alone one was passed over 107 rounds in a row
(random tables: 11), and the shown order held Kendall τ ≥ 0.9 for good after 621 matches
(median) instead of 884. On 16 bots (passed over only when house Normal takes their seats)
the longest wait fell from 26 rounds to 1, the order as fast within the runs' spread.

In a simulated ladder rated as the arena rated before (openskill over places, medians of 6
runs) the shown order first reached τ ≥ 0.9 after 181 matches with this matchmaker (doubt
alone then), against 571 with the one before it (opponents near a point drawn from the host's
``N(μ, σ)``), and held there for good from 1,403 matches against 1,959. Only the members'
order and spreads matter here, so the doubts are the same on any scale (points per hand,
relative to house Normal, today).

>>> members = [Member("bot_new", 25.0, 8.3, 0, room=1), Member("bot_old", 30.0, 2.0, 80, room=2),
...            Member("house:easy", 18.0, 2.0, 99, house=True),
...            Member("house:normal", 25.0, 1.0, 99, house=True),
...            Member("house:hard", 31.0, 2.0, 99, house=True)]
>>> tables = choose_tables(members, tables=3, rng=random.Random(1))  # bot_old has room for 2
>>> [sorted(t) for t in tables]  # doctest: +NORMALIZE_WHITESPACE
[['bot_new', 'bot_old', 'house:easy', 'house:normal'],
 ['bot_old', 'house:easy', 'house:hard', 'house:normal']]
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

SEATS = 4
MAX_CONCURRENT = 8
"""The most ladder tables an owner may let its bot play at once."""

Table = tuple[str, str, str, str]
_SQRT2 = math.sqrt(2)


@dataclass(frozen=True)
class Member:
    """A ladder member as the matchmaker sees it: its rating, and how many more tables it may
    join now (house bots: any number)."""

    bot_id: str
    mu: float
    sigma: float
    matches: int
    room: int = 0
    house: bool = False
    passed_over: int = 0
    """Rounds in a row in which it had room and was not seated (:func:`passed_over_after`)."""

    @property
    def has_room(self) -> bool:
        return self.house or self.room > 0

    @property
    def shown(self) -> float:
        """What the ladder orders by: the conservative rating."""
        return self.mu - 3 * self.sigma


def order_doubt(a: Member, b: Member) -> float:
    """The chance that of ``a`` and ``b`` the one shown higher is the weaker, their strengths
    taken as independent normals ``N(μ, σ²)``."""
    spread = math.hypot(a.sigma, b.sigma)
    if spread == 0.0:
        return 0.0
    high, low = (a, b) if a.shown >= b.shown else (b, a)
    return 0.5 * math.erfc((high.mu - low.mu) / (spread * _SQRT2))


def doubts(members: Sequence[Member]) -> dict[str, float]:
    """Each member's doubt: the sum of its :func:`order_doubt` with every other member.

    Each pair is worked out once (:func:`order_doubt` is the same both ways round unless the
    two are shown level), and each member's terms are added in the members' order, so the sums
    are exactly those of adding ``order_doubt(m, o)`` over ``members`` for each ``m``.
    """
    rows = [(m.mu, m.sigma, m.mu - 3 * m.sigma) for m in members]
    totals = [0.0] * len(rows)
    for i, (mu, sigma, shown) in enumerate(rows):
        for j in range(i + 1, len(rows)):
            other_mu, other_sigma, other_shown = rows[j]
            scale = math.hypot(sigma, other_sigma) * _SQRT2
            if scale == 0.0:
                continue
            apart = mu - other_mu if shown >= other_shown else other_mu - mu
            totals[i] += 0.5 * math.erfc(apart / scale)
            if shown == other_shown:  # each is the one shown higher when asked first
                apart = -apart
            totals[j] += 0.5 * math.erfc(apart / scale)
    return {m.bot_id: total for m, total in zip(members, totals, strict=True)}


def choose_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """Up to ``tables`` tables of four distinct members, each with a registered host, in seat
    order (the rotations play every seat anyway)."""
    doubt = doubts(members)
    pool = {m.bot_id: m for m in members}
    met: set[frozenset[str]] = set()
    chosen: list[Table] = []
    while len(chosen) < tables:
        host = neediest(pool, doubt)
        if host is None:
            break
        seated = [host]
        while len(seated) < SEATS:
            free = [m for m in pool.values() if m.has_room and m not in seated]
            if not free:
                break
            seated.append(max(free, key=lambda m: _gain(m, seated, doubt, met, rng)))
        if len(seated) < SEATS:
            break
        met.update(frozenset((a.bot_id, b.bot_id)) for a in seated for b in seated if a != b)
        chosen.append(take_seats(pool, [m.bot_id for m in seated]))
    return chosen


def _gain(
    member: Member,
    seated: Sequence[Member],
    doubt: Mapping[str, float],
    met: set[frozenset[str]],
    rng: random.Random,
) -> tuple[int, float, float]:
    """How much seating ``member`` with ``seated`` would tell: first, fewer of them already
    met at a table of this round (a member with room for several tables does not meet the
    same bots twice while others are free); then its doubt plus its doubts with them; then
    chance."""
    again = sum(frozenset((member.bot_id, s.bot_id)) in met for s in seated)
    return (
        -again,
        doubt[member.bot_id] + sum(order_doubt(member, s) for s in seated),
        rng.random(),
    )


def need(member: Member, doubt: Mapping[str, float]) -> tuple[int, float, float, int, str]:
    """How much the ladder needs ``member`` to play, the larger the more: the rounds in a row
    it was passed over, then its ``doubt``, then its ``σ`` (equal μ make equal doubts, whatever
    the σ: a new bot still comes first), then the fewer rated matches (then its id, so that the
    order is total)."""
    return (member.passed_over, doubt[member.bot_id], member.sigma, -member.matches, member.bot_id)


def neediest(pool: Mapping[str, Member], doubt: Mapping[str, float]) -> Member | None:
    """The registered member with room of the largest :func:`need`, or None: a table's host."""
    hosts = [m for m in pool.values() if not m.house and m.has_room]
    return max(hosts, key=lambda m: need(m, doubt), default=None)


def passed_over_after(members: Sequence[Member], tables: Sequence[Table]) -> dict[str, int]:
    """Each registered member's :attr:`Member.passed_over` after a round of ``members`` that
    seated ``tables``: one more for a member that had room and was not seated, else 0 (left
    out)."""
    seated = {bot_id for table in tables for bot_id in table}
    return {
        m.bot_id: m.passed_over + 1
        for m in members
        if not m.house and m.has_room and m.bot_id not in seated
    }


def random_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """Up to ``tables`` tables of four members with room drawn at random, each with at least
    one registered member: what the matchmaker is measured against (benchmarks/ladder.py)."""
    pool = {m.bot_id: m for m in members}
    chosen: list[Table] = []
    while len(chosen) < tables:
        ready = sorted(b for b, m in pool.items() if m.has_room)
        if len(ready) < SEATS or all(pool[b].house for b in ready):
            break
        seated = rng.sample(ready, SEATS)  # never four house bots: there are three
        chosen.append(take_seats(pool, seated))
    return chosen


def take_seats(pool: dict[str, Member], seated: Sequence[str]) -> Table:
    """The table of the four ``seated``, in that order, each registered one of them left with
    room for one table less in ``pool``."""
    for bot_id in seated:
        if not pool[bot_id].house:
            pool[bot_id] = replace(pool[bot_id], room=pool[bot_id].room - 1)
    return (seated[0], seated[1], seated[2], seated[3])
