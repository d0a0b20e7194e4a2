"""A match that continues a voided one (a dispute's ruling that struck a fault,
docs/DISPUTES.md): checking it against the voided match's log.

Such a log says so in its header (:class:`replays.log.Continuation`): the voided log's
SHA-256 and ``prefix``, how many of its decisions (counted across hands, in order) were
re-enacted before the contested one. :func:`check_continuation` holds the two logs together:
the same deal and seats, the prefix's decisions the voided log's (each as it was recorded:
seat, kind, card, status, answer, fault, note, latency, time values; all but its id, request
hash and timing, which belong to the match that asked), and the contested decision, the
continuation's decision ``prefix``, the voided one's recorded answer taken without fault. That
the answer is the card applied is the referee's check (:func:`replays.verify.verify` judges
every ``ok`` answer), so a continuation is sound when both hold.
"""

from __future__ import annotations

from dataclasses import replace

from replays.log import DecisionRecord, MatchLog


class ContinuationError(ValueError):
    """The log is not the continuation of the voided one it names."""


def decisions(log: MatchLog) -> list[DecisionRecord]:
    """Every decision of ``log``, across hands, in order."""
    return [record for hand in log.hands for record in hand.decisions]


def position(log: MatchLog, hand: int, decision: int) -> int:
    """Where decision ``decision`` of hand ``hand`` (from 1) is in :func:`decisions`."""
    return sum(len(h.decisions) for h in log.hands[: hand - 1]) + decision


def check_continuation(log: MatchLog, voided: MatchLog, voided_sha256: str) -> int:
    """Check that ``log`` continues ``voided`` (whose sealed log's SHA-256 is
    ``voided_sha256``); returns its prefix. :class:`ContinuationError` names the first thing
    that does not hold."""
    header = log.continues
    if header is None:
        raise ContinuationError(f"match {log.match_id} does not continue another match")
    if (header.match_id, header.sha256) != (voided.match_id, voided_sha256):
        raise ContinuationError(
            f"match {log.match_id} continues match {header.match_id} with SHA-256 "
            f"{header.sha256}, not this log"
        )
    if (log.deals.label, log.deals.commitment) != (voided.deals.label, voided.deals.commitment):
        raise ContinuationError("it does not play the voided match's deal")
    if [s.bot_id for s in log.seats] != [s.bot_id for s in voided.seats]:
        raise ContinuationError("it does not seat the voided match's participants")
    ours, theirs = decisions(log), decisions(voided)
    prefix = header.prefix
    if not prefix < min(len(ours), len(theirs)):
        raise ContinuationError(f"its prefix {prefix} is beyond the decisions of the matches")
    for index, (mine, original) in enumerate(zip(ours[:prefix], theirs, strict=False)):
        if _step(mine) != _step(original):
            raise ContinuationError(
                f"decision {index} of the prefix, {_shown(mine)}, is not the voided match's "
                f"as it was recorded ({_shown(original)})"
            )
    struck, contested = ours[prefix], theirs[prefix]
    if not contested.status.is_fault or contested.answer is None:
        raise ContinuationError(
            f"the contested decision ({prefix}) has no fault with a recorded answer to strike"
        )
    if (struck.seat, struck.kind, struck.answer, struck.fault) != (
        contested.seat,
        contested.kind,
        contested.answer,
        None,
    ) or struck.status.is_fault:
        raise ContinuationError(
            f"decision {prefix} is not the contested decision's recorded answer "
            f"{contested.answer!r} taken without fault ({_shown(struck)})"
        )
    return prefix


def _step(record: DecisionRecord) -> DecisionRecord:
    """``record`` as a re-enactment copies it: without what belongs to the match that asked."""
    return replace(record, decision_id="", request_sha256=None, timing=None)


def _shown(record: DecisionRecord) -> str:
    move = record.applied.to_json()
    move.pop("seat", None)
    return f"seat {record.seat} {record.kind.value} {move} ({record.status.value})"
