"""Disputes in Redis (docs/DISPUTES.md): filed with a claim on what they contest (one open
dispute at a time per decision), their evidence report kept once, their ruling kept with its
sealed record, and an upheld ruling's remedy applied exactly once.

**Exactly once.** :meth:`DisputeBook.void_and_replace` is one optimistic transaction
(WATCH/MULTI) over the dispute, the match, its tournament, its standings and its seats'
ratings: it first checks that the ruling is not yet applied, then voids the match, withdraws
its standings and rating effect (:mod:`arena.amends`), plans the replacement match and marks
the ruling applied, all in one ``EXEC``. A worker dying before the ``EXEC`` leaves nothing
done; one dying after it leaves everything done, and the job run again finds it so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import redis
from redis.client import Pipeline

from arena.amends import withdrawn_rating, withdrawn_standing
from arena.errors import AlreadyDisputedError, NotFoundError, WrongStateError
from arena.ratings import SCALE, head_to_head, is_rated
from arena.records import (
    Dispute,
    DisputeStatus,
    Match,
    MatchStatus,
    Page,
    Rating,
    Ruling,
    Standing,
)
from arena.store import codecs, keys, replies
from arena.store.codecs import timestamp
from replays.log import MatchLog


class DisputeBook:
    """The disputes' data (see the module's doc)."""

    def __init__(self, client: redis.Redis, *, clock: Callable[[], float] = time.time) -> None:
        self.redis = client
        self._clock = clock

    def _now(self) -> str:
        return timestamp(self._clock())

    def file(self, dispute: Dispute) -> Dispute:
        """Store a new open dispute; :class:`AlreadyDisputedError` if another open one contests
        the same decision (or hand)."""
        seq = replies.number(self.redis.incr(keys.SEQ))

        def store(pipe: Pipeline) -> None:
            holder = replies.text(pipe.hget(keys.DISPUTE_CLAIMS, dispute.claim))
            if holder is not None:
                what = "hand" if dispute.decision is None else "decision"
                raise AlreadyDisputedError(
                    f"dispute {holder} already contests this {what} and is open: add to it "
                    "rather than filing again, or wait for its ruling"
                )
            pipe.multi()
            pipe.hset(keys.DISPUTE_CLAIMS, dispute.claim, dispute.id)
            pipe.hset(keys.dispute(dispute.id), "dispute", codecs.to_json(dispute))
            pipe.zadd(keys.DISPUTES, {dispute.id: seq})
            pipe.zadd(keys.DISPUTES_OPEN, {dispute.id: seq})
            pipe.zadd(keys.bot_disputes(dispute.bot_id), {dispute.id: seq})

        replies.transaction(self.redis, store, keys.DISPUTE_CLAIMS)
        return dispute

    def get(self, dispute_id: str) -> Dispute | None:
        raw = replies.text(self.redis.hget(keys.dispute(dispute_id), "dispute"))
        return None if raw is None else codecs.from_json(raw, Dispute)

    def evidence(self, dispute_id: str) -> dict[str, Any] | None:
        raw = replies.text(self.redis.hget(keys.dispute(dispute_id), "evidence"))
        return None if raw is None else dict(json.loads(raw))

    def keep_evidence(self, dispute_id: str, report: dict[str, Any]) -> bool:
        """Keep the dispute's evidence report, if none is kept yet; returns whether it was."""
        kept = self.redis.hsetnx(keys.dispute(dispute_id), "evidence", codecs.dumps(report))
        return replies.boolean(kept)

    def sealed_ruling(self, dispute_id: str) -> dict[str, Any] | None:
        raw = replies.text(self.redis.hget(keys.dispute(dispute_id), "sealed_ruling"))
        return None if raw is None else dict(json.loads(raw))

    def listing(
        self,
        *,
        page: int,
        per_page: int,
        open_only: bool = False,
        tournament_id: str | None = None,
        bot_id: str | None = None,
    ) -> Page[Dispute]:
        """Disputes newest first: all, the open ones, a tournament's ruled ones or those a bot's
        owner filed."""
        if tournament_id is not None:
            index = keys.tournament_rulings(tournament_id)
        elif bot_id is not None:
            index = keys.bot_disputes(bot_id)
        else:
            index = keys.DISPUTES_OPEN if open_only else keys.DISPUTES
        start = (page - 1) * per_page
        pipe = self.redis.pipeline()
        pipe.zrevrange(index, start, start + per_page - 1)
        pipe.zcard(index)
        ids, total = pipe.execute()
        found = [d for d in map(self.get, replies.texts(ids)) if d is not None]
        return Page(found, replies.number(total), page, per_page)

    def rule(
        self, dispute_id: str, match_id: str, ruling: Ruling, sealed: dict[str, Any]
    ) -> Dispute:
        """Keep the ruling on an open dispute (on ``match_id``) and its sealed record. An upheld
        one with a remedy claims the match for it: :class:`WrongStateError` if the dispute was
        ruled, or if another ruling already voids the match."""
        key, match_key = keys.dispute(dispute_id), keys.match(match_id)

        def store(pipe: Pipeline) -> Dispute:
            raw = replies.text(pipe.hget(key, "dispute"))
            if raw is None:
                raise NotFoundError(f"there is no dispute {dispute_id}")
            dispute = codecs.from_json(raw, Dispute)
            if dispute.status is not DisputeStatus.OPEN:
                raise WrongStateError(
                    f"dispute {dispute_id} was ruled on already ({dispute.status.value}): a "
                    "ruling is final"
                )
            voiding = replies.text(pipe.hget(match_key, "voiding"))
            if ruling.remedy is not None and voiding is not None:
                raise WrongStateError(
                    f"match {match_id} is voided by the ruling on dispute {voiding} already: "
                    "reject this one, or uphold it on that ruling's replay"
                )
            ruled = replace(dispute, status=ruling.status, ruling=ruling)
            (filed,) = replies.scores(pipe.zmscore(keys.DISPUTES, [dispute_id]))
            pipe.multi()
            fields = {"dispute": codecs.to_json(ruled), "sealed_ruling": codecs.dumps(sealed)}
            pipe.hset(key, mapping=fields)
            pipe.zrem(keys.DISPUTES_OPEN, dispute_id)
            if dispute.tournament_id:
                pipe.zadd(keys.tournament_rulings(dispute.tournament_id), {dispute_id: filed or 0})
            pipe.hdel(keys.DISPUTE_CLAIMS, dispute.claim)
            if ruling.remedy is not None:
                pipe.hset(match_key, "voiding", dispute_id)
            return ruled

        return replies.transaction(self.redis, store, key, match_key)

    def has_rating_effect(self, match_id: str) -> bool:
        """Whether the match's rating effect was kept when it was recorded."""
        return replies.boolean(self.redis.hexists(keys.match(match_id), "rating_effect"))

    def void_and_replace(self, dispute_id: str, log: MatchLog) -> bool:
        """The remedy of the ruling on ``dispute_id`` (``replay`` or ``strike``: both void the
        match and plan its replacement), whose match's log is ``log``: the match voided, what
        it added to its tournament's standings and to the ratings withdrawn, its replacement
        planned (the same deal and seats; the caller queues its job, which replays or continues
        the match as the remedy says), the ruling marked applied. Returns False, changing
        nothing, if it was applied already."""
        match_id = log.match_id
        tid = log.tournament_id
        seats = [s.bot_id for s in log.seats]
        rated = is_rated(log)
        watched = [keys.dispute(dispute_id), keys.match(match_id)]
        if tid:
            watched += [keys.tournament(tid), keys.standings(tid)]
        if rated:
            watched += [keys.rating(b) for b in seats] + [keys.rating_versions(b) for b in seats]
            watched.append(keys.RATINGS_SCALE)
        seq = replies.number(self.redis.incr(keys.SEQ))

        def apply(pipe: Pipeline) -> bool:
            raw = replies.text(pipe.hget(keys.dispute(dispute_id), "dispute"))
            if raw is None:
                raise NotFoundError(f"there is no dispute {dispute_id}")
            dispute = codecs.from_json(raw, Dispute)
            ruling = dispute.ruling
            if ruling is None or ruling.remedy is None or ruling.replacement is None:
                raise WrongStateError(f"dispute {dispute_id} has no ruling that voids its match")
            if ruling.applied:
                return False
            match = codecs.match_from(match_id, replies.fields(pipe.hgetall(keys.match(match_id))))
            if match.voided_by is not None:
                raise WrongStateError(f"match {match_id} was voided by dispute {match.voided_by}")
            effect = self._rating_effect(pipe, match_id) if rated else []
            awaiting = replies.text(pipe.get(keys.RATINGS_SCALE)) != SCALE
            if rated and not effect and not awaiting:  # else the re-rating leaves it out
                raise WrongStateError(
                    f"match {match_id} was recorded before the arena kept each match's rating "
                    "effect: its rating effect cannot be withdrawn"
                )
            standings = {}
            if tid:
                for bot_id in dict.fromkeys(seats):
                    stored = replies.text(pipe.hget(keys.standings(tid), bot_id))
                    if stored is not None:
                        standing = codecs.from_json(stored, Standing)
                        standings[bot_id] = withdrawn_standing(standing, log)
            ratings = [
                (
                    self._current(pipe, after.bot_id),
                    withdrawn_rating(self._version(pipe, after), before, after),
                )
                for before, after in effect
            ]
            now = self._now()
            pipe.multi()
            pipe.hset(
                keys.match(match_id),
                mapping={"voided_by": dispute_id, "replaced_by": ruling.replacement},
            )
            self._plan_replacement(pipe, match, ruling.replacement, seq, now)
            if tid:
                for bot_id, standing in standings.items():
                    pipe.hset(keys.standings(tid), bot_id, codecs.to_json(standing))
                pipe.hincrby(keys.tournament(tid), "total", 1)
                pipe.hset(keys.tournament(tid), "updated_at", now)
            for current, rating in ratings:
                pipe.hset(
                    keys.rating_versions(rating.bot_id), rating.version, codecs.to_json(rating)
                )
                if current is not None and current.version == rating.version:
                    pipe.set(keys.rating(rating.bot_id), codecs.to_json(rating))
                    pipe.zadd(keys.LADDER, {rating.bot_id: rating.conservative})
            if rated:
                pipe.incr(keys.RATINGS_CHANGED)  # a re-rating under way must see this void
                for bot_id, opponent, figures in head_to_head(log):
                    for figure, value in figures.items():
                        pipe.hincrby(keys.head_to_head(bot_id), f"{opponent}|{figure}", -value)
            applied = replace(dispute, ruling=replace(ruling, applied=True))
            pipe.hset(keys.dispute(dispute_id), "dispute", codecs.to_json(applied))
            return True

        return replies.transaction(self.redis, apply, *watched)

    def _plan_replacement(
        self, pipe: Pipeline, voided: Match, replacement: str, seq: int, now: str
    ) -> None:
        """The replacement's hash and indexes, as :meth:`Store.create_match` writes a planned
        match (its deal counted unfinished again, so its other rotations are under embargo
        until it is recorded, if the tournament is not over)."""
        planned = Match(
            replacement,
            voided.tournament_id,
            voided.table_id,
            voided.seats,
            MatchStatus.QUEUED,
            now,
            deal_label=voided.deal_label,
            replaces=voided.id,
        )
        pipe.hset(
            keys.match(replacement),
            mapping={"status": MatchStatus.QUEUED.value, **codecs.planned_match_fields(planned)},
        )
        indexes = [keys.MATCHES, *(keys.bot_matches(b) for b in set(voided.seats))]
        if voided.tournament_id:
            indexes.append(keys.tournament_matches(voided.tournament_id))
            if voided.deal_label:
                pipe.hincrby(keys.unfinished_deals(voided.tournament_id), voided.deal_label, 1)
        for index in indexes:
            pipe.zadd(index, {replacement: seq}, nx=True)

    @staticmethod
    def _rating_effect(pipe: Pipeline, match_id: str) -> list[tuple[Rating, Rating]]:
        raw = replies.text(pipe.hget(keys.match(match_id), "rating_effect"))
        if raw is None:
            return []
        return codecs.from_json(raw, list[tuple[Rating, Rating]])

    @staticmethod
    def _current(pipe: Pipeline, bot_id: str) -> Rating | None:
        raw = replies.text(pipe.get(keys.rating(bot_id)))
        return None if raw is None else codecs.from_json(raw, Rating)

    @staticmethod
    def _version(pipe: Pipeline, after: Rating) -> Rating:
        """The version's rating now (the one the match moved, if nothing moved it since)."""
        raw = replies.text(pipe.hget(keys.rating_versions(after.bot_id), after.version))
        return after if raw is None else codecs.from_json(raw, Rating)
