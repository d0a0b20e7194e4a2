"""Where a bot's play of a duplicate deal parted from the others': the rotations of one deal
lined up, seat by seat, decision by decision.

In a duplicate deal every rotation deals the same cards to the same seat numbers; the
participant holding them changes. For one seat, each rotation's log is a **line**: whoever held
that seat's cards there, its decisions and the points it scored with them.

**Aligned decisions.** A line's decisions are keyed by *step*: the hand, the kind of decision
(the pass, the exposure, a play) and its ordinal among that seat's decisions of that kind in
that hand, so a play is keyed by its trick. Lines are compared step by step on the move the
referee applied (for a fault, the fallback played: it is what that line did with the cards).

**Differed from the others.** A line *diverges* at the first step, in the order of play, at
which it made a move that no other line made at that step, among the lines that reached it (a
line that made no such decision, say a match that ended a hand earlier, neither agrees nor
differs). A move shared with any other line is not a divergence: the bot did what another
holder of the same cards did.

The positions are not identical across lines once any seat, this one or another, plays
differently: the other three seats are held by other participants in each rotation, so what
the seat received, the tricks led to it and the cards on the table may differ before its own
first divergence. What is compared is therefore the seat's choices, not whole positions; each
other line's choice says whether that line stood in exactly the same position
(:attr:`Cell.same_position`: the seat's observations equal, running totals aside). It is still
useful: the first step at which a bot does what none of the other holders did is the earliest
point it made a choice of its own with these cards, and the points each line scored with the
cards tell what the lines that chose otherwise made of them.

**The seat's view only.** A :class:`Report` shows the position at the divergence as the bot's
seat saw it (the referee's :class:`~referee.Observation`, what the bot was sent), and the other
lines' choices only as far as that seat could see them: a choice made of cards that the bot's
seat did not hold at that step (cards another line received in its passes) is hidden.

>>> from referee import Game, RandomPlayer, Rules
>>> from replays.deals import DealSource
>>> from replays.log import DecisionRecord, SeatInfo, TimeControl
>>> from replays.recorder import MatchRecorder
>>> def played(match_id: str, players: list[int]) -> MatchLog:
...     game = Game(Rules(fixed_hands=1), seed=5)
...     seats = [SeatInfo(s, f"bot{n}", f"bot {n}") for s, n in enumerate(players)]
...     recorder = MatchRecorder(game, match_id=match_id, deals=DealSource.practice("5"),
...                              seats=seats, time_control=TimeControl(1000, 5000, 5))
...     random = [RandomPlayer(n) for n in players]
...     while not game.is_over():
...         move = random[game.pending[0].seat].decide(game.pending[0])
...         recorder.apply(DecisionRecord(move.seat, move.kind, move))
...     return recorder.finish()
>>> twins = line_up([played("m1", [0, 1, 2, 3]), played("m2", [0, 1, 2, 3])])
>>> compare(0, twins[0], bot=1).divergence is None
True
>>> seat_0 = line_up([played("m1", [0, 1, 2, 3]), played("m2", [9, 1, 2, 3])])[0]
>>> report = compare(0, seat_0, bot=1)
>>> report.lines[1].participant, report.divergence.step.label
('bot9', 'trick 3')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot_sdk.protocol import Status
from referee import AnyMove, CardSet, DecisionKind, Expose, Observation, Pass, Play
from replays.log import MatchLog
from replays.verify import replay

KIND_ORDER = (DecisionKind.PASS, DecisionKind.EXPOSE, DecisionKind.PLAY)
"""The order of a hand's decisions of one seat: its pass, its exposure, its plays."""


@dataclass(frozen=True, order=True)
class Step:
    """Where a decision is aligned across lines: its hand, its kind and its ordinal (from 1)
    among the seat's decisions of that kind in the hand (a play's is its trick)."""

    hand: int
    rank: int
    """The kind's place in :data:`KIND_ORDER` (so steps sort in the order of play)."""
    ordinal: int

    @classmethod
    def of(cls, hand: int, kind: DecisionKind, ordinal: int) -> Step:
        return cls(hand, KIND_ORDER.index(kind), ordinal)

    @property
    def kind(self) -> DecisionKind:
        return KIND_ORDER[self.rank]

    @property
    def label(self) -> str:
        """``pass``, ``exposure``, ``trick 5``."""
        if self.kind is DecisionKind.PLAY:
            return f"trick {self.ordinal}"
        return "pass" if self.kind is DecisionKind.PASS else "exposure"


@dataclass(frozen=True)
class Made:
    """One decision a line made: the move applied, its status, where it is in its log, and the
    seat's view just before it."""

    move: AnyMove
    status: Status
    decision: int
    """Its index in the hand's decisions of the log (the replay viewer's decision number)."""
    view: Observation


@dataclass(frozen=True)
class Line:
    """Whoever held the seat's cards in one rotation: its decisions by step, and its points."""

    match_id: str
    participant: str
    name: str
    points: tuple[int, ...]
    """The seat's score in each hand played, the first hand first."""
    decisions: Mapping[Step, Made]

    @property
    def total(self) -> int:
        return sum(self.points)


@dataclass(frozen=True)
class Cell:
    """One line's choice at a step, as the bot's seat may see it."""

    cards: tuple[str, ...] | None
    """The cards chosen (empty: exposed nothing), or None: cards the bot's seat did not hold
    there, hidden."""
    status: Status
    same_position: bool
    """The line's seat saw exactly what the bot's seat saw (running totals aside)."""


@dataclass(frozen=True)
class Row:
    """One step of the divergence's hand, each line's choice there (None: it made none)."""

    step: Step
    cells: tuple[Cell | None, ...]


@dataclass(frozen=True)
class Divergence:
    """The bot's first divergence: where it is, what its seat saw, and the hand's steps up to it
    with each line's choice."""

    step: Step
    decision: int
    """The bot's decision's index in the hand's decisions of its log."""
    view: Observation
    """The bot's seat's view just before it chose (its own hand only)."""
    rows: tuple[Row, ...]
    """The hand's steps up to and including the divergence, the bot's line's steps."""


@dataclass(frozen=True)
class Report:
    """One seat of one duplicate deal compared for one line (the bot's)."""

    seat: int
    lines: tuple[Line, ...]
    bot: int
    """The index of the bot's line in ``lines``."""
    divergence: Divergence | None

    @property
    def cost(self) -> float:
        """The other lines' mean total minus the bot's: the points the bot's line scored less
        with the same cards (negative: more)."""
        others = [line.total for n, line in enumerate(self.lines) if n != self.bot]
        return sum(others) / len(others) - self.lines[self.bot].total if others else 0.0


def line_up(logs: Sequence[MatchLog]) -> tuple[tuple[Line, ...], ...]:
    """Each seat's lines (seat 0's first), one per log, in the order of ``logs``: the
    rotations of one deal. Raises ValueError if the logs do not share their first deal."""
    if len({log.hands[0].deal if log.hands else None for log in logs}) > 1:
        raise ValueError("the logs are not rotations of one deal: their first deals differ")
    walked = [_walk(log) for log in logs]
    return tuple(
        tuple(
            Line(
                log.match_id,
                log.seats[seat].bot_id,
                log.seats[seat].name,
                tuple(hand.result.seats[seat].score for hand in log.hands),
                decisions[seat],
            )
            for log, decisions in zip(logs, walked, strict=True)
        )
        for seat in range(4)
    )


def _walk(log: MatchLog) -> list[dict[Step, Made]]:
    """Every seat's decisions in ``log`` by step, with what the seat saw before each."""
    seats: list[dict[Step, Made]] = [{}, {}, {}, {}]
    counts: dict[tuple[int, int, DecisionKind], int] = {}
    for hand, index, record, view in replay(log):
        key = (hand.hand_number, record.seat, record.kind)
        counts[key] = counts.get(key, 0) + 1
        step = Step.of(hand.hand_number, record.kind, counts[key])
        seats[record.seat][step] = Made(record.applied, record.status, index, view)
    return seats


def compare(seat: int, lines: Sequence[Line], bot: int) -> Report:
    """Line ``bot`` of ``seat`` against the others: its first divergence, if any."""
    own = lines[bot]
    others = [line for n, line in enumerate(lines) if n != bot]
    for step in sorted(own.decisions):
        made = own.decisions[step]
        reached = [line.decisions[step] for line in others if step in line.decisions]
        if reached and all(other.move != made.move for other in reached):
            rows = tuple(
                _row(earlier, own, lines)
                for earlier in sorted(own.decisions)
                if earlier.hand == step.hand and earlier <= step
            )
            divergence = Divergence(step, made.decision, made.view, rows)
            return Report(seat, tuple(lines), bot, divergence)
    return Report(seat, tuple(lines), bot, None)


def _row(step: Step, own: Line, lines: Sequence[Line]) -> Row:
    """Each line's choice at ``step``, shown as far as the bot's seat saw: cards it held."""
    seen = own.decisions[step].view
    cells: list[Cell | None] = []
    for line in lines:
        made = line.decisions.get(step)
        if made is None:
            cells.append(None)
            continue
        cards = _cards(made.move)
        shown = tuple(cards.names()) if not cards - seen.hand else None
        cells.append(Cell(shown, made.status, _position(made.view) == _position(seen)))
    return Row(step, tuple(cells))


def _cards(move: AnyMove) -> CardSet:
    if isinstance(move, Play):
        return CardSet.of([move.card])
    assert isinstance(move, Pass | Expose)
    return move.cards


def _position(view: Observation) -> Observation:
    """The seat's view with the match's running totals left out: the position in the hand."""
    return dataclasses.replace(view, totals=(0, 0, 0, 0), standing=(0, 0, 0, 0), results=())
