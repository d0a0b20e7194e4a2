"""Who plays next on the ladder, and with whom: tables of four chosen by need.

Every matchmaking round (:func:`arena.ladder.matchmake`) seats up to a number of new tables
among the ladder's members that have room: a registered bot plays at most its owner's
``max_concurrent`` tables at once (1 unless changed, :data:`MAX_CONCURRENT` at most); the
house bots have no limit. Each table is then played as a duplicate: its deals in all four
seat rotations, one after another, so every member holds every seat's cards once.

**By need.** Each table is built around its *host*: the registered member with room whose
rating is the most uncertain (a new bot has the largest ``σ``), then the one with the fewest
rated matches. **Close ratings.** Its three opponents are the members with room whose ``μ`` is
closest to a point drawn from the host's own rating, ``N(μ, σ)``: a well-known bot meets bots
of its own strength, where a result says the most about the order; an uncertain one meets
strengths across its whole range, which is where its rating can be anywhere. The draw comes
from a seeded generator, so a round is reproducible.

>>> members = [Member("bot_new", 25.0, 8.3, 0, room=1), Member("bot_old", 30.0, 2.0, 80, room=2),
...            Member("house:easy", 18.0, 2.0, 99, house=True),
...            Member("house:normal", 25.0, 1.0, 99, house=True),
...            Member("house:hard", 31.0, 2.0, 99, house=True)]
>>> tables = choose_tables(members, tables=3, rng=random.Random(1))  # bot_old has room for 2
>>> [sorted(t) for t in tables]  # doctest: +NORMALIZE_WHITESPACE
[['bot_new', 'bot_old', 'house:hard', 'house:normal'],
 ['bot_old', 'house:easy', 'house:hard', 'house:normal']]
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

SEATS = 4
MAX_CONCURRENT = 8
"""The most ladder tables an owner may let its bot play at once."""

Table = tuple[str, str, str, str]


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

    @property
    def has_room(self) -> bool:
        return self.house or self.room > 0

    def need(self) -> tuple[float, int, str]:
        """Its place in the queue, neediest first."""
        return (-self.sigma, self.matches, self.bot_id)


def choose_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """Up to ``tables`` tables of four distinct members, each with a registered host, in seat
    order (shuffled: the rotations play every seat anyway)."""
    pool = {m.bot_id: m for m in members}
    chosen: list[Table] = []
    while len(chosen) < tables:
        host = neediest(pool)
        if host is None:
            break
        target = rng.gauss(host.mu, host.sigma)
        others = [m for m in pool.values() if m.has_room and m.bot_id != host.bot_id]
        if len(others) < SEATS - 1:
            break
        others.sort(key=lambda m: (abs(m.mu - target), m.bot_id))
        seated = [host.bot_id, *(m.bot_id for m in others[: SEATS - 1])]
        rng.shuffle(seated)
        chosen.append(take_seats(pool, seated))
    return chosen


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


def neediest(pool: Mapping[str, Member]) -> Member | None:
    """The registered member with room that needs a table most (:meth:`Member.need`), or None:
    a table's host."""
    hosts = [m for m in pool.values() if not m.house and m.has_room]
    return min(hosts, key=Member.need, default=None)


def take_seats(pool: dict[str, Member], seated: Sequence[str]) -> Table:
    """The table of the four ``seated``, in that order, each registered one of them left with
    room for one table less in ``pool``."""
    for bot_id in seated:
        if not pool[bot_id].house:
            pool[bot_id] = replace(pool[bot_id], room=pool[bot_id].room - 1)
    return (seated[0], seated[1], seated[2], seated[3])
