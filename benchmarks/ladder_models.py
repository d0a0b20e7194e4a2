"""The ladder benchmark's Gaussian rating models (benchmarks/ladder.py): strengths in a measure
of each hand's points, the full covariance of every participant's strength kept.

A :class:`Scale` says what a hand's points are rated as (the points themselves, margins
clipped or square-rooted, or places) and that measure's noise, as ``--noise`` measures it.
:class:`Covariance` rates each match by it. Its covariance after a table does not depend on the
table's results (the Kalman update of a Gaussian model), so :func:`table_factor` gives, before a
table is played, what it will teach: the information-gain matchmaker (benchmarks/ladder_gain.py)
chooses its tables by that.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from arena.matchmaker import SEATS
from arena.ratings import ANCHOR, NOISE, PRIOR_SIGMA
from replays.log import MatchLog

MARGIN_NOISE = NOISE
"""A seat's own noise in one hand, in points: the arena's (:data:`arena.ratings.NOISE`)."""
MARGIN_SIGMA = PRIOR_SIGMA
"""A new participant's σ in points per hand: the arena's (:data:`arena.ratings.PRIOR_SIGMA`)."""
MARGIN_CARDS_SHARE = 0.3
"""The share of a seat's noise that its cards' luck makes: what duplicate deals take away
from a table's variance, 0.21 to 0.38 at tables of four equal bots (``--noise``)."""
CLIP = 100.0
"""Where ``clipped`` cuts a hand's margin (its points less the table's mean in that hand)."""

Transform = Callable[[Sequence[int]], tuple[float, ...]]


def margins(scores: Sequence[int]) -> tuple[float, ...]:
    """Each seat's points in a hand less the table's mean."""
    mean = sum(scores) / len(scores)
    return tuple(s - mean for s in scores)


def points(scores: Sequence[int]) -> tuple[float, ...]:
    return tuple(float(s) for s in scores)


def clipped(scores: Sequence[int]) -> tuple[float, ...]:
    """Margins cut at ±:data:`CLIP` (about the 65th percentile of a hand's |margin|): the pig, the
    transformer's doubling or all the hearts count as a large margin, no larger."""
    return tuple(max(-CLIP, min(CLIP, m)) for m in margins(scores))


def rooted(scores: Sequence[int]) -> tuple[float, ...]:
    """The signed square root of each margin."""
    return tuple(math.copysign(math.sqrt(abs(m)), m) for m in margins(scores))


def placed(scores: Sequence[int]) -> tuple[float, ...]:
    """Each seat's place in the hand as 2.5 − place (1.5 first, −1.5 last), a tie sharing the
    mean of its places."""
    return tuple(
        1.5 - sum(o > s for o in scores) - (sum(o == s for o in scores) - 1) / 2 for s in scores
    )


@dataclass(frozen=True)
class Scale:
    """What each hand's points are rated as, and that measure's noise: a seat's own noise per
    hand (standard deviation), the share of it that is the cards' luck (what duplicate deals
    can take away), and a new participant's σ."""

    name: str
    transform: Transform
    noise: float
    cards_share: float
    prior_sigma: float

    def observed(self, log: MatchLog) -> list[float]:
        """Each seat's transformed points per hand in the match."""
        sums = [0.0] * SEATS
        for hand in log.hands:
            for seat, value in enumerate(self.transform(hand.result.scores)):
                sums[seat] += value
        return [s / len(log.hands) for s in sums]


PRIOR_SHARE = MARGIN_SIGMA / MARGIN_NOISE
"""A new participant's σ as a share of a hand's noise, for every scale as for points (the
field's spread in a transformed measure was not measured on its own)."""


def scale(name: str, transform: Transform, noise: float, cards_share: float) -> Scale:
    return Scale(name, transform, noise, cards_share, PRIOR_SHARE * noise)


SCALES = {
    s.name: s
    for s in (
        Scale("points", points, MARGIN_NOISE, MARGIN_CARDS_SHARE, MARGIN_SIGMA),
        scale("clipped", clipped, 83.0, 0.32),
        scale("rooted", rooted, 11.0, 0.32),
        scale("placed", placed, 1.3, 0.29),
    )
}
"""The measures tried; each one's noise and cards' share the mean of the two measured by
``--noise 200`` (docs/BENCHMARKS.md): 82 to 84 and 0.22 to 0.42 clipped, 10.9 to 11.1 and 0.23
to 0.41 rooted, 1.29 to 1.30 and 0.21 to 0.36 placed (points: 138 to 143 and 0.21 to 0.38)."""


class Covariance:
    """An experiment: strengths in a :class:`Scale`'s measure per hand, each match rated by the
    exact Gaussian (Kalman) update with the full covariance of every participant's strength
    kept, so that what a match tells about the *difference* of two participants stays known.
    House Normal is held fixed at 0, a strength of no uncertainty, which fixes the scale's zero
    (its covariance with everyone is 0). A duplicate table adds, for the length of its
    rotations, one unknown per seat: that seat's cards' luck, shared by its rotations, so each
    rotation is rated as it is played and its cards' luck is taken out as the rotations reveal
    it."""

    def __init__(self, bots: Sequence[str], measure: Scale = SCALES["points"]) -> None:
        self.bots = list(bots)
        self.scale = measure
        self.index = {b: i for i, b in enumerate(self.bots)}
        prior = [0.0 if b == ANCHOR else measure.prior_sigma**2 for b in self.bots]
        self.mu = [0.0] * len(self.bots)
        self.cov = [
            [prior[i] if i == j else 0.0 for j in range(len(prior))] for i in range(len(prior))
        ]

    def rate_table(self, logs: Sequence[MatchLog], *, duplicate: bool) -> Iterator[MatchLog]:
        """Rate the table's logs one after another, yielding each once it is rated."""
        n = len(self.bots)
        cards, play = split_noise(self.scale, logs[0].outcome.hands_played, duplicate=duplicate)
        extra = SEATS if duplicate else 0
        mu = self.mu + [0.0] * extra
        cov = [row + [0.0] * extra for row in self.cov]
        cov += [[cards if j == n + s else 0.0 for j in range(n + extra)] for s in range(extra)]
        for log in logs:
            observed = self.scale.observed(log)
            rows = []
            for seat, info in enumerate(log.seats):
                row = [0.0] * (n + extra)
                row[self.index[info.bot_id]] = 1.0
                if duplicate:
                    row[n + seat] = 1.0
                rows.append(row)
            # the three differences from the last seat: the table's common term cancels
            h = [[a - b for a, b in zip(rows[s], rows[-1], strict=True)] for s in range(SEATS - 1)]
            y = [observed[s] - observed[-1] for s in range(SEATS - 1)]
            mu, cov = kalman(mu, cov, h, y, play)
            yield log
        self.mu, self.cov = mu[:n], [row[:n] for row in cov[:n]]

    def rating(self, bot_id: str) -> tuple[float, float]:
        i = self.index[bot_id]
        return self.mu[i], max(self.cov[i][i], 0.0) ** 0.5


def split_noise(measure: Scale, hands: int, *, duplicate: bool) -> tuple[float, float]:
    """A match's seat noise variance per hand as (cards' luck, the rest): the luck is its own
    unknown at a duplicate table, part of the noise at a plain one."""
    total = measure.noise**2 / hands
    cards = measure.cards_share * total if duplicate else 0.0
    return cards, total - cards


def kalman(
    mu: list[float], cov: list[list[float]], h: list[list[float]], y: list[float], noise: float
) -> tuple[list[float], list[list[float]]]:
    """The Gaussian posterior after observing ``h·x + e = y``, ``e`` the differences of
    independent noises of variance ``noise`` from one of them (covariance noise·(I + J))."""
    size, k = len(mu), len(y)
    ph = [
        [sum(cov[i][m] * h[r][m] for m in range(size) if h[r][m]) for r in range(k)]
        for i in range(size)
    ]
    s = [
        [
            sum(h[a][m] * ph[m][b] for m in range(size) if h[a][m]) + noise * (1 + (a == b))
            for b in range(k)
        ]
        for a in range(k)
    ]
    inverse = invert(s)
    gain = [
        [sum(ph[i][c] * inverse[c][r] for c in range(k)) for r in range(k)] for i in range(size)
    ]
    innovation = [y[r] - sum(h[r][m] * mu[m] for m in range(size) if h[r][m]) for r in range(k)]
    means = [mu[i] + sum(gain[i][r] * innovation[r] for r in range(k)) for i in range(size)]
    after = [
        [cov[i][j] - sum(gain[i][r] * ph[j][r] for r in range(k)) for j in range(size)]
        for i in range(size)
    ]
    return means, after


def invert(matrix: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of a small positive definite matrix, by Gauss-Jordan elimination."""
    size = len(matrix)
    rows = [list(row) + [float(i == j) for j in range(size)] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = rows[col][col]
        rows[col] = [v / pivot for v in rows[col]]
        for r in range(size):
            if r != col:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    return [row[size:] for row in rows]


def table_information(measure: Scale, hands: int, *, duplicate: bool) -> list[list[float]]:
    """What a table's four rotations of ``hands`` hands tell about its four participants'
    strengths (in the order the table lists them, seat ``s`` of rotation ``r`` holding
    participant ``(s + r) mod 4``): the information matrix ``Hᵀ Σ⁻¹ H`` of the 12 seat
    differences, the cards' luck of a duplicate table and each match's noise in ``Σ``. The
    Kalman updates of :meth:`Covariance.rate_table` add exactly this to the precision of the
    four strengths, whatever the results."""
    cards, play = split_noise(measure, hands, duplicate=duplicate)
    rows = [(r, s) for r in range(SEATS) for s in range(SEATS - 1)]
    last = SEATS - 1

    def holder(r: int, s: int) -> int:
        return (s + r) % SEATS

    h = [
        [float(holder(r, s) == b) - float(holder(r, last) == b) for b in range(SEATS)]
        for r, s in rows
    ]
    sigma = [
        [
            (play if r1 == r2 else 0.0) * (1 + (s1 == s2)) + cards * (1 + (s1 == s2))
            for r2, s2 in rows
        ]
        for r1, s1 in rows
    ]
    inverse = invert(sigma)
    weighted = [
        [sum(inverse[i][j] * h[j][b] for j in range(len(rows))) for b in range(SEATS)]
        for i in range(len(rows))
    ]
    return [
        [sum(h[i][a] * weighted[i][b] for i in range(len(rows))) for b in range(SEATS)]
        for a in range(SEATS)
    ]


@cache
def table_factor(measure: Scale, hands: int, duplicate: bool) -> tuple[tuple[float, ...], ...]:
    """``G``, 3 rows by 4, with ``Gᵀ G`` = :func:`table_information`: that information as three
    independent unit observations, for a rank-3 update of the covariance. The information only
    sees differences (each row sums to 0), so ``J = Mᵀ A M`` with ``M = [I | −1]`` and ``A`` its
    first three rows and columns; ``G = Lᵀ M`` for the Cholesky factor ``A = L Lᵀ``."""
    info = table_information(measure, hands, duplicate=duplicate)
    k = SEATS - 1
    low = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1):
            rest = info[i][j] - sum(low[i][m] * low[j][m] for m in range(j))
            low[i][j] = math.sqrt(rest) if i == j else rest / low[j][j]
    return tuple(
        tuple(low[b][r] if b < k else -sum(low[c][r] for c in range(k)) for b in range(SEATS))
        for r in range(k)
    )
