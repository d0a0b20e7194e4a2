"""An experiment of the ladder benchmark (benchmarks/ladder.py): a matchmaker that seats a round
where the :class:`~benchmarks.ladder_models.Covariance` model expects to learn the most about
the shown order.

In a Gaussian model the covariance after a table is known before the table is played: each
table adds :func:`~benchmarks.ladder_models.table_factor`'s information to its four
participants, whatever the results. So tables can be chosen by what they leave in doubt: the
expected number of pairs shown the wrong way round after them (:func:`misordered`), each pair's
chance that the one shown higher (by ``μ − 3σ``, σ after the tables) is the weaker, with the
variance of their difference after the tables. τ counts exactly those pairs (τ ≥ 0.9 when at
most 5 % of the pairs are wrong); close pairs weigh the most. :class:`GainTables` builds a
round table by table: the arena's matchmaker's next table from the members with room, then its
seats given to other members with room while that lowers the expected count (so it chooses who
plays when a round seats fewer tables than the members have room for), each table's update
applied before the next; then it swaps two participants of two tables while that lowers it.
Or (``seats=False``) it keeps the arena's matchmaker's round and only swaps. Or
(``variance=True``) it lowers each pair's log variance of difference weighted by its doubt at
the start of the round (:func:`log_spread`), a criterion that looks past the next round.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from arena.matchmaker import SEATS, Member, Table, choose_tables, take_seats
from benchmarks.ladder_models import Covariance, invert, table_factor

PASSES = 3
"""The most passes over every swap of a round's tables (each pass keeps what improved)."""

Matrix = list[list[float]]


def misordered(mu: Sequence[float], cov: Sequence[Sequence[float]]) -> float:
    """The expected number of pairs shown the wrong way round, the strengths normal with means
    ``mu`` and covariance ``cov``, the order shown by ``μ − 3σ`` as the ladder shows it: for
    each pair, the chance that the one shown higher is the weaker."""
    shown = [m - 3 * math.sqrt(max(cov[i][i], 0.0)) for i, m in enumerate(mu)]
    total = 0.0
    for i in range(len(mu)):
        row = cov[i]
        for j in range(i + 1, len(mu)):
            spread = row[i] + cov[j][j] - 2 * row[j]
            if spread > 0.0:
                lead = mu[i] - mu[j] if shown[i] >= shown[j] else mu[j] - mu[i]
                total += 0.5 * math.erfc(lead / math.sqrt(2 * spread))
    return total


def pair_doubts(
    mu: Sequence[float], cov: Sequence[Sequence[float]]
) -> list[tuple[int, int, float]]:
    """Every pair of uncertain difference with its chance that the one of the larger mean is
    the weaker."""
    doubts = []
    for i in range(len(mu)):
        for j in range(i + 1, len(mu)):
            spread = cov[i][i] + cov[j][j] - 2 * cov[i][j]
            if spread > 0.0:
                doubts.append((i, j, 0.5 * math.erfc(abs(mu[i] - mu[j]) / math.sqrt(2 * spread))))
    return doubts


def log_spread(doubts: Sequence[tuple[int, int, float]], cov: Sequence[Sequence[float]]) -> float:
    """The log of each pair's variance of difference under ``cov``, weighted by its doubt now
    (:func:`pair_doubts`): what the ``variance`` criterion lowers. Unlike :func:`misordered`
    it still values a pair whose means are equal (whose order a round cannot settle yet), and
    each halving of a variance counts the same."""
    return sum(w * math.log(cov[i][i] + cov[j][j] - 2 * cov[i][j]) for i, j, w in doubts)


def updated(cov: Matrix, table: Sequence[int], factor: Sequence[Sequence[float]]) -> Matrix:
    """The covariance after a table of the participants at indices ``table`` (in its seat order)
    is played: the rank-3 update ``P − U (I + G P Gᵀ)⁻¹ Uᵀ``, ``U = P Gᵀ``."""
    k = len(factor)
    u = [[sum(row[table[b]] * factor[r][b] for b in range(SEATS)) for r in range(k)] for row in cov]
    s = [
        [float(a == r) + sum(factor[a][b] * u[table[b]][r] for b in range(SEATS)) for r in range(k)]
        for a in range(k)
    ]
    inverse = invert(s)
    v = [[sum(ui[c] * inverse[c][r] for c in range(k)) for r in range(k)] for ui in u]
    return [
        [pij - sum(vi[r] * uj[r] for r in range(k)) for pij, uj in zip(row, u, strict=True)]
        for row, vi in zip(cov, v, strict=True)
    ]


def after_round(
    cov: Matrix, tables: Sequence[Sequence[int]], factor: Sequence[Sequence[float]]
) -> Matrix:
    for table in tables:
        cov = updated(cov, table, factor)
    return cov


class GainTables:
    """A round's tables chosen by :func:`misordered` after them (see the module), for a ladder
    rated by ``covariance``; a :data:`benchmarks.ladder.Chooser`."""

    def __init__(
        self,
        covariance: Covariance,
        hands: int,
        *,
        duplicate: bool,
        seats: bool = True,
        variance: bool = False,
    ) -> None:
        self.covariance = covariance
        self.factor = table_factor(covariance.scale, hands, duplicate)
        self.seats = seats
        """Whether each table's seats are chosen (who plays); else the round starts from the
        arena's matchmaker's tables, and only the swaps change them (who meets whom)."""
        self.variance = variance
        """Lower :func:`log_spread` rather than :func:`misordered`."""

    def loss(self) -> Callable[[Matrix], float]:
        """What the round's tables are chosen to lower, from the covariance after them."""
        mu = self.covariance.mu
        if not self.variance:
            return lambda cov: misordered(mu, cov)
        doubts = pair_doubts(mu, self.covariance.cov)
        return lambda cov: log_spread(doubts, cov)

    def __call__(
        self, members: Sequence[Member], *, tables: int, rng: random.Random
    ) -> list[Table]:
        index, bots, loss = self.covariance.index, self.covariance.bots, self.loss()
        pool = {m.bot_id: m for m in members}
        chosen: list[list[int]] = []
        cov = self.covariance.cov
        if not self.seats:
            chosen = [[index[b] for b in t] for t in choose_tables(members, tables=tables, rng=rng)]
        while self.seats and len(chosen) < tables:
            start = choose_tables(list(pool.values()), tables=1, rng=rng)
            if not start:
                break
            free = [index[m.bot_id] for m in pool.values() if m.has_room]
            table = self._best_table([index[b] for b in start[0]], free, loss, cov)
            take_seats(pool, [bots[i] for i in table])
            cov = updated(cov, table, self.factor)
            chosen.append(table)
        for _ in range(PASSES):
            if not self.improve(chosen, loss, self.covariance.cov):
                break
        return [(bots[a], bots[b], bots[c], bots[d]) for a, b, c, d in chosen]

    def _best_table(
        self, table: list[int], free: Sequence[int], loss: Callable[[Matrix], float], cov: Matrix
    ) -> list[int]:
        """The arena matchmaker's next ``table`` with seats given to other ``free`` members
        while that lowers the ``loss`` after it (who plays)."""
        best = loss(updated(cov, table, self.factor))
        for _ in range(PASSES):
            improved = False
            for seat in range(SEATS):
                for other in free:
                    if other in table:
                        continue
                    trial = table[:]
                    trial[seat] = other
                    left = loss(updated(cov, trial, self.factor))
                    if left < best - 1e-9:
                        table, best, improved = trial, left, True
            if not improved:
                break
        return table

    def improve(
        self, tables: list[list[int]], loss: Callable[[Matrix], float], cov: Matrix
    ) -> bool:
        """One pass over every swap of two participants of two tables, each kept if it lowers
        the ``loss`` after the round; whether any was kept."""
        improved = False
        for a in range(len(tables)):
            for b in range(a + 1, len(tables)):
                rest = after_round(
                    cov, [t for i, t in enumerate(tables) if i not in (a, b)], self.factor
                )
                best = loss(after_round(rest, [tables[a], tables[b]], self.factor))
                for i in range(SEATS):
                    for j in range(SEATS):
                        one, two = tables[a][:], tables[b][:]
                        one[i], two[j] = two[j], one[i]
                        if one[i] in tables[a] or two[j] in tables[b]:
                            continue  # house Normal sits at most once at a table
                        left = loss(after_round(rest, [one, two], self.factor))
                        if left < best - 1e-9:
                            tables[a], tables[b], best, improved = one, two, left, True
        return improved
