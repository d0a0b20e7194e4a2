"""The match loop in one process, with seats that record what they are told: the notifications
(each hand's result and each seat's last view, to the seats that have not forfeited), an
in-process bot's faults, latency and timing, each decision's timing as offsets from the match's
start and a timeout's deadline, and the fault book rebuilt from a log."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from arena.exchange import Exchange
from arena.match_loop import InProcessSeat, Reply, SeatPlayer, decide, play_match
from bot_sdk.bot import Bot
from bot_sdk.protocol import DecisionRequest, Status, fallback_move
from referee import AnyMove, Game, HandResult, Observation, Outcome, Play, Rules
from replays.deals import DealSource
from replays.faults import FaultBook
from replays.log import Connection, Deadline, SeatInfo, TimeControl, Timing
from tests.replays.replay_support import (
    DEAL_SECRET,
    TIME_CONTROL,
    RandomBot,
    ScriptedSeat,
    always,
    house_seat,
    in_turn,
    record,
)

HANDS = Rules(fixed_hands=2)


class Listening:
    """Wraps a seat player and records the notifications it is sent."""

    def __init__(self, player: Any) -> None:
        self.player = player
        self.info = player.info
        self.hands: list[tuple[HandResult, Observation]] = []
        self.ends: list[Outcome] = []

    def ask(self, request: DecisionRequest) -> Reply:
        reply: Reply = self.player.ask(request)
        return reply

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        self.hands.append((result, obs))

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        assert seat == self.info.seat
        self.ends.append(outcome)


def _listening(players: list[Any]) -> list[Listening]:
    return [Listening(p) for p in players]


def test_every_seat_hears_each_hand_with_its_last_view_and_the_end() -> None:
    seats = _listening([house_seat(s, f"n-{s}") for s in range(4)])
    log = record(HANDS, 5, list(seats))
    for seat in seats:
        assert [result for result, _ in seat.hands] == [hand.result for hand in log.hands]
        for _, view in seat.hands:
            # as the last card was about to be played: 12 tricks done, 3 cards on the table
            assert (len(view.tricks), len(view.trick), view.seat) == (12, 3, seat.info.seat)
        assert seat.ends == [log.outcome]


def test_a_forfeited_seat_hears_nothing_more() -> None:
    faulty = ScriptedSeat(2, always("error"), seed="f")
    seats = _listening([house_seat(0, "a"), house_seat(1, "b"), faulty, house_seat(3, "c")])
    log = record(HANDS, 6, list(seats))
    assert log.forfeited == (2,)
    assert seats[2].hands == [] and seats[2].ends == []  # it forfeited in the first hand
    assert all(len(s.hands) == 2 and len(s.ends) == 1 for s in (seats[0], seats[1], seats[3]))


class Failing:
    """A seat player whose notifications raise."""

    def __init__(self, player: Any) -> None:
        self.player, self.info = player, player.info

    def ask(self, request: DecisionRequest) -> Reply:
        reply: Reply = self.player.ask(request)
        return reply

    def hand_end(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    def match_end(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")


def test_a_failed_notification_changes_nothing() -> None:
    players: list[SeatPlayer] = [house_seat(s, f"q-{s}") for s in range(4)]
    quiet = record(HANDS, 7, players)
    players = [house_seat(s, f"q-{s}") for s in range(4)]
    loud = record(HANDS, 7, [Failing(p) for p in players])
    assert loud == quiet


@pytest.mark.parametrize("count", [3, 5])
def test_a_match_needs_four_players(count: int) -> None:
    with pytest.raises(ValueError, match="a match needs 4 players"):
        play_match(
            Game(HANDS, seed="x"),
            [house_seat(s % 4, "p") for s in range(count)],
            match_id="m",
            deals=DealSource.committed(DEAL_SECRET, "x"),
            time_control=TIME_CONTROL,
        )


def test_a_match_is_rated_unless_said_otherwise() -> None:
    assert record(HANDS, 8, [house_seat(s, "r") for s in range(4)]).rated is True


class Clock:
    """A nanosecond clock that moves on by each of ``steps`` (in seconds) once it is read."""

    def __init__(self, *steps: float) -> None:
        self.steps, self.now = list(steps), 1_000_000_000_000

    def __call__(self) -> int:
        value = self.now
        if self.steps:
            self.now += round(self.steps.pop(0) * 1e9)
        return value


class Raising(Bot):
    def play(self, obs: Observation) -> Any:
        raise ValueError("x" * 1000)

    expose = pass_cards = play


class Illegal(Bot):
    """Plays a card it does not hold, whatever it is asked."""

    def decide(self, obs: Observation) -> AnyMove:
        return Play(obs.seat, next(c for c in range(52) if c not in obs.hand))


def _obs() -> Observation:
    game = Game(HANDS, seed=3)
    return game.observation(game.pending[0].seat)


def _ask(seat: InProcessSeat, obs: Observation) -> Reply:
    return seat.ask(DecisionRequest(obs, "m", "d", time_limit_ms=1000, time_bank_ms=0))


def test_an_in_process_bot_that_raises_is_an_error_fault() -> None:
    obs = _obs()
    info = SeatInfo(obs.seat, "house-x", "x", "1", kind="house")
    reply = _ask(InProcessSeat(Raising(), info, clock=Clock(0.0126)), obs)
    assert (reply.move, reply.status, reply.latency_ms) == (None, Status.ERROR, 13)
    assert reply.fault == repr(ValueError("x" * 1000))[:300] and len(reply.fault) == 300


@pytest.mark.parametrize(("step", "latency"), [(0.0, 0), (0.2504, 250), (0.2506, 251), (-1, 0)])
def test_an_in_process_bot_is_timed_in_whole_milliseconds(step: float, latency: int) -> None:
    obs = _obs()
    info = SeatInfo(obs.seat, "house-x", "x", "1", kind="house")
    reply = _ask(InProcessSeat(RandomBot(1), info, clock=Clock(step)), obs)
    assert (reply.status, reply.latency_ms) == (Status.OK, latency)


def test_an_in_process_bot_is_timed_from_its_call_to_its_return_and_nothing_else() -> None:
    obs = _obs()
    info = SeatInfo(obs.seat, "house-x", "x", "1", kind="house")
    reply = _ask(InProcessSeat(RandomBot(1), info, clock=Clock(0.25)), obs)
    start = 1_000_000_000_000
    assert reply.exchange == Exchange(sent_ns=start, received_ns=start + 250_000_000)


class Answering:
    """A seat whose one reply is ``reply``."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.info = SeatInfo(0, "bot-x", "x")

    def ask(self, request: DecisionRequest) -> Reply:
        return self.reply

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        """Not asked here."""

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        """Not asked here."""


EXCHANGE = Exchange(5_000_000, 9_500_000, Connection.REUSED, None, None, 800, 97, False)


def _decided(reply: Reply, bank_ms: int, origin_ns: int | None = 1_000_000) -> Any:
    game = Game(HANDS, seed=3)
    obs = game.observation(game.pending[0].seat)
    book = FaultBook.fresh(TimeControl(1000, 2000, 5))
    book.banks[obs.seat] = bank_ms
    player = Answering(reply)
    return decide(book, player, obs, match_id="m", ident="m:1:0", origin_ns=origin_ns)


def test_a_decision_s_timing_is_its_exchange_from_the_match_s_start() -> None:
    record = _decided(Reply(None, Status.ERROR, 9, fault="oops", exchange=EXCHANGE), 2000)
    assert record.timing == Timing(4000, 8500, Connection.REUSED, None, None, 800, 97, False)
    assert record.deadline is None


def test_without_a_match_start_nothing_is_timed() -> None:
    reply = Reply(None, Status.ERROR, 9, fault="oops", exchange=EXCHANGE)
    assert _decided(reply, 2000, origin_ns=None).timing is None


@pytest.mark.parametrize(("bank_ms", "deadline"), [(0, Deadline.LIMIT), (700, Deadline.BANK)])
def test_a_timeout_says_which_deadline_expired(bank_ms: int, deadline: Deadline) -> None:
    reply = Reply(None, Status.TIMEOUT, 1000 + bank_ms, fault="no answer", exchange=EXCHANGE)
    assert _decided(reply, bank_ms).deadline is deadline


def test_an_answer_past_the_bank_is_a_timeout_of_the_bank() -> None:
    move = fallback_move(_obs())
    record = _decided(Reply(move, Status.OK, 1701, exchange=EXCHANGE), 700)
    assert (record.status, record.deadline) == (Status.TIMEOUT, Deadline.BANK)


@pytest.mark.parametrize("status", [Status.INVALID, Status.ILLEGAL])
def test_a_late_answer_is_a_timeout_whatever_it_said(status: Status) -> None:
    reply = Reply(None, status, 1701, answer='{"card": "ZZ"}', fault="bad", exchange=EXCHANGE)
    record = _decided(reply, 700)
    assert (record.status, record.deadline) == (Status.TIMEOUT, Deadline.BANK)
    assert record.fault is not None and record.fault.startswith("answered after 1701 ms")
    assert record.answer == '{"card": "ZZ"}'  # kept, as evidence


def test_a_bot_out_of_reach_is_an_error_however_long_it_was_waited_for() -> None:
    record = _decided(Reply(None, Status.ERROR, 1701, fault="not connected"), 700)
    assert (record.status, record.fault) == (Status.ERROR, "not connected")


def test_an_in_process_bot_that_plays_a_card_it_does_not_hold_is_refused() -> None:
    obs = _obs()
    info = SeatInfo(obs.seat, "house-x", "x", "1", kind="house")
    reply = _ask(InProcessSeat(Illegal(), info, clock=Clock()), obs)
    assert reply.move is None and reply.status in {Status.ILLEGAL, Status.INVALID}
    assert reply.answer is not None and reply.fault


def test_a_reply_cannot_be_changed() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Reply(None, Status.OK, 0).latency_ms = 5  # type: ignore[misc]


def test_the_fault_book_is_rebuilt_from_a_logs_records() -> None:
    tc = TimeControl(decision_ms=100, bank_ms=2000, fault_limit=3)
    seats = [
        house_seat(0, "a"),
        ScriptedSeat(1, always("late"), seed="l"),  # pays from its bank
        ScriptedSeat(2, in_turn("error", "ok", "malformed", "ok", "timeout"), seed="f"),
        house_seat(3, "c"),
    ]
    log = record(HANDS, 9, seats, time_control=tc)
    records = [d for hand in log.hands for d in hand.decisions]
    book = FaultBook.from_records(tc, records)
    assert book.faults == list(log.faults) and book.forfeited == set(log.forfeited) == {2}
    banks = [tc.bank_ms] * 4
    for r in records:
        if r.time_bank_ms is not None and r.latency_ms is not None:
            banks[r.seat] = tc.charge(r.time_bank_ms, r.latency_ms)[0]
    assert book.banks == banks and banks[1] < tc.bank_ms
