"""Playing one match: the referee asks each seat's player, faults become fallbacks, all is logged.

A seat's player is anything with the :class:`SeatPlayer` methods: a house bot in-process
(:class:`InProcessSeat`) or a registered bot over HTTP. Whatever a player does, the match goes
on: a timeout, an error, a malformed or illegal answer is a recorded fault answered by the
protocol's fallback move, and a seat with ``fault_limit`` faults forfeits: the rest of its match
is auto-played and it is ranked last. Each decision's record carries what its seat measured of
the request (``timing``, as offsets from the match's start) and, for a timeout, which deadline
expired.

A match that continues a voided one (a ruling's remedy ``strike``) takes its first decisions
from a :class:`Reenactment` instead of asking the seats; the rest is played as any match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from arena.exchange import Exchange, now_ns
from bot_sdk.bot import Bot
from bot_sdk.protocol import (
    AnswerError,
    DecisionRequest,
    Status,
    answer_of,
    decision_id,
    encode,
    fallback_move,
    parse_answer,
    pending_decision,
)
from referee import AnyMove, Game, HandResult, Observation, Outcome, Phase
from replays.deals import DealSource
from replays.faults import FaultBook
from replays.log import Continuation, DecisionRecord, MatchLog, SeatInfo, TimeControl
from replays.recorder import MatchRecorder


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
    exchange: Exchange | None = None
    """What the seat measured of the request (None: nothing, as for a person)."""


class SeatPlayer(Protocol):
    """A seat's player: asked each decision's request, as the match built it, once."""

    info: SeatInfo

    def ask(self, request: DecisionRequest) -> Reply: ...

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None: ...

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None: ...


class InProcessSeat:
    """A :class:`~bot_sdk.Bot` played in the worker's process (the house bots): no HTTP, same
    rules. An exception or an illegal move is a fault like any other. Its timing is when the bot
    was called and when it returned, on ``clock`` (nanoseconds, :data:`arena.exchange.now_ns`);
    there is no connection and nothing is sent."""

    def __init__(self, bot: Bot, info: SeatInfo, *, clock: Callable[[], int] = now_ns) -> None:
        self.bot = bot
        self.info = info
        self._clock = clock

    def ask(self, request: DecisionRequest) -> Reply:
        obs = request.observation
        exchange = Exchange(sent_ns=self._clock())
        try:
            move = self.bot.decide(obs)
        except Exception as error:  # a bot's bug is a fault, never a crash
            latency = _ms_taken(exchange, self._clock)
            return Reply(None, Status.ERROR, latency, None, repr(error)[:300], exchange=exchange)
        latency = _ms_taken(exchange, self._clock)
        body = encode(answer_of(move))
        try:
            parsed = parse_answer(pending_decision(obs).kind, body, obs)
        except AnswerError as error:
            status, fault = error.fault.status, str(error)
            return Reply(None, status, latency, body.decode(), fault, exchange=exchange)
        return Reply(parsed, Status.OK, latency, exchange=exchange)

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        self.bot.hand_end(result, obs)

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        self.bot.match_end(outcome)


class Reenactment(Protocol):
    """Decisions a match takes from another match's log instead of asking (:mod:`arena.strike`):
    ``record`` gives the ``index``-th decision of the match (counted across hands), with the
    id ``ident``, or None from where the match is played live."""

    continues: Continuation

    def record(self, index: int, obs: Observation, ident: str) -> DecisionRecord | None: ...


def _ms_taken(exchange: Exchange, clock: Callable[[], int]) -> int:
    """The answer's instant noted in ``exchange``; the milliseconds since it was asked."""
    exchange.received_ns = clock()
    assert exchange.sent_ns is not None
    return max(0, round((exchange.received_ns - exchange.sent_ns) / 1_000_000))


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
    origin_ns: int | None = None,
    reenact: Reenactment | None = None,
) -> MatchLog:
    """Play ``game`` to its end with one player per seat and return the match log. Timings
    are offsets from ``origin_ns`` (:data:`arena.exchange.now_ns`; by default, now): the
    match's start, which the caller takes before any ``hello`` it sends. ``reenact`` gives
    the decisions a continuation takes from the match it continues."""
    if len(players) != 4:
        raise ValueError("a match needs 4 players")
    origin = now_ns() if origin_ns is None else origin_ns
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
        continues=None if reenact is None else reenact.continues,
    )
    book = FaultBook.fresh(time_control)
    seq = index = 0
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
            player = players[seat]
            taken = None if reenact is None else reenact.record(index, obs, ident)
            index += 1
            if taken is not None:
                book.enter(taken)
                recorder.apply(taken)
                continue
            recorder.apply(
                decide(book, player, obs, match_id=match_id, ident=ident, origin_ns=origin)
            )
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


_ANSWERED = frozenset({Status.OK, Status.INVALID, Status.ILLEGAL})
"""The statuses of a reply that came with an answer: one past its allowance is a timeout."""


def decide(
    book: FaultBook,
    player: SeatPlayer,
    obs: Observation,
    *,
    match_id: str,
    ident: str,
    origin_ns: int | None = None,
) -> DecisionRecord:
    """The record of ``obs.seat``'s decision, entered in ``book``: its player's answer, or the
    fallback after a fault, or the fallback without asking once the seat has forfeited. Its
    timing is kept as offsets from ``origin_ns``, the match's start on
    :data:`arena.exchange.now_ns` (none without one: a human game spans many requests, with no
    one clock)."""
    seat, tc = obs.seat, book.time_control
    kind = pending_decision(obs).kind
    if seat in book.forfeited:
        return DecisionRecord(seat, kind, fallback_move(obs), Status.FORFEIT_AUTOPLAY, ident)
    bank = book.banks[seat]
    request = DecisionRequest(obs, match_id, ident, tc.decision_ms, bank, player.info.protocol)
    reply = player.ask(request)
    status, fault, move = reply.status, reply.fault, reply.move
    timed_out = book.charge(seat, reply.latency_ms)
    if timed_out and status in _ANSWERED:  # whatever it said, it came too late
        status = Status.TIMEOUT
        fault = (
            f"answered after {reply.latency_ms} ms: the limit was {tc.decision_ms} ms "
            f"and {bank} ms were left in the bank"
        )
    if status is not Status.OK or move is None:
        move = fallback_move(obs)
    exchange = reply.exchange
    record = DecisionRecord(
        seat=seat,
        kind=kind,
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
        deadline=tc.deadline(bank) if status is Status.TIMEOUT else None,
        timing=None if origin_ns is None or exchange is None else exchange.timing(origin_ns),
    )
    book.count(record)
    return record


def _is_last_card(game: Game) -> bool:
    return game.phase is Phase.PLAYING and len(game.tricks) == 12 and len(game.trick) == 3


def _quietly(call: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """Notifications are fire and forget: a bot that fails one changes nothing."""
    try:
        call(*args, **kwargs)
    except Exception:  # by design: a notification cannot hurt the match
        return
