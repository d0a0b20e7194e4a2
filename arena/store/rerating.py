"""Re-rating the ladder: every rated match rated again from its sealed log, in the order the
matches were recorded, under today's model (:mod:`arena.ratings`), and the stored ratings
replaced by the result at once (docs/OPERATIONS.md, "Re-rating the ladder").

A store whose ratings were made on another scale (``gz:ratings:scale`` is not
:data:`arena.ratings.SCALE`: openskill's ratings, kept before the scale was named) does not mix
them with the current one: its rated matches are recorded, counted in the journal of rated
matches (``gz:rated``) and in the head-to-head figures, but move no rating, and the ladder is
shown empty until it is re-rated (:meth:`arena.store.Store.rating_level`). :func:`rerate`
then rates every match again.

**The order.** A match recorded with the journal is rated in the journal's order: the order
the results' transactions were applied. A match rated before the journal existed is known
from its participants' rating histories, which name each rated match with the time it was
recorded, to the second; those come first, by that time, then by the order the matches were
planned (``gz:matches``). A voided match (docs/DISPUTES.md) is left out, and counted in its
versions' ``amended``.

Once re-rated, the journal lists every rated match, those from before it first, so a later
re-rating reads the same order from the journal alone.

**Matches recorded meanwhile.** The new ratings are written in one transaction watching the
journal, the scale's name and a count of what changes the ratings wholesale
(``gz:ratings:changed``): a match recorded while the re-rating reads logs adds to the
journal, and the re-rating rates it too before it writes; a match voided meanwhile, or
another re-rating written meanwhile (which rewrites the journal), starts it again. Nothing is
lost if it stops before that transaction: the stored ratings are untouched, and running it
again starts again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from arena.ratings import ANCHOR, SCALE, is_rated, playing_rating, rate
from arena.records import Rating, RatingPoint
from arena.store import codecs, keys, replies
from replays.integrity import unpack
from replays.log import MatchLog

if TYPE_CHECKING:
    from redis.client import Pipeline

    from arena.store.store import Store

Rated = tuple[str, str]
"""A rated match: its id and when its result was recorded."""


@dataclass
class Replay:
    """Ratings rebuilt match by match, as :meth:`arena.store.Store.record_result` makes them."""

    current: dict[str, Rating] = field(default_factory=dict)
    """Each participant's rating of the version it played last."""
    versions: dict[tuple[str, str], Rating] = field(default_factory=dict)
    history: dict[tuple[str, str], list[RatingPoint]] = field(default_factory=dict)
    effects: dict[str, list[tuple[Rating, Rating]]] = field(default_factory=dict)
    amended: Counter[tuple[str, str]] = field(default_factory=Counter)

    def level(self) -> float:
        anchor = self.current.get(ANCHOR)
        return 0.0 if anchor is None else anchor.mu

    def add(self, log: MatchLog, at: str) -> None:
        """Rate one match recorded ``at``."""
        before = [
            playing_rating(
                s.bot_id,
                s.version,
                self.current.get(s.bot_id),
                self.versions.get((s.bot_id, s.version)),
                self.level,
            )
            for s in log.seats
        ]
        after = rate(log, before, at=at)
        self.effects[log.match_id] = list(zip(before, after, strict=True))
        for rating in after:
            self.current[rating.bot_id] = rating
            self.versions[(rating.bot_id, rating.version)] = rating
            point = RatingPoint(log.match_id, rating.mu, rating.sigma, at)
            self.history.setdefault((rating.bot_id, rating.version), []).append(point)

    def void(self, log: MatchLog) -> None:
        """A voided match: not rated, counted as withdrawn from its seats' versions."""
        for seat in log.seats:
            self.amended[(seat.bot_id, seat.version)] += 1

    def finished(self) -> tuple[dict[str, Rating], dict[tuple[str, str], Rating]]:
        """The current and the versions' ratings, each version with its withdrawn matches."""

        def marked(rating: Rating) -> Rating:
            return replace(rating, amended=self.amended[(rating.bot_id, rating.version)])

        current = {b: marked(r) for b, r in self.current.items()}
        return current, {k: marked(r) for k, r in self.versions.items()}


def rated_order(store: Store) -> tuple[list[Rated], int]:
    """Every rated match in the order it is to be rated (see the module's doc), and how many
    entries of the journal that includes."""
    journal = [_entry(raw) for raw in replies.texts(store.redis.lrange(keys.RATED, 0, -1))]
    journaled = {match_id for match_id, _ in journal}
    earlier: dict[str, str] = {}
    for key in store.redis.scan_iter(match=f"{keys.RATING_PATTERN}:history*", count=1000):
        for raw in replies.texts(store.redis.lrange(key, 0, -1)):
            point = codecs.from_json(raw, RatingPoint)
            if point.match_id not in journaled:
                earlier.setdefault(point.match_id, point.at)
    planned = replies.scores(store.redis.zmscore(keys.MATCHES, list(earlier))) if earlier else []
    seq = {m: float(s or 0) for m, s in zip(earlier, planned, strict=True)}
    ordered = sorted(earlier.items(), key=lambda item: (item[1], seq[item[0]], item[0]))
    return ordered + journal, len(journal)


def _entry(raw: str) -> Rated:
    match_id, at = json.loads(raw)
    return str(match_id), str(at)


def rerate(store: Store) -> int:
    """Rate every rated match again and replace the stored ratings (see the module's doc);
    returns the number of matches rated."""
    while True:
        changes = replies.text(store.redis.get(keys.RATINGS_CHANGED))
        replay = Replay()
        order, journaled = rated_order(store)
        done = rated = 0
        while True:
            for match_id, at in order[done:]:
                rated += _rate_one(store, replay, match_id, at)
            done = len(order)
            outcome = _commit(store, replay, order, journaled, changes)
            if outcome == "written":
                return rated
            if outcome == "again":
                break
            more = replies.texts(store.redis.lrange(keys.RATED, journaled, -1))
            order += [_entry(raw) for raw in more]
            journaled += len(more)


def _rate_one(store: Store, replay: Replay, match_id: str, at: str) -> int:
    blob = store.replay_blob(match_id, keep=False)  # every log: none kept in Redis
    if blob is None:
        raise ValueError(f"rated match {match_id} has no stored log")
    log = MatchLog.from_json(unpack(blob))
    if not is_rated(log):
        return 0
    if replies.text(store.redis.hget(keys.match(match_id), "voided_by")) is not None:
        replay.void(log)
        return 0
    replay.add(log, at)
    return 1


def _commit(
    store: Store, replay: Replay, order: Sequence[Rated], journaled: int, changes: str | None
) -> str:
    """Write the replay's ratings in place of the stored ones, and ``order`` as the journal
    (the matches rated before it existed then keep their order in it): ``written``; or
    ``more`` if the journal grew since (rate those too), ``again`` if a match was voided or
    another re-rating written since (start again: the journal itself may have been
    rewritten), changing nothing."""
    current, versions = replay.finished()

    def write(pipe: Pipeline) -> str:
        if replies.text(pipe.get(keys.RATINGS_CHANGED)) != changes:
            return "again"
        if replies.number(pipe.llen(keys.RATED)) != journaled:
            return "more"
        old = list(pipe.scan_iter(match=keys.RATING_PATTERN, count=1000))
        pipe.multi()
        if old:
            pipe.delete(*old)
        pipe.delete(keys.LADDER, keys.RATED)
        if order:
            pipe.rpush(keys.RATED, *(codecs.dumps(list(entry)) for entry in order))
        for rating in current.values():
            pipe.set(keys.rating(rating.bot_id), codecs.to_json(rating))
            pipe.zadd(keys.LADDER, {rating.bot_id: rating.conservative})
        for (bot_id, version), rating in versions.items():
            pipe.hset(keys.rating_versions(bot_id), version, codecs.to_json(rating))
        for (bot_id, version), points in replay.history.items():
            pipe.rpush(keys.history(bot_id, version), *map(codecs.to_json, points))
        for match_id, effect in replay.effects.items():
            pipe.hset(keys.match(match_id), "rating_effect", codecs.to_json(effect))
        pipe.set(keys.RATINGS_SCALE, SCALE)
        pipe.incr(keys.RATINGS_CHANGED)  # a re-rating under way elsewhere starts again
        return "written"

    watched: Sequence[str] = (keys.RATED, keys.RATINGS_SCALE, keys.RATINGS_CHANGED)
    return replies.transaction(store.redis, write, *watched)
