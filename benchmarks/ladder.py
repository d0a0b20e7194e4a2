"""How fast the ladder's shown order becomes right: the matchmaker against random tables,
duplicate deals against plain ones.

A field of bots whose true order is known by construction plays a simulated ladder with the
arena's own code: house Normal (``house:normal``, p = 0, the rating anchor) and registered
bots that are house Normal playing a random legal card with probability p = k / (size − 1)
at each card play (passes and exposures stay Normal's), so a larger p is a weaker bot. Every
round builds the members from the current ratings (each registered bot with room for one
table, house Normal with room for any), seats tables with
:func:`arena.matchmaker.choose_tables` or :func:`arena.matchmaker.random_tables` until nobody
has room (or ``--tables`` are seated), and plays each table as 4 matches of 4 hands
(``play_match`` with ``InProcessSeat`` seats, as a worker plays house bots), the participants
shifted one seat each time: the same deals in all four (duplicate) or four different deals
(plain). Each match is rated on its own, one after another, by :func:`arena.ratings.rate`
(point margins, house Normal rated like everyone). After every rating the shown order (by
``Rating.conservative``, highest first; the arena shows it relative to house Normal, which
does not change the order) is compared
with the true order by Kendall's τ (τ-a: a tie counts as neither right nor wrong).

    python -m benchmarks.ladder                 # 4 arms x 5 seeds x 1,000 matches, 16 bots
    python -m benchmarks.ladder --quick         # 4 arms x 1 seed x 300 matches
    python -m benchmarks.ladder --experiment cards --experiment drift   # and more arms
    python -m benchmarks.ladder --no-arena-arms --experiment drawn      # only those named
    python -m benchmarks.ladder --noise 200     # how much duplicate deals take from the noise
    python -m benchmarks.ladder --update-cost 100 300 1000   # the full covariance's cost

The default run takes about 6 minutes on 2 quiet cores (about 8 ms per hand in each of the 2
processes), up to 3 times that on a busy machine; ``--quick`` about 20 seconds. Each run is
seeded (its deals, its tables, its bots' random cards): the same options print the same
figures, and an arm's figures do not depend on which other arms run beside it. ``--tables N``
seats at most N tables a round, as the arena's ``GONGZHU_LADDER_TABLES`` does (by default a
round seats tables until nobody has room).

Printed: a line per run as it ends; then the ratios: the median matches of each arm of chosen
tables with duplicate deals ÷ those of random tables with plain deals rated the same way (the
goal: the first arm, at most 0.5), both to when τ first reaches 0.9 and to the match after
which it never falls below 0.9 again (holds for good); then a Markdown table, a row per arm:
the runs; the matches until τ ≥ 0.9 was first reached (median, the lower of the middle two
for an even count, and range over the seeds; "> N" for a run that never got there); in how
many runs τ stayed at 0.9 or above from then to the end; the matches after which it never
fell below 0.9 again; the median τ after 100, 250, 500, 1,000, 2,000 and 4,000 matches
(those within the run) and at its end; the registered bots' mean σ at the end; the most
rounds in a row a registered bot with room was passed over (not seated), in any run. Then each
participant's final μ averaged over the runs of the four arena arms and whether it falls as
p grows (the true order holds), and the faults (0: no decision timed out).

``--experiment NAME`` (repeatable) adds arms that rate or seat otherwise than the arena does,
without changing the arena's modules (:data:`EXPERIMENTS`). ``openskill`` rates as the arena
did before (openskill's Plackett-Luce over places, house Normal fixed at μ 25, σ 1:
:func:`rate_openskill`), the matchmaker with duplicate deals and random tables with plain
deals; the openskill experiments below all rate so, each changing one thing: ``table``,
``table4`` and ``cards`` rate a duplicate table otherwise (:data:`RATINGS`); ``drift`` rates
with openskill's default ``tau`` (25/300) instead of 0; ``beta`` with openskill's ``beta`` (a
match's performance noise) doubled and quadrupled; ``drawn`` seats tables as the arena's
matchmaker did before it sought doubt (:func:`drawn_tables`), beside the matchmaker and
random tables; ``spread`` seats tables with :func:`spread_tables`; ``floating`` moves house
Normal like every participant; ``openskill_margin`` gives openskill each seat's points of the
match with its ``margin`` at 20, 50, 100 and 200 points; ``openskill_best`` runs margins 100
and 200 with the matchmaker and duplicate deals and with random tables and plain deals;
``openskill_models`` rates with openskill's other models (:data:`OPENSKILL_MODELS`).
``margins`` runs the arena's matchmaker with duplicate deals and random tables with plain
deals beside the matchmaker with house Normal held fixed (σ 0); ``joint`` the arena's rating
with random tables, the matchmaker, the drawn tables, and the matchmaker with each duplicate
table rated together (:func:`rate_margins_table`); ``covariance`` rates by margins keeping
the full covariance, house Normal fixed, and the cards' luck of a duplicate table estimated
(:class:`Covariance`, benchmarks/ladder_models.py); ``gain`` rates so and seats tables by what
the model expects to learn of the shown order (:class:`GainTables`, benchmarks/ladder_gain.py:
``gain`` chooses who plays and meets whom, ``swaps`` only whom), beside random tables and the
arena's matchmaker; ``closest`` runs the arms that came closest to the goal (points and
rooted hands, random tables with plain deals and the matchmaker with duplicate deals, and
random tables with duplicate deals); ``seating`` runs the
arena's four arms with the matchmaker before it kept whom it passed over (a round's players by
need alone: :func:`need_tables`), for ladders with more bots than a round's seats
(``--size 24 --tables 4``); ``variance`` seats tables by another criterion (the
pairs' log variances weighted by their doubt), beside random tables; ``scales`` rates so with
each hand's points clipped, square-rooted or replaced by places (:data:`SCALES`), random
tables with plain deals and the matchmaker with duplicate deals.
``--noise`` measures each of :data:`SCALES`' noise and the share of it duplicate deals take
away.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from itertools import combinations, count
from typing import Protocol, cast

from openskill.models import (
    BradleyTerryFull,
    BradleyTerryPart,
    PlackettLuce,
    ThurstoneMostellerFull,
    ThurstoneMostellerPart,
)

from arena.match_loop import InProcessSeat, play_match
from arena.matchmaker import (
    SEATS,
    Member,
    Table,
    choose_tables,
    passed_over_after,
    random_tables,
    take_seats,
)
from arena.ratings import ANCHOR, counted, margin_update, rate, starting_rating
from arena.records import Rating
from benchmarks.ladder_gain import GainTables
from benchmarks.ladder_models import SCALES, Covariance, kalman
from bot_sdk.bot import Bot, CardAnswer, CardsAnswer
from bot_sdk.house import NormalBot
from referee import Game, HandResult, Observation, Outcome, Rules
from replays.deals import DealSource, deal_seed
from replays.log import MatchLog, SeatInfo, TimeControl

HANDS = 4
"""Hands per ladder match (the arena's default)."""
RULES = Rules(fixed_hands=HANDS)
ROTATIONS = 4
TARGET = 0.9
GOAL = 0.5
"""The goal: the matchmaker with duplicate deals needs at most this share of the matches that
random tables with plain deals need."""
TIME_CONTROL = TimeControl(decision_ms=10_000, bank_ms=600_000, fault_limit=5)
"""Generous, so that a busy machine never turns a slow decision into a fault."""
VERSION = "1"
SIZE = 16
FULL_MATCHES = 1000
FULL_SEEDS = 5
QUICK_MATCHES = 300
QUICK_SEEDS = 1
CHECKPOINTS = (100, 250, 500, 1000, 2000, 4000)
"""Where the table shows τ (those under the run's length, and its end)."""
NEVER = 1 << 62


class NoisyBot(Bot):
    """House Normal that plays a random legal card with probability ``p``."""

    def __init__(self, p: float, seed: str) -> None:
        self.inner = NormalBot(seed)
        self.p = p
        self.name = f"normal-p{p:.2f}"
        self._rng = random.Random(seed)

    def play(self, obs: Observation) -> CardAnswer:
        if self._rng.random() < self.p:
            return self._rng.choice(list(obs.legal))
        return self.inner.play(obs)

    def expose(self, obs: Observation) -> CardsAnswer:
        return self.inner.expose(obs)

    def pass_cards(self, obs: Observation) -> CardsAnswer:
        return self.inner.pass_cards(obs)

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.inner.hand_end(result, observation)

    def match_end(self, outcome: Outcome) -> None:
        self.inner.match_end(outcome)


@dataclass(frozen=True)
class Entrant:
    """A participant of the simulated ladder and its randomness (its true place follows)."""

    bot_id: str
    p: float

    @property
    def house(self) -> bool:
        return self.bot_id == ANCHOR

    def bot(self, seed: str) -> Bot:
        return NormalBot(seed) if self.house else NoisyBot(self.p, seed)

    def seat(self, seat: int, seed: str) -> InProcessSeat:
        bot = self.bot(f"{seed}:{seat}")
        kind = "house" if self.house else "http"
        return InProcessSeat(bot, SeatInfo(seat, self.bot_id, bot.name, VERSION, kind=kind))


def field(size: int) -> list[Entrant]:
    """House Normal and ``size − 1`` registered bots, p = k / (size − 1): strongest first."""
    probabilities = [k / (size - 1) for k in range(size)]
    return [Entrant(ANCHOR, 0.0)] + [
        Entrant(f"bot_p{round(100 * p):02d}", p) for p in probabilities[1:]
    ]


class Chooser(Protocol):
    def __call__(
        self, members: Sequence[Member], *, tables: int, rng: random.Random
    ) -> list[Table]: ...


def drawn_host(pool: dict[str, Member]) -> Member | None:
    """The previous matchmaker's host: the registered member with room of the largest σ,
    then the fewest rated matches."""
    hosts = [m for m in pool.values() if not m.house and m.has_room]
    return min(hosts, key=lambda m: (-m.sigma, m.matches, m.bot_id), default=None)


def drawn_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """An experiment, the arena's matchmaker before it sought the order's doubt: each table
    around :func:`drawn_host`, its three opponents the members with room whose μ is closest
    to one point drawn from the host's ``N(μ, σ)``."""
    return _drawn(members, tables, rng, point_each=False)


def spread_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """An experiment: :func:`drawn_tables` with a point drawn from the host's ``N(μ, σ)`` for
    each of its three opponents, rather than one point for all three: an uncertain host meets
    its whole range at every table, a well-known one still meets its own strength."""
    return _drawn(members, tables, rng, point_each=True)


def _drawn(
    members: Sequence[Member], tables: int, rng: random.Random, *, point_each: bool
) -> list[Table]:
    pool = {m.bot_id: m for m in members}
    chosen: list[Table] = []
    while len(chosen) < tables:
        host = drawn_host(pool)
        if host is None:
            break
        seated = [host.bot_id]
        target = rng.gauss(host.mu, host.sigma)
        for seat in range(SEATS - 1):
            if point_each and seat:
                target = rng.gauss(host.mu, host.sigma)
            free = [m for m in pool.values() if m.has_room and m.bot_id not in seated]
            if not free:
                break
            seated.append(min(free, key=lambda m: (abs(m.mu - target), m.bot_id)).bot_id)
        if len(seated) < SEATS:
            break
        rng.shuffle(seated)
        chosen.append(take_seats(pool, seated))
    return chosen


def need_tables(members: Sequence[Member], *, tables: int, rng: random.Random) -> list[Table]:
    """An experiment, the arena's matchmaker before it kept whom it passed over: a round's
    players chosen by need alone, so a member whose place looks sure may wait for long."""
    fresh = [replace(m, passed_over=0) for m in members]
    return choose_tables(fresh, tables=tables, rng=rng)


CHOOSERS: dict[str, Chooser] = {
    "matchmaker": choose_tables,
    "need": need_tables,
    "random": random_tables,
    "drawn": drawn_tables,
    "spread": spread_tables,
}


@dataclass(frozen=True)
class Arm:
    """How a ladder is run: who sits together, which deals, how a table is rated (the arena's
    point margins, or openskill over places as the arena rated before: an experiment), and
    whether openskill lets σ drift up between matches (its default ``tau``) or not."""

    tables: str
    duplicate: bool
    rating: str = "match"
    """``match``: each match on its own (the arena); ``table``, ``table4`` or ``cards``: see
    :data:`RATINGS`."""
    drift: bool = False
    beta: float = 1.0
    """openskill's ``beta`` (a match's performance noise) as a multiple of its default."""
    openskill: bool = False
    """Rated by openskill's Plackett-Luce over places (:func:`rate_openskill`, the arena's
    ratings before) instead of the arena's point margins (:func:`arena.ratings.rate`)."""
    anchored: bool = False
    """House Normal's rating held fixed (at μ 25, σ 1 with openskill, as the arena did; at σ 0
    with margins) or moved like every participant's (the arena: the scale's zero is then
    wherever its μ is, and the order does not depend on it)."""
    scale: str = "points"
    """What the ``covariance`` rating rates each hand's points as (:data:`SCALES`)."""
    model: str = "PlackettLuce"
    """The openskill model each match is rated with (:data:`OPENSKILL_MODELS`)."""
    margin: float = 0.0
    """openskill's ``margin``, in points: when not 0, each match is rated by its seats' points
    (``scores``) instead of its places, and openskill adjusts the μ it compares by the points'
    differences beyond it (:func:`rate_openskill`)."""

    @property
    def name(self) -> str:
        deals = "duplicate deals" if self.duplicate else "plain deals"
        model = ", σ drift (openskill's default tau)" if self.drift else ""
        noise = f", beta x{self.beta:g}" if self.beta != 1.0 else ""
        margins = ", openskill over places" if self.openskill else ""
        anchor = ", house Normal fixed" if self.anchored and not self.openskill else ""
        anchor += ", house Normal rated" if self.openskill and not self.anchored else ""
        measure = f", hands {self.scale}" if self.scale != "points" else ""
        kind = f", {self.model}" if self.model != "PlackettLuce" else ""
        kind += f", openskill margin {self.margin:g}" if self.margin else ""
        return (
            f"{self.tables}, {deals}{RATINGS[self.rating]}{model}{noise}{margins}{anchor}"
            f"{measure}{kind}"
        )


ARMS = (
    Arm("matchmaker", duplicate=True),
    Arm("matchmaker", duplicate=False),
    Arm("random", duplicate=True),
    Arm("random", duplicate=False),
)
OPENSKILL = [replace(arm, openskill=True, anchored=True) for arm in ARMS]
"""The arena's four arms rated as the arena rated before: openskill over places, house Normal
fixed at 25."""
OPENSKILL_MODELS = {
    model.__name__: model
    for model in (
        PlackettLuce,
        ThurstoneMostellerFull,
        BradleyTerryFull,
        ThurstoneMostellerPart,
        BradleyTerryPart,
    )
}
"""openskill's models, the arena's first: Plackett-Luce over the whole order; Thurstone-Mosteller
(a normal performance) and Bradley-Terry (a logistic one) over every pair (``Full``) or each
neighbouring pair of the order (``Part``)."""
RATINGS = {
    "match": "",
    "table": ", table rated by total points",
    "table4": ", table rated 4 times by total points",
    "cards": ", rated by the same cards",
    "joint": ", table rated together",
    "covariance": ", full covariance",
}
"""How a duplicate table's 4 matches are rated: each on its own, by its places (the arena);
the table once, by each participant's total points over the 4 (:func:`as_one_match`), or
that same result 4 times, as if it were 4 matches; or 4 times, once per seat's cards, by the
points each participant scored holding them (:func:`by_cards`); with point margins, the table
once by each participant's points over the 4 (:func:`rate_margins_table`), or each match as it
comes with the full covariance (:class:`Covariance`, plain tables too)."""
EXPERIMENTS = {
    "openskill": [OPENSKILL[0], OPENSKILL[3]],
    "table": [Arm("matchmaker", duplicate=True, rating="table", openskill=True, anchored=True)],
    "cards": [Arm("matchmaker", duplicate=True, rating="cards", openskill=True, anchored=True)],
    "table4": [Arm("matchmaker", duplicate=True, rating="table4", openskill=True, anchored=True)],
    "drift": [
        replace(OPENSKILL[0], drift=True),
        replace(OPENSKILL[3], drift=True),
    ],
    "spread": [Arm("spread", duplicate=True, openskill=True, anchored=True)],
    "beta": [
        replace(OPENSKILL[0], beta=2.0),
        replace(OPENSKILL[3], beta=2.0),
        replace(OPENSKILL[0], beta=4.0),
        replace(OPENSKILL[3], beta=4.0),
    ],
    "margins": [ARMS[0], ARMS[3], Arm("matchmaker", duplicate=True, anchored=True)],
    "floating": [replace(OPENSKILL[0], anchored=False)],
    "openskill_margin": [OPENSKILL[0]]
    + [replace(OPENSKILL[0], margin=margin) for margin in (20, 50, 100, 200)],
    "openskill_best": [OPENSKILL[0], OPENSKILL[3]]
    + [
        replace(OPENSKILL[0] if tables == "matchmaker" else OPENSKILL[3], margin=margin)
        for margin in (100, 200)
        for tables in ("matchmaker", "random")
    ],
    "openskill_models": [OPENSKILL[0]]
    + [replace(OPENSKILL[0], model=model) for model in list(OPENSKILL_MODELS)[1:]],
    "drawn": [
        OPENSKILL[0],
        OPENSKILL[3],
        Arm("drawn", duplicate=True, openskill=True, anchored=True),
    ],
    "joint": [
        Arm("random", duplicate=False),
        Arm("matchmaker", duplicate=True),
        Arm("drawn", duplicate=True),
        Arm("matchmaker", duplicate=True, rating="joint"),
    ],
    "covariance": [
        Arm("random", duplicate=False, rating="covariance", anchored=True),
        Arm("matchmaker", duplicate=True, rating="covariance", anchored=True),
        Arm("drawn", duplicate=True, rating="covariance", anchored=True),
        Arm("random", duplicate=True, rating="covariance", anchored=True),
    ],
    "gain": [
        Arm("random", duplicate=False, rating="covariance", anchored=True),
        Arm("matchmaker", duplicate=True, rating="covariance", anchored=True),
        Arm("gain", duplicate=True, rating="covariance", anchored=True),
        Arm("swaps", duplicate=True, rating="covariance", anchored=True),
    ],
    "variance": [
        Arm("random", duplicate=False, rating="covariance", anchored=True),
        Arm("variance", duplicate=True, rating="covariance", anchored=True),
    ],
    "closest": [
        Arm(tables, duplicate=tables != "random", rating="covariance", anchored=True, scale=name)
        for name in ("points", "rooted")
        for tables in ("random", "matchmaker")
    ]
    + [Arm("random", duplicate=True, rating="covariance", anchored=True)],
    "seating": [ARMS[0], ARMS[3], Arm("need", duplicate=True), ARMS[2]],
    "scales": [
        Arm(tables, duplicate=tables != "random", rating="covariance", anchored=True, scale=name)
        for name in SCALES
        if name != "points"
        for tables in ("random", "matchmaker")
    ],
}
"""Changes to the arena tried here, not in the arena: the arena's ratings before (openskill over
places, house Normal fixed at 25) and, with them, a duplicate table rated by total points
or by the same cards (:data:`RATINGS`); openskill's default ``tau``, with which a bot's σ
settles where each match's added ``tau²`` cancels what the match taught instead of shrinking
with its matches (the arena's ratings before they were made drift-free); the arena's
matchmaker before it sought doubt (:func:`drawn_tables`), before it kept whom it passed
over (:func:`need_tables`), and one that draws a point for each
opponent (:func:`spread_tables`); openskill's ``beta`` 2 and 4 times its default, a match
taken as noisier evidence, so σ shrinks more slowly; the arena's ratings by point margins
with house Normal held fixed, a duplicate table rated
together (:func:`rate_margins_table`) or with the full covariance (:class:`Covariance`), and
with it tables chosen by information (:class:`GainTables`) or hands measured otherwise
(:data:`SCALES`); the arena's ratings with house Normal moved like everyone
(:func:`rate_openskill`); and openskill given each match's points with its ``margin``, or its
other models (:data:`OPENSKILL_MODELS`)."""


OPENSKILL_MODEL = PlackettLuce(tau=0.0)
"""The arena's ratings before: Plackett-Luce without drift."""


def openskill_model(arm: Arm) -> PlackettLuce:
    """The openskill model an ``openskill`` arm rates with."""
    if arm.drift:
        return PlackettLuce()
    if arm.beta != 1.0 or arm.margin or arm.model != "PlackettLuce":
        beta = OPENSKILL_MODEL.beta * arm.beta
        model = OPENSKILL_MODELS[arm.model](tau=0.0, beta=beta, margin=arm.margin)
        return cast(PlackettLuce, model)  # the same rating() and rate() interface
    return OPENSKILL_MODEL


@dataclass(frozen=True)
class Job:
    arm: Arm
    seed: int
    size: int
    matches: int
    tables: int
    """The most tables a round seats (the arena's ``GONGZHU_LADDER_TABLES``)."""


@dataclass(frozen=True)
class RunResult:
    job: Job
    taus: tuple[tuple[int, float], ...]
    """(matches played so far, τ of the shown order) after every rating."""
    final_mu: tuple[float, ...]
    """Each entrant's μ at the end less house Normal's, in true order."""
    final_sigma: tuple[float, ...]
    """Each registered bot's σ at the end."""
    faults: int
    seconds: float
    passed_over: int = 0
    """The most rounds in a row a registered bot with room was not seated."""

    def first(self) -> int | None:
        """The matches played when τ first reached the target."""
        return next((n for n, tau in self.taus if tau >= TARGET), None)

    def settled(self) -> int | None:
        """The matches after which τ never fell below the target again, up to the end."""
        if not self.taus or self.taus[-1][1] < TARGET:
            return None
        below = [i for i, (_, tau) in enumerate(self.taus) if tau < TARGET]
        return self.taus[below[-1] + 1 if below else 0][0]

    def held(self) -> bool:
        return self.first() is not None and self.first() == self.settled()


def kendall_tau(scores: Sequence[float]) -> float:
    """τ-a of ``scores`` (given in true order, best first) against that order: the share of
    pairs shown the right way round less the share shown the wrong way; ties count zero."""
    pairs = list(combinations(scores, 2))
    return sum((a > b) - (a < b) for a, b in pairs) / len(pairs)


def members(
    entrants: Sequence[Entrant], board: dict[str, Rating], passed: dict[str, int]
) -> list[Member]:
    """The matchmaker's view at the start of a round: every registered bot has room for one;
    ``passed``: the rounds in a row each was passed over."""
    return [
        Member(
            e.bot_id,
            board[e.bot_id].mu,
            board[e.bot_id].sigma,
            board[e.bot_id].matches,
            room=0 if e.house else 1,
            house=e.house,
            passed_over=passed.get(e.bot_id, 0),
        )
        for e in entrants
    ]


def play_table(
    table: Table, entrants: dict[str, Entrant], secret: bytes, label: str, *, duplicate: bool
) -> list[MatchLog]:
    """The table's 4 matches, everyone one seat on each time: one deal sequence (``label``)
    for all four when ``duplicate``, else one per rotation."""
    logs = []
    for rotation in range(ROTATIONS):
        seats = table[rotation:] + table[:rotation]
        deal_label = label if duplicate else f"{label}:r{rotation + 1}"
        seed = deal_seed(secret, deal_label)
        match_id = f"{label}-r{rotation + 1}"
        players = [entrants[b].seat(s, f"{seed}:{rotation}") for s, b in enumerate(seats)]
        logs.append(
            play_match(
                Game(RULES, seed=seed),
                players,
                match_id=match_id,
                deals=DealSource.committed(secret, deal_label),
                time_control=TIME_CONTROL,
            )
        )
    return logs


def rate_match(board: dict[str, Rating], log: MatchLog, arm: Arm) -> None:
    before = [board[seat.bot_id] for seat in log.seats]
    if arm.openskill:
        rated = rate_openskill(log, before, openskill_model(arm), anchored=arm.anchored)
    else:
        rated = rate(log, before)  # house Normal held fixed: its σ is 0, so it never moves
    for after in rated:
        board[after.bot_id] = after


def rate_openskill(
    log: MatchLog, before: Sequence[Rating], model: PlackettLuce, *, anchored: bool
) -> list[Rating]:
    """An experiment, the arena's ratings before: openskill over the match's places, house
    Normal held fixed (``anchored``) or moved like everyone; or, where the model has a
    ``margin``, given the seats' points of the match (``scores``: the most first, as the
    places are)."""
    teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    if model.margin:
        after = model.rate(teams, scores=[float(t) for t in log.outcome.totals])
    else:
        after = model.rate(teams, ranks=[float(p) for p in log.places])
    return [
        counted(log, seat, old)
        if anchored and old.bot_id == ANCHOR
        else replace(counted(log, seat, old), mu=team[0].mu, sigma=team[0].sigma)
        for seat, (old, team) in enumerate(zip(before, after, strict=True))
    ]


MARGIN_DUPLICATE_NOISE = 124.0
"""A seat's own noise in points per hand in a participant's total over a duplicate table's
four rotations: the spread of that total less the table's mean, per hand, is 98 to 106 at
tables of four equal bots (``--noise 200``; 107 in a first measurement of 60 tables), where
plain deals give 119 to 124; 107 × √(4/3), as for :data:`arena.ratings.NOISE`."""


def rate_margins_table(board: dict[str, Rating], logs: Sequence[MatchLog]) -> None:
    """An experiment: a duplicate table's rotations rated together, by the arena's point
    margins (:func:`arena.ratings.margin_update`). Every
    participant held every seat's cards once, so its points per hand over all the rotations
    compare it with the others without the cards' luck: one :func:`margin_update` of those
    totals, with the smaller noise of :data:`MARGIN_DUPLICATE_NOISE` over all the table's
    hands; each match is still counted in its participants' figures."""
    for log in logs:
        for seat, info in enumerate(log.seats):
            board[info.bot_id] = counted(log, seat, board[info.bot_id])
    players = [info.bot_id for info in logs[0].seats]
    hands = sum(log.outcome.hands_played for log in logs)  # every participant played them all
    totals = dict.fromkeys(players, 0)
    for log in logs:
        for seat, info in enumerate(log.seats):
            totals[info.bot_id] += log.outcome.totals[seat]
    before = [board[b] for b in players]
    means, variances = margin_update(
        [r.mu for r in before],
        [r.sigma**2 for r in before],
        [totals[b] / hands for b in players],
        MARGIN_DUPLICATE_NOISE**2 / hands,
    )
    for b, mu, variance in zip(players, means, variances, strict=True):
        board[b] = replace(board[b], mu=mu, sigma=variance**0.5)


def places_by(points: Sequence[int]) -> tuple[int, int, int, int]:
    """Places by points, most first; equal points share a place."""
    a, b, c, d = (1 + sum(other > mine for other in points) for mine in points)
    return (a, b, c, d)


def as_one_match(logs: Sequence[MatchLog]) -> MatchLog:
    """The last rotation's log placed by every participant's total points over all the
    table's rotations: the table rated as one match (an experiment)."""
    totals: dict[str, int] = {}
    for log in logs:
        for seat, info in enumerate(log.seats):
            totals[info.bot_id] = totals.get(info.bot_id, 0) + log.outcome.totals[seat]
    last = logs[-1]
    return replace(last, places=places_by([totals[info.bot_id] for info in last.seats]))


def by_cards(logs: Sequence[MatchLog]) -> list[MatchLog]:
    """Each rotation's log placed by the points its participants scored holding one seat's
    cards (rotation k: seat k's), each in the rotation where they held them: four comparisons
    of the same cards, without their luck (an experiment, duplicate deals only)."""
    rated = []
    for k, log in enumerate(logs):
        held = {other.seats[k].bot_id: other.outcome.totals[k] for other in logs}
        rated.append(replace(log, places=places_by([held[info.bot_id] for info in log.seats])))
    return rated


def to_rate(logs: Sequence[MatchLog], rating: str) -> list[tuple[MatchLog, int]]:
    """What a table's logs are rated as under ``rating``, each with the matches it stands for."""
    if rating == "table":
        return [(as_one_match(logs), len(logs))]
    if rating == "table4":
        return [(as_one_match(logs), 1)] * len(logs)
    if rating == "cards":
        return [(log, 1) for log in by_cards(logs)]
    return [(log, 1) for log in logs]


def chooser(arm: Arm, covariance: Covariance | None) -> Chooser:
    """How the arm seats a round; ``gain``, ``swaps`` and ``variance`` choose by the covariance
    model's information (:class:`GainTables`: who plays and meets whom, or whom only; the
    expected misordered pairs, or the pairs' variances weighted by doubt)."""
    if arm.tables not in ("gain", "swaps", "variance"):
        return CHOOSERS[arm.tables]
    if covariance is None:
        raise ValueError(f"{arm.tables} tables need the covariance rating")
    return GainTables(
        covariance,
        HANDS,
        duplicate=arm.duplicate,
        seats=arm.tables != "swaps",
        variance=arm.tables == "variance",
    )


def starting_board(arm: Arm, participants: Sequence[str]) -> dict[str, Rating]:
    """Everyone's rating before the first match: where the arena starts a newcomer (all at
    house Normal's level, which is then 0), house Normal at σ 0 when held fixed; or, rated by
    openskill, its default (μ 25, σ 8.33), house Normal at μ 25, σ 1 when held fixed."""
    if arm.openskill:
        model = OPENSKILL_MODEL
        fixed = OPENSKILL_ANCHOR if arm.anchored else (model.mu, model.sigma)
        return {
            b: Rating(b, *(fixed if b == ANCHOR else (model.mu, model.sigma)), version=VERSION)
            for b in participants
        }
    board = {b: starting_rating(b, VERSION, None) for b in participants}
    if arm.anchored:
        board[ANCHOR] = replace(board[ANCHOR], sigma=0.0)
    return board


OPENSKILL_ANCHOR = (25.0, 1.0)
"""House Normal's fixed rating when the arena rated by openskill."""


def seatings(
    order: Sequence[Entrant],
    board: dict[str, Rating],
    choose: Chooser,
    *,
    tables: int,
    rng: random.Random,
) -> Iterator[tuple[str, Table, dict[str, int]]]:
    """The simulated ladder's tables, round after round, for ever: each with its deal label
    and the registered bots its round passed over (with the rounds in a row). A round's
    members are read from ``board`` when it starts, after the tables before it were rated."""
    passed: dict[str, int] = {}
    for round_no in count(1):
        seen = members(order, board, passed)
        seated = choose(seen, tables=tables, rng=rng)
        passed = passed_over_after(seen, seated)
        for t, table in enumerate(seated):
            yield f"r{round_no}t{t + 1}", table, passed


def run(job: Job) -> RunResult:
    """One simulated ladder, round after round, until ``job.matches`` matches are rated."""
    start = time.perf_counter()
    order = field(job.size)
    entrants = {e.bot_id: e for e in order}
    board = starting_board(job.arm, [e.bot_id for e in order])
    measure = SCALES[job.arm.scale]
    rng = random.Random(f"tables:{job.seed}")
    secret = hashlib.sha256(f"ladder:{job.seed}".encode()).digest()
    covariance = Covariance(list(board), measure) if job.arm.rating == "covariance" else None
    choose = chooser(job.arm, covariance)
    taus: list[tuple[int, float]] = []
    played = faults = longest = 0
    for label, table, passed in seatings(order, board, choose, tables=job.tables, rng=rng):
        longest = max(longest, *passed.values(), 0)
        logs = play_table(table, entrants, secret, label, duplicate=job.arm.duplicate)
        faults += sum(sum(log.faults) for log in logs)
        if covariance is not None:
            for log in covariance.rate_table(logs, duplicate=job.arm.duplicate):
                for seat, info in enumerate(log.seats):
                    board[info.bot_id] = counted(log, seat, board[info.bot_id])
                for b in board:
                    mu, sigma = covariance.rating(b)
                    board[b] = replace(board[b], mu=mu, sigma=sigma)
                played += 1
                taus.append((played, kendall_tau([board[e.bot_id].conservative for e in order])))
        elif job.arm.rating == "joint":
            rate_margins_table(board, logs)
            played += len(logs)
            taus.append((played, kendall_tau([board[e.bot_id].conservative for e in order])))
        else:
            for log, matches in to_rate(logs, job.arm.rating):
                rate_match(board, log, job.arm)
                played += matches
                taus.append((played, kendall_tau([board[e.bot_id].conservative for e in order])))
        if played >= job.matches:
            break
    level = board[ANCHOR].mu  # every μ relative to house Normal's, as the arena shows it
    return RunResult(
        job,
        tuple(taus),
        tuple(board[e.bot_id].mu - level for e in order),
        tuple(board[e.bot_id].sigma for e in order if not e.house),
        faults,
        time.perf_counter() - start,
        longest,
    )


def median_range(values: Sequence[int | None], budget: int) -> str:
    """``median (low–high)``; a run that never got there counts as more than ``budget``."""
    ranked = sorted(budget + 1 if v is None else v for v in values)

    def shown(value: int) -> str:
        return f"> {budget:,}" if value > budget else f"{value:,}"

    return f"{shown(statistics.median_low(ranked))} ({shown(ranked[0])}–{shown(ranked[-1])})"


def tau_at(result: RunResult, matches: int) -> float:
    """τ after the last rating that came within ``matches`` matches."""
    return [tau for n, tau in result.taus if n <= matches][-1]


def checkpoints(budget: int) -> list[int]:
    return [n for n in CHECKPOINTS if n < budget] + [budget]


def table_rows(results: Sequence[RunResult], arms: Sequence[Arm], budget: int) -> list[str]:
    """The Markdown table: a row per arm."""
    marks = checkpoints(budget)
    rows = [
        f"| arm | runs | matches to τ ≥ {TARGET} first: median (range) | held after | "
        f"matches to τ ≥ {TARGET} for good: median (range) | "
        + " | ".join(f"τ at {n:,}" for n in marks)
        + " | σ at the end | longest passed over |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(marks) + "---:|---:|",
    ]
    for arm in arms:
        mine = [r for r in results if r.job.arm == arm]
        taus = [f"{statistics.median(tau_at(r, n) for r in mine):.3f}" for n in marks]
        sigma = statistics.fmean(s for r in mine for s in r.final_sigma)
        rows.append(
            f"| {arm.name} | {len(mine)} | {median_range([r.first() for r in mine], budget)} | "
            f"{sum(r.held() for r in mine)} of {len(mine)} | "
            f"{median_range([r.settled() for r in mine], budget)} | "
            + " | ".join(taus)
            + f" | {sigma:.2f} | {max(r.passed_over for r in mine)} |"
        )
    return rows


def median_of(results: Sequence[RunResult], arm: Arm, measure: str) -> int | None:
    """The median run's matches to τ ≥ target (``first`` or ``settled``: for good); None when
    that run never got there."""
    ranked = sorted(getattr(r, measure)() or NEVER for r in results if r.job.arm == arm)
    middle = statistics.median_low(ranked)
    return None if middle == NEVER else middle


MEASURES = {"first": "first reaches", "settled": "holds for good"}


def baseline_of(arm: Arm) -> Arm:
    """Random tables with plain deals, each match rated on its own by the arm's model."""
    rating = arm.rating if arm.rating == "covariance" else "match"
    return replace(arm, tables="random", duplicate=False, rating=rating)


def goal_lines(results: Sequence[RunResult], arms: Sequence[Arm], budget: int) -> list[str]:
    """Each arm of chosen tables with duplicate deals: its median matches to τ ≥ target over
    those of random tables with plain deals rated by the same model (:func:`baseline_of`; the
    arena's, by margins or before by openskill as the arm rates, when that arm is not run;
    none when neither is), on both measures (the goal is on
    the first arm)."""
    lines = []
    for arm in arms:
        if arm.tables == "random" or not arm.duplicate:
            continue
        fallback = OPENSKILL[3] if arm.openskill else ARMS[3]  # the arena's, now or before
        baseline = baseline_of(arm) if baseline_of(arm) in arms else fallback
        if baseline not in arms:
            lines.append(f"{arm.name}: no random tables with plain deals ran to compare with")
            continue
        for measure, said in MEASURES.items():
            ours, theirs = median_of(results, arm, measure), median_of(results, baseline, measure)
            head = f"{arm.name} ÷ {baseline.name}, {said}"
            if ours is None or theirs is None:
                lines.append(f"{head}: not measured, a median run did not get there in {budget:,}")
                continue
            ratio = ours / theirs
            met = "met" if ratio <= GOAL else "not met"
            verdict = f", goal ≤ {GOAL}: {met}" if arm == ARMS[0] else ""
            lines.append(f"{head}: {ours:,} ÷ {theirs:,} = {ratio:.2f}{verdict}")
    return lines


def order_lines(results: Sequence[RunResult], size: int) -> list[str]:
    """Every entrant's final μ averaged over the runs of the arena's own four arms (the
    experiments' ratings are left out), and whether it falls as p grows."""
    arena = [r for r in results if r.job.arm in ARMS]
    if not arena:
        return ["Final μ: none of the first four arms ran"]
    order = field(size)
    means = [statistics.fmean(r.final_mu[i] for r in arena) for i in range(size)]
    shown = ", ".join(f"{e.bot_id} {mu:.2f}" for e, mu in zip(order, means, strict=True))
    wrong = [
        f"{order[i].bot_id} ≤ {order[i + 1].bot_id}"
        for i in range(size - 1)
        if means[i] <= means[i + 1]
    ]
    verdict = "yes" if not wrong else "no: " + ", ".join(wrong)
    return [
        f"Final μ, mean of the {len(arena)} runs of the first four arms: {shown}",
        f"μ falls as p grows: {verdict}",
    ]


NOISE_P = (0.2, 0.6)
"""The bots' random-card probabilities at which ``--noise`` measures."""


def table_spreads(p: float, tables: int, *, duplicate: bool) -> dict[str, float]:
    """For each of :data:`SCALES`, the spread (standard deviation) of a participant's measure
    summed over a table's rotations less the table's mean, per hand (÷ √hands), at tables of
    four bots all of random-card probability ``p``: pure noise, as the four are equally
    strong."""
    entrants = {f"bot_{i}": Entrant(f"bot_{i}", p) for i in range(SEATS)}
    table = ("bot_0", "bot_1", "bot_2", "bot_3")
    spread: dict[str, list[float]] = {name: [] for name in SCALES}
    for t in range(tables):
        secret = hashlib.sha256(f"noise:{p}:{t}".encode()).digest()
        logs = play_table(table, entrants, secret, f"n{t}", duplicate=duplicate)
        for name, measure in SCALES.items():
            totals = dict.fromkeys(table, 0.0)
            for log in logs:
                for info, value in zip(log.seats, measure.observed(log), strict=True):
                    totals[info.bot_id] += value * len(log.hands)
            mean = sum(totals.values()) / SEATS
            spread[name] += [(v - mean) / math.sqrt(ROTATIONS * HANDS) for v in totals.values()]
    return {name: statistics.pstdev(values) for name, values in spread.items()}


def noise_lines(tables: int) -> list[str]:
    """How much of a table's noise duplicate deals take away, at each of :data:`NOISE_P`, in
    each of :data:`SCALES`, and the seat's own noise per hand and cards' share that implies
    (what :class:`Scale` takes)."""
    lines = [
        f"A participant's measure over a table less the table's mean, per hand, at {tables} "
        "tables of four equal bots each way:",
        "| p | measure | plain deals | duplicate deals | duplicate ÷ plain, variance "
        "| a seat's noise per hand | cards' share |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for p in NOISE_P:
        plain = table_spreads(p, tables, duplicate=False)
        duplicate = table_spreads(p, tables, duplicate=True)
        for name in SCALES:
            ratio = (duplicate[name] / plain[name]) ** 2
            lines.append(
                f"| {p:g} | {name} | {plain[name]:.3g} | {duplicate[name]:.3g} | {ratio:.2f} "
                f"| {plain[name] * math.sqrt(SEATS / (SEATS - 1)):.3g} | {1 - ratio:.2f} |"
            )
    return lines


def update_cost_lines(sizes: Sequence[int]) -> list[str]:
    """What keeping the full covariance costs at each ladder size: its storage (the upper
    triangle in 8-byte floats) and the time of one match's rating at a duplicate table
    (:func:`kalman` over the strengths and the table's 4 seats' luck, as
    :meth:`Covariance.rate_table` does for each rotation), the median of a few."""
    lines = [
        "| bots | covariance stored (kB) | ms per match rated (pure Python) |",
        "|---:|---:|---:|",
    ]
    for size in sizes:
        cov = [[float(i == j) for j in range(size + SEATS)] for i in range(size + SEATS)]
        mu = [0.0] * (size + SEATS)
        times = []
        for k in range(3):
            seated = [(k * 7 + 3 * s) % size for s in range(SEATS)]
            rows = [
                [float(j in (b, size + s)) for j in range(size + SEATS)]
                for s, b in enumerate(seated)
            ]
            h = [[a - b for a, b in zip(row, rows[-1], strict=True)] for row in rows[:-1]]
            start = time.perf_counter()
            kalman(mu, cov, h, [1.0, 2.0, 3.0], 1.0)
            times.append(time.perf_counter() - start)
        stored = size * (size + 1) // 2 * 8
        cost = 1000 * statistics.median(times)
        lines.append(f"| {size:,} | {stored / 1e3:,.0f} | {cost:,.1f} |")
    return lines


def run_all(jobs: Sequence[Job], workers: int) -> list[RunResult]:
    """Every job in ``workers`` processes, a line printed as each ends."""
    results = []
    with ProcessPoolExecutor(workers) as pool:
        for future in as_completed([pool.submit(run, job) for job in jobs]):
            result = future.result()
            results.append(result)
            print(run_line(result), flush=True)
    return results


def run_line(r: RunResult) -> str:
    matches = r.taus[-1][0]
    return (
        f"{r.job.arm.name}, seed {r.job.seed}: τ ≥ {TARGET} first at {r.first()}, for good at "
        f"{r.settled()}, τ at the end {r.taus[-1][1]:.3f}; {matches:,} matches in "
        f"{r.seconds:.0f} s ({1000 * r.seconds / matches / HANDS:.1f} ms per hand)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches and seeds")
    parser.add_argument("--size", type=int, default=SIZE, help="bots on the ladder")
    parser.add_argument("--matches", type=int, help="rated matches per run")
    parser.add_argument("--seeds", type=int, help="independent runs per arm")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=1,
        help="the first run's seed (the runs are seeded from it on: fresh seeds for a check)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--tables",
        type=int,
        help="the most tables a round seats (default: as many as the members' room allows)",
    )
    parser.add_argument(
        "--experiment",
        choices=EXPERIMENTS,
        action="append",
        default=[],
        help="add an experiment's arms (repeatable)",
    )
    parser.add_argument(
        "--noise",
        type=int,
        metavar="TABLES",
        help="only measure how much duplicate deals take from a table's noise, at TABLES tables",
    )
    parser.add_argument(
        "--no-arena-arms",
        action="store_true",
        help="run only the experiments' arms (the arena's four are not run unless named)",
    )
    parser.add_argument(
        "--update-cost",
        type=int,
        nargs="+",
        metavar="BOTS",
        help="only time one match's rating with the full covariance at these ladder sizes",
    )
    args = parser.parse_args(argv)
    if args.update_cost:
        print("\n".join(update_cost_lines(args.update_cost)))
        return
    if args.noise:
        print("\n".join(noise_lines(args.noise)))
        return
    if args.tables is not None and args.tables < 1:
        parser.error("--tables: at least 1")
    if args.size < 5:
        parser.error("--size: a ladder needs at least 5 bots")
    matches = args.matches or (QUICK_MATCHES if args.quick else FULL_MATCHES)
    seeds = args.seeds or (QUICK_SEEDS if args.quick else FULL_SEEDS)
    named = [arm for name in args.experiment for arm in EXPERIMENTS[name]]
    arms = list(dict.fromkeys(named if args.no_arena_arms else [*ARMS, *named]))
    tables = args.tables or args.size
    jobs = [
        Job(arm, seed, args.size, matches, tables)
        for seed in range(args.first_seed, args.first_seed + seeds)
        for arm in arms
    ]
    per_round = f"at most {tables} tables" if args.tables else "tables until nobody has room"
    first = f" from {args.first_seed}" if args.first_seed != 1 else ""
    print(
        f"{args.size} bots, {per_round} a round, {matches:,} rated matches of {HANDS} hands "
        f"per run, {seeds} seeds per arm{first}, {args.jobs} processes",
        flush=True,
    )
    started = time.perf_counter()
    results = run_all(jobs, args.jobs)
    wall = time.perf_counter() - started
    print()
    print("\n".join(goal_lines(results, arms, matches)))
    print()
    print("\n".join(table_rows(results, arms, matches)))
    print()
    print("\n".join(order_lines(results, args.size)))
    print(f"Faults: {sum(r.faults for r in results)}; wall time {wall:.0f} s")


if __name__ == "__main__":
    main()
