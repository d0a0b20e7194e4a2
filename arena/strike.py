"""The remedy ``strike`` (docs/DISPUTES.md): the match that replaces a voided one re-enacts the
voided match's decisions up to the contested one, takes the contested decision's recorded
answer as if it had come in time, and is played on from there by asking the bots.

**Re-enacted decisions** are the voided log's records as they were (the card, the status, the
answer, the latency that was charged to the bank), with this match's decision id; nothing was
sent for them in this match, so they carry no request hash and no timing.

**The struck decision** applies the recorded answer (:mod:`arena.answer_check` says it could
stand: legal, and in time once the network's round trip is taken off). Its latency is the
answer's time less that round trip (``bot_us``, in whole milliseconds rounded up), which is
what the seat's bank is charged: within the allowance, so no fault. It too carries no request
hash and no timing.
"""

from __future__ import annotations

import dataclasses
import math

from arena import answer_check
from arena.records import Match, Remedy
from arena.store import Store
from bot_sdk.protocol import Status, parse_answer, read_note
from referee import Observation
from replays.continuation import decisions, position
from replays.integrity import digest, unpack
from replays.log import Continuation, DecisionRecord, MatchLog, Timing
from replays.upgrade import read_log


class StrikeError(ValueError):
    """The contested decision's recorded answer cannot stand: there is no fault to strike."""


class Strike:
    """The :class:`arena.match_loop.Reenactment` of a struck fault: ``voided``'s decisions
    before ``prefix``, then its decision ``prefix`` with its recorded answer."""

    def __init__(self, voided: MatchLog, sha256: str, prefix: int) -> None:
        self.continues = Continuation(voided.match_id, sha256, prefix)
        self._records = decisions(voided)[: prefix + 1]
        self._hello = {seat.seat: seat.hello for seat in voided.seats}

    def record(self, index: int, obs: Observation, ident: str) -> DecisionRecord | None:
        if index >= len(self._records):
            return None
        original = self._records[index]
        if index < self.continues.prefix:
            return dataclasses.replace(
                original, decision_id=ident, request_sha256=None, timing=None
            )
        return struck(original, obs, self._hello.get(original.seat), ident)


def struck(
    original: DecisionRecord, obs: Observation, hello: Timing | None, ident: str
) -> DecisionRecord:
    """``original``'s recorded answer applied without fault (:class:`StrikeError` unless
    :func:`arena.answer_check.check` says it could stand)."""
    verdict = answer_check.check(original, obs, hello)
    if not original.status.is_fault or not verdict.could_stand or original.answer is None:
        why = "it was no fault" if not original.status.is_fault else verdict.why
        raise StrikeError(f"the contested decision's answer cannot be struck in: {why}")
    assert verdict.bot_us is not None
    return DecisionRecord(
        seat=original.seat,
        kind=original.kind,
        applied=parse_answer(original.kind, original.answer.encode(), obs),
        status=Status.OK,
        decision_id=ident,
        latency_ms=max(0, math.ceil(verdict.bot_us / 1000)),
        answer=original.answer,
        time_limit_ms=original.time_limit_ms,
        time_bank_ms=original.time_bank_ms,
        note=read_note(original.answer.encode()),
    )


def for_match(store: Store, match: Match) -> Strike | None:
    """The re-enactment ``match`` plays, if it replaces a match voided by a ruling that struck
    a fault; else None."""
    voided = None if match.replaces is None else store.get_match(match.replaces)
    dispute = (
        None if voided is None or voided.voided_by is None else store.disputes.get(voided.voided_by)
    )
    if dispute is None or dispute.ruling is None or dispute.ruling.remedy is not Remedy.STRIKE:
        return None
    assert dispute.decision is not None  # a ruling strikes one decision's fault
    blob = store.replay_blob(dispute.match_id)
    if blob is None:
        raise LookupError(f"the voided match {dispute.match_id} has no log")
    sealed = unpack(blob)
    log = read_log(sealed)
    return Strike(log, digest(sealed), position(log, dispute.hand, dispute.decision))
