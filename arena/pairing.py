"""Round-robin tables of four: who plays whom in a tournament, and the matches of each table.

**Balance.** Every participant sits at the same number of tables, ``r``, and every pair of
participants shares a table equally often, give or take one: the pair counts differ by at most
one. ``r`` is the smallest number with ``N·r`` divisible by 4 (the seats add up) and
``3·r ≥ N − 1`` (each table gives a participant three opponents, so every pair can meet), raised
further only when no balanced construction is found at that size.

**Growth.** ``N·r/4`` tables with ``r`` a little above ``(N − 1)/3``: about ``N²/12`` or
somewhat more, quadratic as any round-robin. Measured (seed ``"x"``): 5 bots play 5 tables, 8
play 8, 12 play 12, 20 play 40, 30 play 105 and 50 play 300 (each bot at 24 tables, every pair
meeting once or twice, built in about 6 s). In the duplicate format each table is played 4
times, so 50 bots make 1,200 matches of ``matches_per_table`` each: invite fewer or run
several tournaments for larger fields.

**Construction.** Seeded (the same participants and seed give the same tables). A greedy pass
builds the tables: each takes the participants with the fewest tables so far, preferring pairs
that have met least. Then participants are swapped between tables (which keeps every table
count) while the pairs do not get less even, until they are balanced or a budget of
``STEPS_PER_PLAYER · N`` swaps is spent; only then is the next ``r`` tried. Bounded: about a
second for 50 bots.

**Duplicate format.** Each table's deal sequence is played once per seat rotation (4 matches
with the same deal label, so the same deals, the participants shifted one seat each time), so
every participant holds every seat's cards and results can be compared deal by deal.

**Deals.** The tables are public and name no deal: a match's deals come from its deal label
(``t1:d1``) and the tournament's secret (:mod:`replays.deals`), never from its ids.

>>> tables = round_robin(["a", "b", "c", "d", "e"], seed="t1")
>>> len(tables), sorted(sum(p in t for t in tables) for p in "abcde")
(5, [4, 4, 4, 4, 4])
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from arena.records import HOUSE_PARTICIPANTS

SEATS = 4
STEPS_PER_PLAYER = 2000
"""The improvement's budget of swap attempts, per participant, at each table count."""
MAX_EXTRA_ROUNDS = 8
"""How far ``r`` may grow beyond its minimum looking for balanced tables."""

Table = tuple[str, str, str, str]


@dataclass(frozen=True)
class PlannedMatch:
    """One match of a tournament: its id's parts, its participants in seat order and the label
    of its deal sequence (shared by the rotations of one deal sequence)."""

    table: int
    deal: int
    rotation: int
    seats: Table

    @property
    def deal_label(self) -> str:
        return f"t{self.table + 1}:d{self.deal + 1}"

    @property
    def table_id(self) -> str:
        return f"table-{self.table + 1}"

    def match_id(self, tournament_id: str) -> str:
        return f"{tournament_id}-t{self.table + 1}-d{self.deal + 1}-r{self.rotation + 1}"


def entrants(participants: Sequence[str]) -> list[str]:
    """The participants, filled to four with house bots not already entered."""
    filled = list(dict.fromkeys(participants))
    spare = [h for h in ("house:normal", "house:easy", "house:hard") if h not in filled]
    while len(filled) < SEATS:
        filled.append(spare.pop(0) if spare else HOUSE_PARTICIPANTS[1])
    return filled


def round_robin(participants: Sequence[str], *, seed: str) -> list[Table]:
    """Balanced tables of four for ``participants`` (at least 4, distinct)."""
    players = list(participants)
    n = len(players)
    if n == SEATS:  # one table (filled with house bots, a house bot may sit twice)
        return [(players[0], players[1], players[2], players[3])]
    if n < SEATS or len(set(players)) != n:
        raise ValueError(f"a round-robin needs at least {SEATS} distinct participants")
    best: list[Table] = []
    best_spread = None
    for r in _table_counts(n):
        rng = random.Random(f"{seed}:{r}")
        tables = _improve(_greedy(players, r, rng), rng)
        spread = pair_spread(players, tables)
        if spread <= 1:
            return tables
        if best_spread is None or spread < best_spread:
            best, best_spread = tables, spread
    return best


def _table_counts(n: int) -> list[int]:
    first = -(-(n - 1) // 3)
    valid = [r for r in range(first, first + 4 * MAX_EXTRA_ROUNDS) if n * r % SEATS == 0]
    return valid[:MAX_EXTRA_ROUNDS]


def _greedy(players: list[str], r: int, rng: random.Random) -> list[list[str]]:
    """Tables taking the participants with the fewest tables, preferring pairs that met least:
    every participant ends at ``r`` tables."""
    count = dict.fromkeys(players, 0)
    met: Counter[tuple[str, str]] = Counter()
    tables: list[list[str]] = []
    for _ in range(len(players) * r // SEATS):
        chosen: list[str] = []
        for _ in range(SEATS):
            open_ = [p for p in players if p not in chosen]
            least = min(count[p] for p in open_)
            pool = [p for p in open_ if count[p] == least]
            chosen.append(
                min(pool, key=lambda p: (sum(met[_pair(p, q)] for q in chosen), rng.random()))
            )
        for p in chosen:
            count[p] += 1
        for a, b in combinations(chosen, 2):
            met[_pair(a, b)] += 1
        tables.append(chosen)
    return tables


def _improve(tables: list[list[str]], rng: random.Random) -> list[Table]:
    """Swap participants between tables (which keeps everyone's table count) while the sum of
    squared pair counts does not grow, until every pair count is within one of the others or
    the step budget is spent. With the total fixed, that sum is least exactly when balanced."""
    players = sorted({p for t in tables for p in t})
    met = Counter(_pair(a, b) for t in tables for a, b in combinations(t, 2))
    pairs = len(players) * (len(players) - 1) // 2
    low, extra = divmod(sum(met.values()), pairs)
    target = (pairs - extra) * low * low + extra * (low + 1) ** 2
    squares = sum(c * c for c in met.values())
    for _ in range(STEPS_PER_PLAYER * len(players)):
        if squares == target or len(tables) < 2:
            break
        a, b = rng.sample(range(len(tables)), 2)
        i, j = rng.randrange(SEATS), rng.randrange(SEATS)
        p, q = tables[a][i], tables[b][j]
        if p in tables[b] or q in tables[a]:
            continue
        changes = Counter[tuple[str, str]]()
        for x in tables[a]:
            if x != p:
                changes[_pair(p, x)] -= 1
                changes[_pair(q, x)] += 1
        for y in tables[b]:
            if y != q:
                changes[_pair(q, y)] -= 1
                changes[_pair(p, y)] += 1
        delta = sum((met[k] + d) ** 2 - met[k] ** 2 for k, d in changes.items())
        if delta <= 0:
            tables[a][i], tables[b][j] = q, p
            met.update(changes)
            squares += delta
    return [(t[0], t[1], t[2], t[3]) for t in tables]


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def pair_counts(players: Sequence[str], tables: Sequence[Table]) -> dict[tuple[str, str], int]:
    """How often each pair of ``players`` shares a table."""
    counts = {_pair(a, b): 0 for a, b in combinations(players, 2)}
    for table in tables:
        for a, b in combinations(table, 2):
            counts[_pair(a, b)] += 1
    return counts


def pair_spread(players: Sequence[str], tables: Sequence[Table]) -> int:
    counts = pair_counts(players, tables).values()
    return max(counts) - min(counts)


def plan(
    participants: Sequence[str], *, seed: str, duplicate: bool, matches_per_table: int
) -> list[PlannedMatch]:
    """Every match of a tournament: per table, ``matches_per_table`` deal sequences, each played
    in all 4 seat rotations when ``duplicate`` (else once)."""
    rotations = SEATS if duplicate else 1
    matches = []
    for t, table in enumerate(round_robin(entrants(participants), seed=seed)):
        for deal in range(matches_per_table):
            for rotation in range(rotations):
                matches.append(PlannedMatch(t, deal, rotation, rotated(table, rotation)))
    return matches


def rotated(table: Table, by: int) -> Table:
    """The table with everyone ``by`` seats on: seat 0 holds who was in seat ``by``."""
    a, b, c, d = table[by:] + table[:by]
    return (a, b, c, d)
