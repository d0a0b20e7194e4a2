"""Playing one match: the referee asks each seat's player, faults become fallbacks, all is logged.

A seat's player is anything with the :class:`SeatPlayer` methods: a house bot in-process
(:class:`InProcessSeat`) or a registered bot over HTTP. Whatever a player does, the match goes
on: a timeout, an error, a malformed or illegal answer is a recorded fault answered by the
protocol's fallback move, and a seat with ``fault_limit`` faults forfeits: the rest of its match
is auto-played and it is ranked last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot_sdk.bot import Bot
from bot_sdk.protocol import (
    AnswerError,
    answer_of,
    decision_id,
    encode,
    fallback_move,
    parse_answer,
)
from referee import AnyMove, Game, HandResult, Observation, Outcome, Phase
from replays.deals import DealSource
from replays.log import DecisionRecord, MatchLog, SeatInfo, Status, TimeControl, status_of
from replays.recorder import MatchRecorder

Clock = Callable[[], float]


@dataclass(frozen=True)
class Reply:
    """What asking a seat produced: a move, or the fault that replaced it."""

    move: AnyMove | None
    status: Status
    latency_ms: int
    answer: str | None = None
    fault: str | None = None
    request_sha256: str | None = None
    note: str | None = None
    """What the bot said about its answer (``bot_sdk.protocol.read_note``)."""


class SeatPlayer(Protocol):
    info: SeatInfo

    def ask(
        self,
        obs: Observation,
        *,
        match_id: str,
        decision_id: str,
        time_limit_ms: int,
        time_bank_ms: int,
    ) -> Reply: ...

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None: ...

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None: ...


class InProcessSeat:
    """A :class:`~bot_sdk.Bot` played in the worker's process (the house bots): no HTTP, same
    rules. An exception or an illegal move is a fault like any other."""

    def __init__(self, bot: Bot, info: SeatInfo, *, clock: Clock = time.monotonic) -> None:
        self.bot = bot
        self.info = info
        self._clock = clock

    def ask(
        self,
        obs: Observation,
        *,
        match_id: str,
        decision_id: str,
        time_limit_ms: int,
        time_bank_ms: int,
    ) -> Reply:
        start = self._clock()
        try:
            move = self.bot.decide(obs)
        except Exception as error:  # a bot's bug is a fault, never a crash
            return Reply(None, Status.ERROR, _ms_since(start, self._clock), None, repr(error)[:300])
        latency = _ms_since(start, self._clock)
        assert obs.decision is not None
        body = encode(answer_of(move))
        try:
            parsed = parse_answer(obs.decision.kind, body, obs)
        except AnswerError as error:
            return Reply(None, status_of(error), latency, body.decode(), str(error))
        return Reply(parsed, Status.OK, latency)

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        self.bot.hand_end(result, obs)

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        self.bot.match_end(outcome)


def _ms_since(start: float, clock: Clock) -> int:
    return max(0, round((clock() - start) * 1000))


def play_match(
    game: Game,
    players: Sequence[SeatPlayer],
    *,
    match_id: str,
    deals: DealSource,
    time_control: TimeControl,
    tournament_id: str | None = None,
    table_id: str | None = None,
    rated: bool = True,
    started_at: str | None = None,
    finished_at: Callable[[], str | None] = lambda: None,
    extra: Mapping[str, Any] | None = None,
) -> MatchLog:
    """Play ``game`` to its end with one player per seat and return the match log."""
    if len(players) != 4:
        raise ValueError("a match needs 4 players")
    recorder = MatchRecorder(
        game,
        match_id=match_id,
        deals=deals,
        seats=[p.info for p in players],
        time_control=time_control,
        tournament_id=tournament_id,
        table_id=table_id,
        rated=rated,
        started_at=started_at,
        extra=extra,
    )
    book = FaultBook.fresh(time_control)
    seq = 0
    last_views: list[Observation] = []
    while not game.is_over():
        hand = game.hand_number
        for decision in game.pending:
            seat = decision.seat
            obs = game.observation(seat)
            ident = decision_id(match_id, hand, seq)
            seq += 1
            if _is_last_card(game):
                # hand_end carries each seat's view as the last card was about to be played
                last_views = [game.observation(s) for s in range(4)]
            recorder.apply(book.decide(players[seat], obs, match_id=match_id, ident=ident))
        if game.hand_number != hand or game.is_over():
            seq = 0
            result = game.results[-1]
            for s, player in enumerate(players):
                if s not in book.forfeited:
                    _quietly(player.hand_end, result, last_views[s], match_id=match_id)
    outcome = game.outcome
    assert outcome is not None
    for seat, player in enumerate(players):
        if seat not in book.forfeited:
            _quietly(player.match_end, outcome, match_id=match_id, seat=seat)
    return recorder.finish(
        forfeited=sorted(book.forfeited), faults=book.faults, finished_at=finished_at()
    )


@dataclass
class FaultBook:
    """Each seat's time bank and faults in one match, and the seats that have forfeited: asks a
    seat's player through it and it applies the time control, the fallbacks and forfeits."""

    time_control: TimeControl
    banks: list[int]
    faults: list[int]
    forfeited: set[int]

    @classmethod
    def fresh(cls, time_control: TimeControl) -> FaultBook:
        return cls(time_control, [time_control.bank_ms] * 4, [0, 0, 0, 0], set())

    @classmethod
    def from_records(
        cls, time_control: TimeControl, records: Iterable[DecisionRecord]
    ) -> FaultBook:
        """The book after ``records`` (a match played in steps, such as a human game)."""
        book = cls.fresh(time_control)
        for record in records:
            if record.time_bank_ms is not None and record.latency_ms is not None:
                book.banks[record.seat] = time_control.charge(
                    record.time_bank_ms, record.latency_ms
                )[0]
            if record.status.is_fault:
                book.count_fault(record.seat)
        return book

    def count_fault(self, seat: int) -> None:
        self.faults[seat] += 1
        if self.faults[seat] >= self.time_control.fault_limit:
            self.forfeited.add(seat)

    def decide(
        self, player: SeatPlayer, obs: Observation, *, match_id: str, ident: str
    ) -> DecisionRecord:
        """The record of ``obs.seat``'s decision: its player's answer, or the fallback after a
        fault, or the fallback without asking once the seat has forfeited."""
        assert obs.decision is not None
        if obs.seat in self.forfeited:
            return DecisionRecord(
                obs.seat, obs.decision.kind, fallback_move(obs), Status.FORFEIT_AUTOPLAY, ident
            )
        record = _ask(
            player, obs, match_id=match_id, ident=ident, tc=self.time_control, banks=self.banks
        )
        if record.status is not Status.OK:
            self.count_fault(obs.seat)
        return record


def _ask(
    player: SeatPlayer,
    obs: Observation,
    *,
    match_id: str,
    ident: str,
    tc: TimeControl,
    banks: list[int],
) -> DecisionRecord:
    seat = obs.seat
    assert obs.decision is not None
    bank = banks[seat]
    reply = player.ask(
        obs, match_id=match_id, decision_id=ident, time_limit_ms=tc.decision_ms, time_bank_ms=bank
    )
    banks[seat], timed_out = tc.charge(bank, reply.latency_ms)
    status, fault, move = reply.status, reply.fault, reply.move
    if status is Status.OK and timed_out:
        status = Status.TIMEOUT
        fault = (
            f"answered after {reply.latency_ms} ms: the limit was {tc.decision_ms} ms "
            f"and {bank} ms were left in the bank"
        )
    if status is not Status.OK or move is None:
        move = fallback_move(obs)
    return DecisionRecord(
        seat=seat,
        kind=obs.decision.kind,
        applied=move,
        status=status,
        decision_id=ident,
        latency_ms=reply.latency_ms,
        answer=reply.answer,
        fault=fault,
        time_limit_ms=tc.decision_ms,
        time_bank_ms=bank,
        request_sha256=reply.request_sha256,
        note=reply.note,
    )


def _is_last_card(game: Game) -> bool:
    return game.phase is Phase.PLAYING and len(game.tricks) == 12 and len(game.trick) == 3


def _quietly(call: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """Notifications are fire and forget: a bot that fails one changes nothing."""
    try:
        call(*args, **kwargs)
    except Exception:  # by design: a notification cannot hurt the match
        return
