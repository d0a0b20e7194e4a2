"""Disputes (docs/DISPUTES.md): a bot's owner contests a decision (or a hand) of a match its
bot played, the arena gathers the evidence, the operator rules.

**Filing.** Only the owner of the bot that sat in the contested seat may file (the bot's
token); one open dispute per decision (or hand) at a time. A match still under its deal's
embargo may be disputed: the owner saw their own seat, and the evidence holds nothing else
(:mod:`arena.evidence`).

**Evidence.** Filing queues a worker's job (:func:`build_evidence`), which builds the report
once and keeps it with the dispute; a job run again finds it kept.

**Rulings.** The operator rejects a dispute (with a reason) or upholds it with a remedy:
``replay``, the match voided and played again from its deal with the same seats, or ``strike``,
the match voided and continued from the contested decision with its recorded answer applied
(only where the evidence says that answer could stand, :mod:`arena.strike`). The ruling is
kept as a sealed record naming the log it rules on (:mod:`replays.rulings`); the original log
is never changed. An upheld ruling's remedy is applied by a worker's job
(:func:`apply_remedy`), exactly once: one store transaction voids the match, withdraws what it
added to the standings and ratings (:mod:`arena.amends`), plans the replacement and marks the
ruling applied; the replacement's job is then queued (again, harmlessly, by a job run again).
Both remedies take this one path: they differ only in how the replacement is played.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from arena import evidence, matches
from arena.context import Arena
from arena.errors import InvalidError, NotAllowedError, NotFoundError, WrongStateError
from arena.queue import enqueue_evidence, enqueue_match, enqueue_remedy
from arena.records import (
    OPERATOR,
    BotStatus,
    Dispute,
    DisputeStatus,
    Match,
    Page,
    Remedy,
    Ruling,
    TournamentStatus,
)
from arena.store import new_id, timestamp
from replays.continuation import position
from replays.integrity import key_id_of, unpack
from replays.log import MatchLog
from replays.rulings import ruling_record
from replays.upgrade import read_log

STATEMENT_MAX = 2000
"""The longest statement (characters): a short account, the evidence does the rest."""
REASON_MAX = 2000


@dataclass(frozen=True)
class Shown:
    """A dispute as its caller may see it: the evidence only for its owner and the operator
    (None while it is being built, or for anyone else), the sealed ruling once ruled."""

    dispute: Dispute
    evidence: dict[str, Any] | None
    evidence_ready: bool
    sealed_ruling: dict[str, Any] | None


def file(
    arena: Arena,
    *,
    by: str,
    match_id: str,
    hand: int,
    decision: int | None,
    statement: str,
) -> Dispute:
    """File a dispute for the bot ``by`` (its owner's token proved it) and queue its evidence.
    Refusals: :class:`NotAllowedError` (not the owner of the contested seat),
    :class:`InvalidError` (no such hand or decision, an empty or long statement),
    :class:`WrongStateError` (the match is not over, or was voided; an open dispute already
    contests it)."""
    if by == OPERATOR:
        raise NotAllowedError("a dispute is filed by a bot's owner, with the bot's token")
    statement = statement.strip()
    if not statement or len(statement) > STATEMENT_MAX:
        raise InvalidError(
            f"say in 1 to {STATEMENT_MAX} characters what you contest", field="statement"
        )
    match = matches.get(arena, match_id)
    if by not in match.seats:
        raise NotAllowedError(
            f"your bot {by} did not play match {match_id}: a dispute contests your own bot's "
            "decisions"
        )
    if match.voided_by is not None:
        raise WrongStateError(
            f"match {match_id} was voided by dispute {match.voided_by}; its replay is "
            f"{match.replaced_by}"
        )
    log = _log(arena, match_id)
    seat = match.seats.index(by)
    _check_contested(log, seat, hand, decision)
    dispute = Dispute(
        id=new_id("d"),
        match_id=match_id,
        tournament_id=match.tournament_id,
        bot_id=by,
        seat=seat,
        hand=hand,
        decision=decision,
        statement=statement,
        status=DisputeStatus.OPEN,
        filed_at=timestamp(time.time()),
    )
    arena.store.disputes.file(dispute)
    enqueue_evidence(arena.queue, dispute.id)
    return dispute


def _log(arena: Arena, match_id: str) -> MatchLog:
    """The match's sealed log, through the accessor every reader uses (the operator's view:
    the caller decides what of it is shown)."""
    _, blob = matches.finished(arena, match_id, operator=True)
    return read_log(unpack(blob))


def _check_contested(log: MatchLog, seat: int, hand: int, decision: int | None) -> None:
    if not 1 <= hand <= len(log.hands):
        raise InvalidError(f"the match has hands 1 to {len(log.hands)}, not {hand}", field="hand")
    records = log.hands[hand - 1].decisions
    if decision is None:
        if not any(r.seat == seat for r in records):
            raise InvalidError(f"your bot made no decision in hand {hand}", field="hand")
        return
    if not 0 <= decision < len(records):
        raise InvalidError(
            f"hand {hand} has decisions 0 to {len(records) - 1}, not {decision}", field="decision"
        )
    if records[decision].seat != seat:
        raise NotAllowedError(
            f"decision {decision} of hand {hand} was seat {records[decision].seat}'s, not your "
            f"bot's (seat {seat}): a dispute contests your own bot's decisions",
            field="decision",
        )
    if log.continues is not None and position(log, hand, decision) <= log.continues.prefix:
        raise WrongStateError(
            f"decision {decision} of hand {hand} was taken from match {log.continues.match_id}, "
            "which this match continues, as a ruling decided: it was not played here"
        )


def get(arena: Arena, dispute_id: str, *, by: str | None) -> Shown:
    """The dispute: in full to its owner (``by`` its bot) and the operator; once ruled, its
    statement and ruling to anyone (its evidence stays theirs)."""
    dispute = arena.store.disputes.get(dispute_id)
    if dispute is None:
        raise NotFoundError(f"there is no dispute {dispute_id}")
    party = by in (OPERATOR, dispute.bot_id)
    if not party and dispute.status is DisputeStatus.OPEN:
        raise NotAllowedError(
            f"dispute {dispute_id} is open: it is shown to its bot's owner and the operator "
            "until it is ruled on"
        )
    kept = arena.store.disputes.evidence(dispute_id)
    return Shown(
        dispute,
        kept if party else None,
        kept is not None,
        arena.store.disputes.sealed_ruling(dispute_id),
    )


def listing(
    arena: Arena,
    *,
    by: str | None,
    page: int,
    per_page: int,
    open_only: bool = False,
    tournament_id: str | None = None,
) -> Page[Dispute]:
    """A tournament's ruled disputes (anyone); else the operator's view (all, or the open
    ones: ``open_only``) or an owner's (every dispute its bot's owner filed)."""
    book = arena.store.disputes
    if tournament_id is not None:
        return book.listing(page=page, per_page=per_page, tournament_id=tournament_id)
    if by is None:
        raise NotAllowedError(
            "name a tournament to see its rulings; the open disputes are the operator's to list"
        )
    if by == OPERATOR:
        return book.listing(page=page, per_page=per_page, open_only=open_only)
    return book.listing(page=page, per_page=per_page, bot_id=by)


def build_evidence(arena: Arena, dispute_id: str) -> None:
    """Build the dispute's evidence report and keep it (the job filing queues); a report kept
    already is kept as it is."""
    book = arena.store.disputes
    dispute = book.get(dispute_id)
    if dispute is None or book.evidence(dispute_id) is not None:
        return
    match, blob = matches.finished(arena, dispute.match_id, operator=True)
    sealed = unpack(blob)
    bot = arena.store.get_bot(dispute.bot_id)
    usable = bot is not None and bot.status is not BotStatus.RETIRED
    channel = matches.channel(arena.store, arena.config, bot) if bot and usable else None
    public = arena.replay_key().public_key()
    try:
        report = evidence.report(
            arena.store,
            dispute,
            sealed,
            read_log(sealed),
            public_keys={key_id_of(public): public},
            bot=bot if usable else None,
            channel=channel,
            embargoed=arena.store.embargo(match) is not None,
        )
    finally:
        if channel is not None:
            channel.close()
    book.keep_evidence(dispute_id, report)


def rule(
    arena: Arena,
    dispute_id: str,
    *,
    status: DisputeStatus,
    reason: str,
    remedy: Remedy | None,
) -> Dispute:
    """The operator's ruling: kept, sealed, and for an upheld dispute its remedy queued.
    Refusals: :class:`InvalidError` (no reason, an upheld ruling without a remedy, a
    rejection with one), :class:`WrongStateError` (ruled already; a match that cannot be
    played again)."""
    reason = reason.strip()
    if not reason or len(reason) > REASON_MAX:
        raise InvalidError(
            f"give the ruling's reason in 1 to {REASON_MAX} characters", field="reason"
        )
    if status is DisputeStatus.OPEN:
        raise InvalidError("a ruling rejects or upholds the dispute", field="status")
    if (status is DisputeStatus.UPHELD) != (remedy is not None):
        raise InvalidError(
            "an upheld dispute names its remedy (replay or strike); a rejected one has none",
            field="remedy",
        )
    dispute = get(arena, dispute_id, by=OPERATOR).dispute
    if dispute.status is not DisputeStatus.OPEN:
        raise WrongStateError(
            f"dispute {dispute_id} was ruled on already ({dispute.status.value}): a ruling is final"
        )
    match = matches.get(arena, dispute.match_id)
    replacement = None
    if remedy is not None:
        if remedy is Remedy.STRIKE:
            _check_strikable(arena, dispute)
        _check_replayable(arena, match)
        replacement = f"{match.id}-{remedy.value}"
    _, blob = matches.finished(arena, dispute.match_id, operator=True)
    now = timestamp(time.time())
    ruling = Ruling(status, reason, now, remedy, replacement)
    record = ruling_record(
        dispute_id=dispute.id,
        original=unpack(blob),
        hand=dispute.hand,
        decision=dispute.decision,
        bot_id=dispute.bot_id,
        seat=dispute.seat,
        statement=dispute.statement,
        status=status.value,
        reason=reason,
        remedy=None if remedy is None else remedy.value,
        replacement=replacement,
        ruled_at=now,
    )
    ruled = arena.store.disputes.rule(dispute_id, match.id, ruling, arena.sealed_record(record))
    if remedy is not None:
        enqueue_remedy(arena.queue, dispute_id)
    return ruled


def _check_strikable(arena: Arena, dispute: Dispute) -> None:
    """A fault is struck only on one decision whose evidence says its recorded answer could
    stand (:mod:`arena.answer_check`)."""
    if dispute.decision is None:
        raise InvalidError(
            "strike contests one decision's fault: a dispute on a whole hand is upheld with replay",
            field="remedy",
        )
    report = arena.store.disputes.evidence(dispute.id)
    if report is None:
        raise WrongStateError(
            f"the evidence of dispute {dispute.id} is not built yet: striking a fault rests on "
            "its answer check"
        )
    (item,) = report["decisions"]
    recorded = item["recorded"]["status"]
    check = item.get("answer_check") or {"why": "the evidence has no answer check"}
    if recorded == "ok":
        raise WrongStateError(f"decision {dispute.decision} had no fault to strike")
    if not check.get("could_stand"):
        raise WrongStateError(
            f"the recorded answer of decision {dispute.decision} could not stand "
            f"({check['why']}): uphold with replay, or reject"
        )


def _check_replayable(arena: Arena, match: Match) -> None:
    if match.voided_by is not None:
        raise WrongStateError(f"match {match.id} was voided already, by dispute {match.voided_by}")
    tid = match.tournament_id
    tournament = None if tid is None else arena.store.get_tournament(tid)
    if tournament is None or not match.deal_label:
        raise WrongStateError(f"match {match.id} is not a tournament's: it has no deal to replay")
    if tournament.status is TournamentStatus.CANCELLED:
        raise WrongStateError(f"tournament {tournament.id} was cancelled: nothing is played again")
    if tournament.gauntlet is not None:
        raise WrongStateError(
            "a gauntlet's deal is counted once all its rotations are over: cancel the gauntlet "
            "and start it again instead"
        )
    awaiting = arena.store.ratings_await_rerating()  # the re-rating will leave it out
    if (
        tournament.spec.rated
        and not awaiting
        and not arena.store.disputes.has_rating_effect(match.id)
    ):
        raise WrongStateError(
            f"match {match.id} was recorded before the arena kept each match's rating effect: "
            "its rating effect cannot be withdrawn"
        )


def apply_remedy(arena: Arena, dispute_id: str) -> None:
    """Apply an upheld ruling's remedy, once (the job :func:`rule` queues): the match voided,
    its effect on the results withdrawn and its replacement planned, in one transaction; then
    the replacement's job queued (a job run again queues nothing twice)."""
    dispute = arena.store.disputes.get(dispute_id)
    if dispute is None or dispute.ruling is None or dispute.ruling.remedy is None:
        return
    # the transaction is the one guard: it finds the ruling applied, or applies it, atomically
    arena.store.disputes.void_and_replace(dispute_id, _log(arena, dispute.match_id))
    if dispute.ruling.replacement is not None:
        enqueue_match(arena.queue, dispute.ruling.replacement)


def queue_remedy_again(arena: Arena, dispute_id: str) -> Shown:
    """Queue an upheld ruling's remedy job again (the operator, if a crash lost it): applying
    it twice changes nothing."""
    shown = get(arena, dispute_id, by=OPERATOR)
    if shown.dispute.ruling is None or shown.dispute.ruling.remedy is None:
        raise WrongStateError(f"dispute {dispute_id} has no upheld ruling with a remedy")
    enqueue_remedy(arena.queue, dispute_id)
    return shown
