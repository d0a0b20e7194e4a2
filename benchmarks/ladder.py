"""How fast the ladder's shown order becomes right: the matchmaker against random tables,
duplicate deals against plain ones.

A field of bots whose true order is known by construction plays a simulated ladder with the
arena's own code: house Normal (``house:normal``, p = 0, the rating anchor) and registered
bots that are house Normal playing a random legal card with probability p = k / (size − 1)
at each card play (passes and exposures stay Normal's), so a larger p is a weaker bot. Every
round builds the members from the current ratings (each registered bot with room for one
table, house Normal with room for any), seats tables with
:func:`arena.matchmaker.choose_tables` or :func:`arena.matchmaker.random_tables` until nobody
has room, and plays each table as 4 matches of 4 hands (``play_match`` with ``InProcessSeat``
seats, as a worker plays house bots), the participants shifted one seat each time: the same
deals in all four (duplicate) or four different deals (plain). A table is rated as the arena
rates a ladder table (each match counted by :func:`arena.ratings.count`, then the table once
by :func:`arena.ratings.rate_table`, on every participant's total points: 4 matches at once),
or, as the issue's baseline and as the arena rates an operator's tournament, each match on its
own by its places (:func:`arena.ratings.rate`). After every rating the shown order (by
``Rating.conservative``, highest first) is compared with the true order by Kendall's τ (τ-a: a
tie counts as neither right nor wrong).

    python -m benchmarks.ladder                 # 2 arms x 3 seeds x 2,000 matches: BENCHMARKS.md
    python -m benchmarks.ladder --quick         # 2 arms x 1 seed x 300 matches
    python -m benchmarks.ladder --experiment rating --experiment deals   # and more arms

A run of 2,000 matches takes about a minute of one core (about 8 ms per hand). Each run is
seeded (its deals, its tables, its bots' random cards): the same options print the same
figures, and an arm's figures do not depend on which other arms run beside it.

Printed: a line per run as it ends; then the ratios: each arm's median matches to τ ≥ 0.9
over those of the baseline (random tables, plain deals, each match rated), on both measures
(when τ first reaches 0.9, and after which match it never falls below 0.9 again), the goal
(at most 0.5) on the arena's arm; then a Markdown table, a row per arm: the runs; the matches
until τ ≥ 0.9 was first reached (median, the lower of the middle two for an even count, and
range over the seeds; "> N" for a run that never got there); in how many runs τ stayed at 0.9
or above from then to the end; the matches after which it never fell below 0.9 again; the
median τ after 100, 250, 500, 1,000, 2,000 and 4,000 matches (those within the run) and at
its end; the registered bots' mean σ at the end. Then each participant's final μ averaged over
the arena's runs and whether it falls as p grows (the true order holds), and the faults (0:
no decision timed out).

``--experiment NAME`` (repeatable) adds arms (:data:`EXPERIMENTS`): ``rating``, each goal arm
with the other's rating; ``deals``, the other two of tables × deals under the arena's rating;
``drift``, openskill's default ``tau`` (25/300) where the arena has 0 (:mod:`arena.ratings`,
no drift).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

from openskill.models import PlackettLuce

from arena import ratings
from arena.match_loop import InProcessSeat, play_match
from arena.matchmaker import Member, Table, choose_tables, random_tables
from arena.ratings import ANCHOR, count, rate, rate_table, starting_rating
from arena.records import Rating
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
FULL_MATCHES = 2000
FULL_SEEDS = 3
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


CHOOSERS: dict[str, Chooser] = {"matchmaker": choose_tables, "random": random_tables}


@dataclass(frozen=True)
class Arm:
    """How a ladder is run: who sits together, which deals, how a table is rated, and whether
    the rating model lets σ drift up between matches (openskill's default ``tau``: an
    experiment) or not (the arena)."""

    tables: str
    duplicate: bool
    rating: str = "table"
    """``table``: as the arena rates a ladder table; ``match``: each match on its own
    (:func:`rate_table_of`)."""
    drift: bool = False

    @property
    def name(self) -> str:
        deals = "duplicate deals" if self.duplicate else "plain deals"
        rating = ", table rated once" if self.rating == "table" else ", each match rated"
        model = ", σ drift (openskill's default tau)" if self.drift else ""
        return f"{self.tables}, {deals}{rating}{model}"


ARMS = (Arm("matchmaker", duplicate=True), Arm("random", duplicate=False, rating="match"))
"""The goal's two arms: the arena (the matchmaker, duplicate deals, a table rated once) and the
issue's baseline (random tables, plain deals, each match rated on its own by its places)."""
EXPERIMENTS = {
    "rating": [
        Arm("matchmaker", duplicate=True, rating="match"),
        Arm("random", duplicate=False),
    ],
    "deals": [Arm("matchmaker", duplicate=False), Arm("random", duplicate=True)],
    "drift": [
        Arm("matchmaker", duplicate=True, drift=True),
        Arm("random", duplicate=False, rating="match", drift=True),
    ],
}
"""More arms: ``rating``, each of the goal's arms with the other's rating, which tells the
rating's share of the difference from the tables' and deals'; ``deals``, the other two of
tables × deals under the arena's rating; ``drift``, openskill's default ``tau``, with which a
bot's σ settles where each match's added ``tau²`` cancels what the match taught instead of
shrinking with its matches (the arena's ratings before they were made drift-free)."""


@contextmanager
def rating_model(arm: Arm) -> Iterator[None]:
    """``arena.ratings`` with the arm's model for the length of one run."""
    kept = ratings.MODEL
    if arm.drift:
        ratings.MODEL = PlackettLuce()
    try:
        yield
    finally:
        ratings.MODEL = kept


@dataclass(frozen=True)
class Job:
    arm: Arm
    seed: int
    size: int
    matches: int


@dataclass(frozen=True)
class RunResult:
    job: Job
    taus: tuple[tuple[int, float], ...]
    """(matches played so far, τ of the shown order) after every rating."""
    final_mu: tuple[float, ...]
    """Each entrant's μ at the end, in true order."""
    final_sigma: tuple[float, ...]
    """Each registered bot's σ at the end."""
    faults: int
    seconds: float

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


def members(entrants: Sequence[Entrant], board: dict[str, Rating]) -> list[Member]:
    """The matchmaker's view at the start of a round: every registered bot has room for one."""
    return [
        Member(
            e.bot_id,
            board[e.bot_id].mu,
            board[e.bot_id].sigma,
            board[e.bot_id].matches,
            room=0 if e.house else 1,
            house=e.house,
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


def rate_table_of(board: dict[str, Rating], logs: Sequence[MatchLog], rating: str) -> Iterator[int]:
    """Rate a table's matches into ``board`` as the arm says, yielding after each change of the
    shown order the matches that change stands for: ``table`` as the arena rates a ladder
    table (each match counted, :func:`arena.ratings.count`, then the table's result,
    :func:`arena.ratings.rate_table`: 4 matches); ``match`` each match on its own by its
    places (:func:`arena.ratings.rate`, as the arena rates an operator's tournament: 1 each)."""
    for log in logs:
        before = [board[seat.bot_id] for seat in log.seats]
        for after in (rate if rating == "match" else count)(log, before):
            board[after.bot_id] = after
        if rating == "match":
            yield 1
    if rating == "table":
        rotations = [([s.bot_id for s in log.seats], log.outcome.totals) for log in logs]
        for after in rate_table(rotations, board):
            board[after.bot_id] = after
        yield len(logs)


def run(job: Job) -> RunResult:
    """One simulated ladder, round after round, until ``job.matches`` matches are rated."""
    start = time.perf_counter()
    order = field(job.size)
    entrants = {e.bot_id: e for e in order}
    board = {e.bot_id: starting_rating(e.bot_id, VERSION, None) for e in order}
    rng = random.Random(f"tables:{job.seed}")
    secret = hashlib.sha256(f"ladder:{job.seed}".encode()).digest()
    choose = CHOOSERS[job.arm.tables]
    taus: list[tuple[int, float]] = []
    played = faults = rounds = 0
    with rating_model(job.arm):
        while played < job.matches:
            rounds += 1
            for t, table in enumerate(choose(members(order, board), tables=job.size, rng=rng)):
                if played >= job.matches:
                    break
                logs = play_table(
                    table, entrants, secret, f"r{rounds}t{t + 1}", duplicate=job.arm.duplicate
                )
                faults += sum(sum(log.faults) for log in logs)
                for matches in rate_table_of(board, logs, job.arm.rating):
                    played += matches
                    taus.append(
                        (played, kendall_tau([board[e.bot_id].conservative for e in order]))
                    )
    return RunResult(
        job,
        tuple(taus),
        tuple(board[e.bot_id].mu for e in order),
        tuple(board[e.bot_id].sigma for e in order if not e.house),
        faults,
        time.perf_counter() - start,
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
        + " | σ at the end |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(marks) + "---:|",
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
            + f" | {sigma:.2f} |"
        )
    return rows


def median_of(results: Sequence[RunResult], arm: Arm, measure: str) -> int | None:
    """The median run's matches to τ ≥ target (``first`` or ``settled``: for good); None when
    that run never got there."""
    ranked = sorted(getattr(r, measure)() or NEVER for r in results if r.job.arm == arm)
    middle = statistics.median_low(ranked)
    return None if middle == NEVER else middle


MEASURES = {"first": "first reaches", "settled": "holds for good"}


def goal_lines(results: Sequence[RunResult], arms: Sequence[Arm], budget: int) -> list[str]:
    """Each arm's median matches to τ ≥ target over those of the issue's baseline (random
    tables, plain deals, each match rated), on both measures; the goal is on the first arm."""
    baseline = ARMS[1]
    lines = []
    for arm in arms:
        if arm == baseline:
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
    """Every entrant's final μ averaged over the runs of the arena's arm, and whether it falls
    as p grows."""
    arena = [r for r in results if r.job.arm == ARMS[0]]
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
        f"Final μ, mean of the {len(arena)} runs of {ARMS[0].name}: {shown}",
        f"μ falls as p grows: {verdict}",
    ]


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
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument(
        "--experiment",
        choices=EXPERIMENTS,
        action="append",
        default=[],
        help="add an experiment's arms (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.size < 5:
        parser.error("--size: a ladder needs at least 5 bots")
    matches = args.matches or (QUICK_MATCHES if args.quick else FULL_MATCHES)
    seeds = args.seeds or (QUICK_SEEDS if args.quick else FULL_SEEDS)
    arms = [*ARMS, *(arm for name in args.experiment for arm in EXPERIMENTS[name])]
    jobs = [Job(arm, seed, args.size, matches) for seed in range(1, seeds + 1) for arm in arms]
    print(
        f"{args.size} bots, {matches:,} rated matches of {HANDS} hands per run, {seeds} seeds "
        f"per arm, {args.jobs} processes",
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
