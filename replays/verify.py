"""Verification: re-run the referee over a log and confirm every decision, trick, score and rank.

``verify(log)`` checks that every decision was pending and legal, that every fault was answered
by the documented fallback, that every rebuilt request matches its recorded SHA-256, that
decision ids, time banks and recorded answers agree with the statuses, that every trick, hand
result, fault count, forfeit and the final ranking are what the referee gives. The first
discrepancy is reported precisely: the hand, the decision's index in that hand, and what the
log says against what the referee says.

The deals are checked against their source (:mod:`replays.deals`) when it can be known: a
practice seed always, a committed secret once it is revealed (in the log, or given as
``secret``). A secret that is not the committed one, or a deal that does not follow from it,
is a discrepancy.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field

from bot_sdk.protocol import (
    CANONICAL_PLAYS,
    AnswerError,
    Status,
    answer_move,
    body_sha256,
    decision_body,
    decision_id,
    decode,
    fallback_move,
    note_of,
    parse_answer,
)
from referee import PLAYS, DealError, Game, IllegalMoveError, Observation, observed_play_refusal
from replays.deals import DealScheme, SecretError, first_wrong_deal
from replays.faults import FaultBook
from replays.log import DecisionRecord, HandRecord, MatchLog, final_places

_JUDGED = frozenset({Status.OK, Status.INVALID, Status.ILLEGAL})
"""The statuses whose recorded answer the verifier judges again."""


_NOT_JSON = object()
"""What a recorded answer that is not JSON decodes to (:meth:`_Verifier.decoded`)."""


def judge_note(
    record: DecisionRecord, answer: object, mismatch: Callable[[str], _DiscrepancyError]
) -> None:
    """A decision's note is the one its recorded answer (decoded: ``answer``) carries (none
    without an answer)."""
    said = note_of(answer)
    if record.note != said:
        raise mismatch(f"the note {record.note!r} is not the answer's note {said!r}")


@dataclass(frozen=True)
class Discrepancy:
    hand: int | None
    """The hand number (None for the match as a whole)."""
    decision: int | None
    """The decision's index within its hand, from 0."""
    message: str

    def __str__(self) -> str:
        where = "match" if self.hand is None else f"hand {self.hand}"
        if self.decision is not None:
            where += f", decision {self.decision}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Verification:
    ok: bool
    hands: int
    decisions: int
    requests_checked: int
    discrepancy: Discrepancy | None = None
    deals_checked: bool = False
    """Whether every deal was checked against its source (False while a committed secret is not
    revealed, and for format 1 logs)."""
    rebuilt: Mapping[tuple[int, int], tuple[str, int]] = field(default_factory=dict)
    """For each decision of ``left_out`` that was reached, by (hand index, decision index): its
    rebuilt request's SHA-256 and size in bytes."""


def request_body(log: MatchLog, record: DecisionRecord, obs: Observation) -> bytes:
    """The exact body the arena sent for ``record``, rebuilt from the log and the referee, in
    the protocol version its seat spoke (``protocol`` in the log's seat info)."""
    return decision_body(
        obs,
        match_id=log.match_id,
        decision_id=record.decision_id,
        time_limit_ms=record.time_limit_ms or 0,
        time_bank_ms=record.time_bank_ms or 0,
        protocol=log.seats[record.seat].protocol,
    )


def replay(log: MatchLog) -> Iterator[tuple[HandRecord, int, DecisionRecord, Observation]]:
    """Walk the log through the referee: yields each decision with the seat's observation
    just before it was applied. Raises IllegalMoveError/DealError where the log breaks the rules."""
    game = Game(log.rules, deals=[h.deal for h in log.hands])
    for hand in log.hands:
        for index, record in enumerate(hand.decisions):
            obs = game.observation(record.seat)
            yield hand, index, record, obs
            game.push(record.applied)


def verify(
    log: MatchLog,
    *,
    check_requests: bool = True,
    secret: bytes | None = None,
    left_out: Collection[tuple[int, int]] = (),
) -> Verification:
    """Re-run the referee over ``log``; ``ok`` only if everything in it is what the rules give.
    ``secret`` is the tournament's revealed deal secret, for a log that does not carry it.

    ``left_out`` names decisions, by (hand index, decision index), whose recorded request hash
    a stored form left out (:mod:`replays.packing`): their requests are rebuilt all the same,
    counted among those checked, and their hashes and sizes returned (``rebuilt``), to be put
    back in the log, whose seal then shows whether they were the recorded ones."""
    deals = check_deals(log, secret)
    if deals.discrepancy is not None:
        return Verification(False, len(log.hands), 0, 0, deals.discrepancy)
    verifier = _Verifier(log, check_requests, left_out)
    try:
        verifier.run()
    except _DiscrepancyError as found:
        return Verification(
            False,
            len(log.hands),
            verifier.decisions,
            verifier.requests,
            found.discrepancy,
            rebuilt=verifier.rebuilt,
        )
    return Verification(
        True,
        len(log.hands),
        verifier.decisions,
        verifier.requests,
        None,
        deals.checked,
        verifier.rebuilt,
    )


@dataclass(frozen=True)
class DealCheck:
    checked: bool
    """Every deal was compared with its source (it could be known)."""
    discrepancy: Discrepancy | None = None


def check_deals(log: MatchLog, secret: bytes | None = None) -> DealCheck:
    """Every deal against the log's deal source, when it can be known: a practice seed, or a
    committed secret revealed in the log or given as ``secret`` (which must be the committed
    one)."""
    try:
        seed = log.deals.seed_with(secret)
    except SecretError as error:
        return DealCheck(False, Discrepancy(None, None, f"deals: {error}"))
    if seed is None:
        return DealCheck(False)
    wrong = first_wrong_deal(seed, [h.deal for h in log.hands])
    if wrong is None:
        return DealCheck(True)
    source = (
        f"the committed secret gives for {log.deals.label!r}"
        if log.deals.scheme is DealScheme.COMMITTED
        else f"the seed {log.deals.seed!r} gives"
    )
    return DealCheck(False, Discrepancy(wrong, None, f"deals: not the deal {source}"))


class _DiscrepancyError(Exception):
    def __init__(self, hand: int | None, decision: int | None, message: str) -> None:
        super().__init__(message)
        self.discrepancy = Discrepancy(hand, decision, message)


class _Verifier:
    def __init__(
        self, log: MatchLog, check_requests: bool, left_out: Collection[tuple[int, int]]
    ) -> None:
        self.log = log
        self.check_requests = check_requests
        self.left_out = left_out
        self.rebuilt: dict[tuple[int, int], tuple[str, int]] = {}
        self.decisions = 0
        self.requests = 0
        self.book = FaultBook.fresh(log.time_control)
        self.last_received_us = 0
        """The latest instant a decision's timing reached: the next request went out after."""
        self.game = Game(log.rules)  # replaced in run() by the logged deals
        self.answers: dict[str, object] = {}
        """Each distinct recorded answer, decoded (a match's answers repeat)."""

    def run(self) -> None:
        log = self.log
        try:
            self.game = Game(log.rules, deals=[h.deal for h in log.hands])
        except DealError as error:
            raise _DiscrepancyError(None, None, f"the deals are not valid: {error}") from None
        for number, hand in enumerate(log.hands, start=1):
            if hand.hand_number != number:
                raise _DiscrepancyError(
                    hand.hand_number, None, f"hands out of order: expected {number}"
                )
            if self.game.dealer != hand.dealer:
                raise _DiscrepancyError(
                    number, None, f"dealer: log says {hand.dealer}, referee says {self.game.dealer}"
                )
            for index, record in enumerate(hand.decisions):
                if len(self.game.results) >= number:
                    raise _DiscrepancyError(
                        number, index, "the hand was already over: extra decisions"
                    )
                self.decision(number, index, record)
                self.decisions += 1
            if len(self.game.results) < number:
                raise _DiscrepancyError(
                    number, None, f"the hand stops after {len(hand.decisions)} decisions"
                )
            self.hand(number, hand)
        self.end()

    def decision(self, hand: int, index: int, record: DecisionRecord) -> None:
        game, seat = self.game, record.seat

        def mismatch(message: str) -> _DiscrepancyError:
            return _DiscrepancyError(hand, index, message)

        obs = game.observation(seat) if 0 <= seat < 4 else None
        if obs is None or obs.decision is None or obs.decision.kind is not record.kind:
            pending = ", ".join(f"seat {d.seat} {d.kind.value}" for d in game.pending)
            raise mismatch(
                f"seat {seat} {record.kind.value}: not pending ({pending or 'nothing'} was)"
            )
        forfeited = self.book.forfeited
        if record.status is Status.FORFEIT_AUTOPLAY and seat not in forfeited:
            raise mismatch(f"seat {seat} auto-played before it forfeited")
        if record.status is not Status.FORFEIT_AUTOPLAY and seat in forfeited:
            raise mismatch(f"seat {seat} had forfeited but was asked ({record.status.value})")
        if record.status is not Status.OK and record.applied != fallback_move(obs):
            raise mismatch(
                f"status {record.status.value}, so the fallback {_move(fallback_move(obs))} "
                f"is due, but the log applied {_move(record.applied)}"
            )
        if self.check_requests and record.request_sha256 is not None:
            digest = body_sha256(request_body(self.log, record, obs))
            if digest != record.request_sha256:
                raise mismatch("the request rebuilt from the log does not match its SHA-256")
            self.requests += 1
        elif (hand - 1, index) in self.left_out:
            body = request_body(self.log, record, obs)
            self.rebuilt[hand - 1, index] = body_sha256(body), len(body)
            self.requests += 1
        expected_id = decision_id(self.log.match_id, hand, index)
        if record.decision_id and record.decision_id != expected_id:
            raise mismatch(
                f"decision id {record.decision_id!r} where {expected_id!r} is due: "
                "decisions were moved or dropped"
            )
        self.enter(record, mismatch)
        self.judge_timing(record, mismatch)
        if not _canonical_play(record, obs):
            answer = None if record.answer is None else self.decoded(record.answer)
            self.judge_answer(record, answer, obs, mismatch)
            judge_note(record, answer, mismatch)
        try:
            game.push(record.applied)
        except (IllegalMoveError, DealError) as error:
            raise mismatch(f"illegal {_move(record.applied)}: {error}") from None

    def enter(self, record: DecisionRecord, mismatch: Callable[[str], _DiscrepancyError]) -> None:
        """The decision in the fault book: each request carried the decision's limit and what was
        left of the seat's bank, time beyond the limit came out of the bank, a late answer is a
        timeout, and the fault is counted."""
        seat, limit = record.seat, self.log.time_control.decision_ms
        if record.time_limit_ms is not None and record.time_limit_ms != limit:
            raise mismatch(
                f"time limit: the request says {record.time_limit_ms} ms, the match's is {limit} ms"
            )
        bank = self.book.banks[seat]
        if record.time_bank_ms is not None and record.time_bank_ms != bank:
            raise mismatch(
                f"time bank: the request says {record.time_bank_ms} ms left, but the latencies "
                f"before it leave {bank} ms"
            )
        timed_out = self.book.enter(record)
        if record.status is Status.OK and timed_out:
            raise mismatch(
                f"status ok, but the answer took {record.latency_ms} ms: more than the {limit} ms "
                f"limit and the {bank} ms left in the bank, which is a timeout"
            )
        deadline = self.log.time_control.deadline(bank) if record.status is Status.TIMEOUT else None
        if record.deadline != deadline:
            raise mismatch(
                f"deadline: the log says {record.deadline}, but {bank} ms were left in the bank, "
                f"so the deadline is {deadline}"
            )

    def judge_timing(
        self, record: DecisionRecord, mismatch: Callable[[str], _DiscrepancyError]
    ) -> None:
        """The arena asks one seat at a time: a request goes out after the answers before it
        came in, and its own answer after it."""
        timing = record.timing
        if timing is None or timing.sent_us is None:
            return
        if timing.sent_us < self.last_received_us:
            raise mismatch(
                f"timing: sent at {timing.sent_us} us, before the answer before it came in "
                f"({self.last_received_us} us)"
            )
        received = timing.sent_us if timing.received_us is None else timing.received_us
        if received < timing.sent_us:
            raise mismatch(f"timing: received at {received} us, before it was sent")
        self.last_received_us = received

    def decoded(self, answer: str) -> object:
        """The recorded ``answer``'s JSON, decoded once for its move and its note
        (:data:`_NOT_JSON` if it is not JSON)."""
        found = self.answers.get(answer, None)
        if found is None:
            try:
                found = decode(answer.encode())
            except ValueError:
                found = _NOT_JSON
            self.answers[answer] = found
        return found

    def judge_answer(
        self,
        record: DecisionRecord,
        answer: object,
        obs: Observation,
        mismatch: Callable[[str], _DiscrepancyError],
    ) -> None:
        """A recorded answer (decoded: ``answer``) is judged again: it must be the applied move
        when the status is ok, and refused for the recorded reason when the status is invalid
        or illegal."""
        if record.answer is None or record.status not in _JUDGED:
            return
        status = record.status.value
        try:
            if isinstance(answer, dict):
                answered = answer_move(record.kind, answer, obs)
            else:  # refused as parse_answer refuses it, for the reason it gives
                answered = parse_answer(record.kind, record.answer.encode(), obs)
        except AnswerError as error:
            judged = error.fault.status
            if record.status is Status.OK:
                raise mismatch(f"status ok, but the answer is not: {error}") from None
            if judged is not record.status:
                message = f"status {status}, but the answer is {judged.value}: {error}"
                raise mismatch(message) from None
            return
        if record.status is not Status.OK:
            raise mismatch(f"status {status}, but the answer {record.answer} is a legal move")
        if answered != record.applied:
            raise mismatch(f"answer {record.answer} is not the applied {_move(record.applied)}")

    def hand(self, number: int, hand: HandRecord) -> None:
        tricks = self.game.hand_tricks[number - 1]

        def mismatch(message: str) -> _DiscrepancyError:
            return _DiscrepancyError(number, None, message)

        if hand.first_leader != tricks[0].leader:
            raise mismatch(
                f"first leader: log says {hand.first_leader}, referee says {tricks[0].leader}"
            )
        for i, (logged, real) in enumerate(zip(hand.tricks, tricks, strict=False), start=1):
            if logged != real:
                raise mismatch(
                    f"trick {i}: log says {logged.to_json()}, referee says {real.to_json()}"
                )
        if len(hand.tricks) != len(tricks):
            raise mismatch(f"{len(hand.tricks)} tricks logged, {len(tricks)} played")
        result = self.game.results[number - 1]
        if hand.result != result:
            raise mismatch(_result_difference(hand, result.to_json()))

    def end(self) -> None:
        log, outcome = self.log, self.game.outcome

        def mismatch(message: str) -> _DiscrepancyError:
            return _DiscrepancyError(None, None, message)

        if outcome is None:
            raise mismatch(f"the log ends after {len(log.hands)} hands but the match is not over")
        if log.outcome != outcome:
            raise mismatch(
                f"outcome: log says {log.outcome.to_json()}, referee says {outcome.to_json()}"
            )
        faults, forfeited = self.book.faults, sorted(self.book.forfeited)
        if tuple(faults) != log.faults:
            raise mismatch(
                f"fault counts: log says {list(log.faults)}, the decisions give {faults}"
            )
        if set(log.forfeited) != self.book.forfeited:
            raise mismatch(
                f"forfeits: log says {sorted(log.forfeited)}, the faults give {forfeited}"
            )
        places = final_places(outcome, forfeited)
        if log.places != places:
            raise mismatch(f"places: log says {list(log.places)}, referee says {list(places)}")


def _canonical_play(record: DecisionRecord, obs: Observation) -> bool:
    """Whether judging the recorded answer and its note again would find them right without
    decoding it: an answer taken as it was (status ok, no note) that is the canonical answer of
    the applied play (:data:`CANONICAL_PLAYS`), a card the seat may play (the SDK's check)."""
    card = CANONICAL_PLAYS.get(record.answer or "")
    return (
        card is not None
        and record.status is Status.OK
        and record.note is None
        and record.applied == PLAYS[record.seat][card]
        and observed_play_refusal(obs, card) is None
    )


def _result_difference(hand: HandRecord, real: dict[str, object]) -> str:
    logged = hand.result.to_json()
    for key in ("exposed", "scores", "totals"):
        if logged[key] != real[key]:
            return f"{key}: log says {logged[key]}, referee says {real[key]}"
    for seat, (a, b) in enumerate(zip(logged["seats"], real["seats"], strict=True)):  # type: ignore[call-overload]
        for key in a:
            if a[key] != b[key]:
                return f"seat {seat} {key}: log says {a[key]}, referee says {b[key]}"
    return "the hand result differs"


def _move(move: object) -> str:
    to_json = getattr(move, "to_json", None)
    if to_json is None:
        return repr(move)
    data = dict(to_json())
    data.pop("seat", None)
    return str(data)
