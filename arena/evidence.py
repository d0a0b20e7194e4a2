"""A dispute's evidence report (docs/DISPUTES.md, "The evidence"): built once, when the dispute
is filed, from the match's sealed log, and kept with the dispute.

It holds what settles the usual complaints, for each of the disputing seat's decisions the
dispute contests: the seal checked; the referee re-run over the log up to the decision; the
exact request the bot was sent, rebuilt and matched against the SHA-256 the log recorded
(:func:`replays.reask.rebuild`), with its signature headers; the recorded answer, status and
fault; the timing evidence (when the request went out and the answer came in, the connection,
which deadline expired); whether the recorded answer could stand, legal and in time
(:mod:`arena.answer_check`); the same request asked again now, through the arena's own transport
(its address rules, deadline and size cap), signed afresh; and the seat's view at that point.

**Only the disputing seat.** Everything in it is what that seat was sent or answered: its own
hand and the cards played in front of it, never another seat's hand. So the report may be built,
and shown to the bot's owner, while the match's deal is still under embargo; a discrepancy the
referee finds in the re-run is located but not described until the embargo lifts (its message
could name another seat's card).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from arena import answer_check
from arena.http_seat import Channel, HttpSeat
from arena.match_loop import Reply
from arena.records import Dispute, RegisteredBot
from arena.store import Store, timestamp
from bot_sdk.protocol import DecisionRequest, Status, body_sha256
from bot_sdk.signing import sign
from referee import Observation
from replays.integrity import IntegrityError, check
from replays.log import DecisionRecord, HandRecord, MatchLog, Timing
from replays.reask import ReaskError, Rebuilt, rebuild
from replays.verify import replay


def report(
    store: Store,
    dispute: Dispute,
    sealed: dict[str, Any],
    log: MatchLog,
    *,
    public_keys: Mapping[str, Ed25519PublicKey],
    bot: RegisteredBot | None,
    channel: Channel | None,
    embargoed: bool,
) -> dict[str, Any]:
    """The evidence report of ``dispute`` on the match of ``sealed`` (read as ``log``);
    ``channel`` asks the bot now (None: it cannot be asked, ``bot`` says why)."""
    seal = "ok"
    try:
        check(sealed, public_keys)
    except IntegrityError as error:
        seal = str(error)
    seat = dispute.seat
    info = log.seats[seat]
    decisions = [
        _decision(store, log, dispute=dispute, index=index, bot=bot, channel=channel)
        for index in _contested(log, dispute)
    ]
    return {
        "built_at": timestamp(datetime.now().timestamp()),
        "match_id": log.match_id,
        "seat": seat,
        "bot_id": info.bot_id,
        "seal": seal,
        "key_id": sealed.get("integrity", {}).get("key_id"),
        "rerun": _rerun(log, dispute.hand, max(_contested(log, dispute), default=0), embargoed),
        "time_control": log.time_control.to_json(),
        "hello": _timing(info.hello),
        "decisions": decisions,
    }


def _contested(log: MatchLog, dispute: Dispute) -> list[int]:
    """The indexes, in the hand, of the decisions the dispute contests: one, or the seat's
    decisions of the hand."""
    if dispute.decision is not None:
        return [dispute.decision]
    hand = log.hands[dispute.hand - 1]
    return [i for i, record in enumerate(hand.decisions) if record.seat == dispute.seat]


def _rerun(log: MatchLog, hand_number: int, index: int, embargoed: bool) -> dict[str, Any]:
    """The referee walked over the log to the decision (each move pushed through its rules)."""
    checked = 0
    try:
        for _step in _until(log, hand_number, index):
            checked += 1
    except ValueError as error:  # the referee's IllegalMoveError, DealError
        return {
            "ok": False,
            "decisions": checked,
            "discrepancy": "withheld while the deal is under embargo" if embargoed else str(error),
        }
    return {"ok": True, "decisions": checked, "discrepancy": None}


def _until(
    log: MatchLog, hand_number: int, index: int
) -> Iterator[tuple[HandRecord, int, DecisionRecord, Observation]]:
    """:func:`replays.verify.replay` as far as decision ``index`` of hand ``hand_number``."""
    for step in replay(log):
        yield step
        if step[0].hand_number == hand_number and step[1] == index:
            return


def _decision(
    store: Store,
    log: MatchLog,
    *,
    dispute: Dispute,
    index: int,
    bot: RegisteredBot | None,
    channel: Channel | None,
) -> dict[str, Any]:
    try:
        rebuilt = rebuild(log, dispute.hand, index)
    except ReaskError as error:
        record = log.hands[dispute.hand - 1].decisions[index]
        return {
            "hand": dispute.hand,
            "index": index,
            "recorded": _recorded(record),
            "request": {"error": str(error)},
        }
    record = rebuilt.record
    allowed = (record.time_limit_ms or 0) + (record.time_bank_ms or 0)
    return {
        "hand": dispute.hand,
        "index": index,
        "kind": record.kind.value,
        "decision_id": record.decision_id,
        "request": {
            "body": rebuilt.body.decode("utf-8"),
            "sha256": body_sha256(rebuilt.body),
            "recorded_sha256": record.request_sha256,
            "matches": rebuilt.hash_checked,
            "signature": _signature(store, log, dispute, record, rebuilt),
        },
        "recorded": _recorded(record),
        "timing": {
            **(_timing(record.timing) or {}),
            "time_limit_ms": record.time_limit_ms,
            "time_bank_ms": record.time_bank_ms,
            "allowed_ms": allowed,
            "latency_ms": record.latency_ms,
            "deadline": None if record.deadline is None else record.deadline.value,
        },
        "answer_check": answer_check.check(
            record, rebuilt.observation, log.seats[record.seat].hello
        ).to_json(),
        "reask": _reask(log, rebuilt, bot, channel),
        "view": rebuilt.observation.to_json(),
    }


def _recorded(record: DecisionRecord) -> dict[str, Any]:
    applied = record.applied.to_json()
    del applied["seat"]
    return {
        "status": record.status.value,
        "answer": record.answer,
        "fault": record.fault,
        "note": record.note,
        "applied": applied,
    }


def _timing(timing: Timing | None) -> dict[str, Any] | None:
    """The recorded timing, with the time between the request's last byte out and the
    answer's last byte in."""
    if timing is None:
        return None
    shown = timing.to_json()
    if timing.sent_us is not None and timing.received_us is not None:
        shown["elapsed_us"] = timing.received_us - timing.sent_us
    return shown


def _signature(
    store: Store, log: MatchLog, dispute: Dispute, record: DecisionRecord, rebuilt: Rebuilt
) -> dict[str, Any] | None:
    """The signature headers of the request, made again with the bot's current secret at the
    second it was sent (the match's start plus the recorded offset): the same headers the bot
    received unless its secret was rotated since, or the second is off by one."""
    if log.started_at is None or record.timing is None or record.timing.sent_us is None:
        return None
    try:
        secrets = store.signing_secrets(log.seats[dispute.seat].bot_id)
    except LookupError:
        return None
    started = datetime.fromisoformat(log.started_at).timestamp()
    return {"headers": sign(secrets[0], rebuilt.body, int(started + record.timing.sent_us / 1e6))}


def _reask(
    log: MatchLog, rebuilt: Rebuilt, bot: RegisteredBot | None, channel: Channel | None
) -> dict[str, Any]:
    """The same request asked again now, through the arena's transport, signed afresh, under
    the decision's own allowance (its limit and what was left of its bank then)."""
    if channel is None or bot is None:
        return {"asked": False, "why": "the bot is retired, or no longer registered"}
    record = rebuilt.record
    request = DecisionRequest(
        rebuilt.observation,
        match_id=log.match_id,
        decision_id=record.decision_id,
        time_limit_ms=record.time_limit_ms or 0,
        time_bank_ms=record.time_bank_ms or 0,
        protocol=log.seats[record.seat].protocol,
    )
    seat = HttpSeat(log.seats[record.seat], channel)
    try:
        reply: Reply = seat.ask(request)
    finally:
        seat.close()
    same = reply.status is Status.OK and record.status is Status.OK and reply.move == record.applied
    exchange = reply.exchange
    elapsed = None
    if exchange is not None and exchange.sent_ns is not None and exchange.received_ns is not None:
        elapsed = (exchange.received_ns - exchange.sent_ns) // 1000
    move = None
    if reply.move is not None:
        move = reply.move.to_json()
        del move["seat"]
    return {
        "asked": True,
        "at": timestamp(datetime.now().timestamp()),
        "endpoint": bot.endpoint or "(pull)",
        "status": reply.status.value,
        "answer": reply.answer,
        "fault": reply.fault,
        "move": move,
        "latency_ms": reply.latency_ms,
        "elapsed_us": elapsed,
        "same": same,
    }
