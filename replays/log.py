"""The match log: everything needed to replay and audit a match without the service.

A log is a plain JSON object (``format: "gongzhu-replay/6"``); these dataclasses are its typed
form. ``MatchLog.from_json(log.to_json()) == log`` for every log. The format is documented in
docs/REPLAYS.md and described by ``replays/schemas/replay-6.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, Generic, TypeVar

from bot_sdk.protocol import PROTOCOL, ProtocolVersion, Status
from referee import (
    AnyMove,
    CardSet,
    DecisionKind,
    HandResult,
    Move,
    Outcome,
    Rules,
    Trick,
)
from replays.deals import DealSource

FORMAT = "gongzhu-replay/6"

_Member = TypeVar("_Member", bound=Enum)


class _Members(Generic[_Member]):
    """``kind(value)`` for an enum ``kind``, its members looked up by value first: calling an
    enum is slow, and a log reads one for each of its thousands of decisions."""

    def __init__(self, kind: type[_Member]) -> None:
        self._kind = kind
        self._members: dict[str, _Member] = {m.value: m for m in kind}

    def __call__(self, value: Any) -> _Member:
        found = self._members.get(value) if isinstance(value, str) else None
        return self._kind(value) if found is None else found


class Deadline(StrEnum):
    """Which deadline a timed-out decision ran out of."""

    LIMIT = "limit"
    """The decision's own limit: the seat's bank was empty."""
    BANK = "bank"
    """The decision's limit and then what was left of the seat's bank."""


class Connection(StrEnum):
    """The connection a request to a push bot went out on."""

    NEW = "new"
    REUSED = "reused"
    """Kept alive from an earlier request of the match."""


_connection = _Members(Connection)
_deadline = _Members(Deadline)
_kind = _Members(DecisionKind)
_status = _Members(Status)


@dataclass(frozen=True)
class Timing:
    """When a request went out and its answer came in, as the arena measured them: offsets in
    microseconds from the match's start on the arena's monotonic clock, durations in
    microseconds, sizes in bytes; ``None`` where nothing was measured (docs/REPLAYS.md,
    "Timing")."""

    sent_us: int | None = None
    """The request's last byte handed to the connection (None: it never went out)."""
    received_us: int | None = None
    """The answer's last byte received, or the last one before the arena gave up waiting."""
    connection: Connection | None = None
    """Only for a push bot; None over a pull bot's stream and in-process."""
    connect_us: int | None = None
    """A new connection's name resolution and TCP connect."""
    tls_us: int | None = None
    """A new HTTPS connection's TLS handshake."""
    bytes_sent: int | None = None
    bytes_received: int | None = None
    retried: bool | None = None
    """Sent again on a new connection after a kept-alive one turned out closed (push only)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "sent_us": self.sent_us,
            "received_us": self.received_us,
            "connection": None if self.connection is None else self.connection._value_,
            "connect_us": self.connect_us,
            "tls_us": self.tls_us,
            "bytes_sent": self.bytes_sent,
            "bytes_received": self.bytes_received,
            "retried": self.retried,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Timing | None:
        if data is None:
            return None
        connection = data.get("connection")
        return cls(
            sent_us=data.get("sent_us"),
            received_us=data.get("received_us"),
            connection=None if connection is None else _connection(connection),
            connect_us=data.get("connect_us"),
            tls_us=data.get("tls_us"),
            bytes_sent=data.get("bytes_sent"),
            bytes_received=data.get("bytes_received"),
            retried=data.get("retried"),
        )


@dataclass(frozen=True)
class DecisionRecord:
    """One decision: what the seat was asked, how it answered, and what the referee applied."""

    seat: int
    kind: DecisionKind
    applied: AnyMove
    """The move the referee applied: the bot's answer when ``status`` is ok, else the fallback."""
    status: Status = Status.OK
    decision_id: str = ""
    latency_ms: int | None = None
    """Wall-clock time from sending the request to having the answer (None when not asked)."""
    answer: str | None = None
    """The bot's answer as received (an excerpt for long or broken answers), for disputes."""
    fault: str | None = None
    """What was wrong, in words a bot author can act on (None when ``status`` is ok)."""
    time_limit_ms: int | None = None
    time_bank_ms: int | None = None
    """The time values sent with the request (they are part of its body)."""
    request_sha256: str | None = None
    """SHA-256 of the exact request body sent (None for bots played in-process)."""
    note: str | None = None
    """What the bot said about its answer, in the answer's ``note`` (at most 200 characters)."""
    deadline: Deadline | None = None
    """For a timeout, the deadline that expired (:meth:`TimeControl.deadline`); else None."""
    timing: Timing | None = None
    """When the request went out and the answer came in (None when the seat was not asked)."""

    def to_json(self) -> dict[str, Any]:
        move = self.applied.to_json()
        del move["seat"]
        return {
            "seat": self.seat,
            "kind": self.kind._value_,
            "applied": move,
            "status": self.status._value_,
            "decision_id": self.decision_id,
            "latency_ms": self.latency_ms,
            "answer": self.answer,
            "fault": self.fault,
            "time_limit_ms": self.time_limit_ms,
            "time_bank_ms": self.time_bank_ms,
            "request_sha256": self.request_sha256,
            "note": self.note,
            "deadline": None if self.deadline is None else self.deadline._value_,
            "timing": None if self.timing is None else self.timing.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DecisionRecord:
        seat = int(data["seat"])
        return cls(
            seat=seat,
            kind=_kind(data["kind"]),
            applied=Move.from_json({"seat": seat, **data["applied"]}),
            status=_status(data["status"]),
            decision_id=str(data.get("decision_id", "")),
            latency_ms=data.get("latency_ms"),
            answer=data.get("answer"),
            fault=data.get("fault"),
            time_limit_ms=data.get("time_limit_ms"),
            time_bank_ms=data.get("time_bank_ms"),
            request_sha256=data.get("request_sha256"),
            note=data.get("note"),
            deadline=None if data.get("deadline") is None else _deadline(data["deadline"]),
            timing=Timing.from_json(data.get("timing")),
        )


@dataclass(frozen=True)
class HandRecord:
    """One hand: the deal as dealt (before passing), every decision in order, and the result."""

    hand_number: int
    deal: tuple[CardSet, CardSet, CardSet, CardSet]
    first_leader: int
    decisions: tuple[DecisionRecord, ...]
    tricks: tuple[Trick, ...]
    result: HandResult
    dealer: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "hand_number": self.hand_number,
            "deal": [hand.names() for hand in self.deal],
            "dealer": self.dealer,
            "first_leader": self.first_leader,
            "decisions": [d.to_json() for d in self.decisions],
            "tricks": [t.to_json() for t in self.tricks],
            "result": self.result.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HandRecord:
        a, b, c, d = (CardSet.parse(hand) for hand in data["deal"])
        return cls(
            hand_number=int(data["hand_number"]),
            deal=(a, b, c, d),
            dealer=data.get("dealer"),
            first_leader=int(data["first_leader"]),
            decisions=tuple([DecisionRecord.from_json(x) for x in data["decisions"]]),
            tricks=tuple([Trick.from_json(t) for t in data["tricks"]]),
            result=HandResult.from_json(data["result"]),
        )


@dataclass(frozen=True)
class SeatInfo:
    """Who sat where: a registered bot (``http``), a house bot, or a person."""

    seat: int
    bot_id: str
    name: str
    version: str = ""
    kind: str = "http"
    hello: Timing | None = None
    """The ``hello`` before the match, measured as a decision's request is: the match's round
    trip to the bot (None when none was sent)."""
    protocol: ProtocolVersion = PROTOCOL
    """The version of the bot protocol the seat's requests are written in: the one its bot
    chose in the ``hello`` (``gongzhu-bot/1`` for a seat not asked over the wire)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "bot_id": self.bot_id,
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "protocol": self.protocol.value,
            "hello": None if self.hello is None else self.hello.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeatInfo:
        return cls(
            seat=int(data["seat"]),
            bot_id=str(data["bot_id"]),
            name=str(data["name"]),
            version=str(data.get("version", "")),
            kind=str(data.get("kind", "http")),
            hello=Timing.from_json(data.get("hello")),
            protocol=ProtocolVersion(data["protocol"]),
        )


@dataclass(frozen=True)
class TimeControl:
    decision_ms: int
    bank_ms: int
    fault_limit: int

    def to_json(self) -> dict[str, Any]:
        return {
            "decision_ms": self.decision_ms,
            "bank_ms": self.bank_ms,
            "fault_limit": self.fault_limit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimeControl:
        return cls(int(data["decision_ms"]), int(data["bank_ms"]), int(data["fault_limit"]))

    def charge(self, bank_ms: int, latency_ms: int) -> tuple[int, bool]:
        """The bank left after a decision that took ``latency_ms``, and whether it timed out:
        time beyond the decision's limit comes out of the bank, and a decision that needs more
        than the bank holds is a timeout.

        >>> TimeControl(1000, 5000, 5).charge(5000, 1800)
        (4200, False)
        >>> TimeControl(1000, 5000, 5).charge(300, 1800)
        (0, True)
        """
        overage = max(0, latency_ms - self.decision_ms)
        return max(0, bank_ms - overage), overage > bank_ms

    @staticmethod
    def deadline(bank_ms: int) -> Deadline:
        """The deadline a decision asked with ``bank_ms`` left in its seat's bank runs out of
        when it times out: its own limit if the bank is empty, else the bank.

        >>> TimeControl.deadline(0), TimeControl.deadline(400)
        (<Deadline.LIMIT: 'limit'>, <Deadline.BANK: 'bank'>)
        """
        return Deadline.BANK if bank_ms > 0 else Deadline.LIMIT


@dataclass(frozen=True)
class Continuation:
    """What a match that continues a voided one says of it (a dispute's ruling that struck a
    fault, docs/DISPUTES.md): the voided match, its sealed log's SHA-256, and ``prefix``, how
    many of its decisions (counted across hands, in order) this match re-enacted before the
    contested one, which is this match's decision ``prefix`` and applies the recorded answer."""

    match_id: str
    sha256: str
    prefix: int

    def to_json(self) -> dict[str, Any]:
        return {"match_id": self.match_id, "sha256": self.sha256, "prefix": self.prefix}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Continuation | None:
        if data is None:
            return None
        return cls(str(data["match_id"]), str(data["sha256"]), int(data["prefix"]))


@dataclass(frozen=True)
class MatchLog:
    """A whole match. ``places`` is the final ranking: the referee's, with forfeited seats last."""

    match_id: str
    rules: Rules
    deals: DealSource
    """Where the deals came from: a committed secret, a practice seed (:mod:`replays.deals`)."""
    seats: tuple[SeatInfo, ...]
    hands: tuple[HandRecord, ...]
    outcome: Outcome
    places: tuple[int, int, int, int]
    time_control: TimeControl
    forfeited: tuple[int, ...] = ()
    faults: tuple[int, int, int, int] = (0, 0, 0, 0)
    tournament_id: str | None = None
    table_id: str | None = None
    rated: bool = True
    started_at: str | None = None
    finished_at: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Free-form context (e.g. ``{"human": true}``) that the referee does not check."""
    continues: Continuation | None = None
    """For a match that continues a voided one: which, and up to where (None otherwise)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "match_id": self.match_id,
            "tournament_id": self.tournament_id,
            "table_id": self.table_id,
            "rated": self.rated,
            "rules": self.rules.to_json(),
            "deals": self.deals.to_json(),
            "time_control": self.time_control.to_json(),
            "seats": [s.to_json() for s in self.seats],
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "hands": [h.to_json() for h in self.hands],
            "outcome": self.outcome.to_json(),
            "forfeited": list(self.forfeited),
            "faults": list(self.faults),
            "places": list(self.places),
            "extra": dict(self.extra),
            "continues": None if self.continues is None else self.continues.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchLog:
        """Read a log of this format (see :func:`replays.upgrade.read_log` for older ones)."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} log: format is {data.get('format')!r}")
        outcome = Outcome.from_json(data["outcome"])
        return cls(
            match_id=str(data["match_id"]),
            tournament_id=data.get("tournament_id"),
            table_id=data.get("table_id"),
            rated=bool(data.get("rated", True)),
            rules=Rules.from_json(data["rules"]),
            deals=DealSource.from_json(data["deals"]),
            time_control=TimeControl.from_json(data["time_control"]),
            seats=tuple(SeatInfo.from_json(s) for s in data["seats"]),
            started_at=data.get("started_at"),
            finished_at=data.get("finished_at"),
            hands=tuple(HandRecord.from_json(h) for h in data["hands"]),
            outcome=outcome,
            forfeited=tuple(int(s) for s in data.get("forfeited", ())),
            faults=_four(data.get("faults", (0, 0, 0, 0))),
            places=_four(data["places"]),
            extra=dict(data.get("extra", {})),
            continues=Continuation.from_json(data.get("continues")),
        )


def final_places(outcome: Outcome, forfeited: Sequence[int]) -> tuple[int, int, int, int]:
    """The referee's places with every forfeited seat ranked last (forfeits share last place).

    >>> from referee import Termination
    >>> o = Outcome(Termination.THRESHOLD, (100, -1200, 50, 0), (1, 4, 2, 3), (1,), 5)
    >>> final_places(o, [0])
    (4, 3, 1, 2)
    """
    if not forfeited:
        return outcome.places
    kept = [s for s in range(4) if s not in forfeited]
    places = [0, 0, 0, 0]
    for seat in kept:
        places[seat] = 1 + sum(1 for other in kept if outcome.places[other] < outcome.places[seat])
    for seat in forfeited:
        places[seat] = len(kept) + 1
    return places[0], places[1], places[2], places[3]


def _four(values: Sequence[Any]) -> tuple[int, int, int, int]:
    a, b, c, d = (int(v) for v in values)
    return a, b, c, d
