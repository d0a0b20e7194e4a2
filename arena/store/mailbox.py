"""Where the arena and its pull bots meet in Redis: requests waiting for a bot's answer, the
answers, each bot's live connection and who is connected (docs/PROTOCOL.md, "Pull bots").

A request is *offered* (kept in the bot's waiting hash, and published so that the web process
holding the bot's stream sends it at once); its asker then blocks on the answer's list
(``BLPOP``: no polling). An answer *claims* its request by removing it from the waiting hash
in the same Lua script that pushes the answer, and an asker whose deadline passed *withdraws*
it the same way: exactly one of the two wins, so an answer is either used or refused as late,
never both. Notices are only published: like a push bot's, they are fire and forget.

Each stream connection takes the next number of its bot's connection counter; a newer
connection replaces an older one, and only the current one counts its bot as connected.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import redis

from arena.errors import NotFoundError, WrongStateError
from arena.store import keys, replies

ANSWER_KEPT_S = 60
"""How long an answer waits for its asker to read it (the asker is already waiting)."""
CLOSED_KEPT_S = 600
"""How long a request that was answered or withdrawn is remembered, so that a late answer is
told why it is refused."""
_WAITING_KEPT_S = 3600
"""A bot's waiting hash outlives its last request by this much (a worker killed while asking
leaves its request behind; it expires anyway)."""

_CLAIM = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  if ARGV[2] ~= '' then
    redis.call('RPUSH', KEYS[2], ARGV[2])
    redis.call('EXPIRE', KEYS[2], ARGV[4])
  end
  redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[5])
  return 1
end
return redis.call('GET', KEYS[3])
"""
"""Remove request ARGV[1] from the waiting hash KEYS[1]; if it was there, push the answer
ARGV[2] (none when withdrawing) to KEYS[2] and remember why it closed (ARGV[3]) in KEYS[3], and
return 1; if not, return why it closed earlier (nil when never offered)."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('ZREM', KEYS[2], ARGV[2])
end
return 0
"""
"""Count bot ARGV[2] as disconnected (KEYS[2]) only if connection ARGV[1] is still its current
one (KEYS[1]): an old stream's end never hides a newer connection."""


@dataclass(frozen=True)
class Offer:
    """A request offered to a pull bot, as its stream sends it."""

    id: str
    line: str
    """The stream's line for it: the ``request`` event's JSON."""
    expires_at: float
    """Unix time after which nobody waits for its answer."""
    seq: int
    """When it was offered (nanoseconds): offers are sent in this order after a reconnect."""


class Mailbox:
    """The pull bots' requests, answers and connections in Redis (see the module's doc)."""

    def __init__(self, client: redis.Redis, *, clock: Any = time.time) -> None:
        self.redis = client
        self._clock = clock
        self._claim = client.register_script(_CLAIM)
        self._release = client.register_script(_RELEASE)

    # -- the asker's side (workers; the web for verification and the doctor) --------------------

    def offer(self, bot_id: str, request_id: str, line: str, *, seconds: float) -> None:
        """Keep ``line`` waiting for the bot's answer for ``seconds`` and wake its stream."""
        now = self._clock()
        kept = json.dumps({"line": line, "expires_at": now + seconds, "seq": time.time_ns()})
        pipe = self.redis.pipeline()
        pipe.hset(keys.pull_waiting(bot_id), request_id, kept)
        pipe.expire(keys.pull_waiting(bot_id), _WAITING_KEPT_S + round(seconds))
        pipe.publish(keys.PULL_EVENTS, _event(bot_id, "request", id=request_id, line=line))
        pipe.execute()

    def notify(self, bot_id: str, request_id: str, line: str) -> None:
        """Send ``line`` to the bot's stream if it is connected now; nothing waits for it."""
        self.redis.publish(keys.PULL_EVENTS, _event(bot_id, "notice", id=request_id, line=line))

    def wait(self, bot_id: str, request_id: str, seconds: float) -> bytes | None:
        """The bot's answer to ``request_id`` if it comes within ``seconds``, else None (and
        the request is withdrawn: an answer after that is refused as late)."""
        answer_key = keys.pull_answer(bot_id, request_id)
        if seconds >= 0.001:  # BLPOP's timeout is in whole milliseconds; 0 would block for ever
            found = self.redis.blpop([answer_key], timeout=seconds)
            if found is not None:
                return replies.blobs(found)[1]
        late = "closed: its deadline passed, and the arena played the protocol's fallback"
        if self._close(bot_id, request_id, b"", late) == 1:
            return None
        # the answer claimed the request an instant before the deadline, and is in the list
        return replies.blob(self.redis.lpop(answer_key))

    # -- the bot's side (the web process) -------------------------------------------------------

    def answer(self, bot_id: str, request_id: str, body: bytes) -> None:
        """Give the bot's answer to its asker; :class:`NotFoundError` for a request never sent
        to this bot, :class:`WrongStateError` saying why for one already closed."""
        outcome = self._close(bot_id, request_id, body, "closed: it was answered already")
        if outcome == 1:
            return
        why = replies.text(outcome)
        if why is None:
            raise NotFoundError(f"no request {request_id} was sent to bot {bot_id}")
        raise WrongStateError(f"request {request_id} is {why}")

    def waiting(self, bot_id: str) -> list[Offer]:
        """The bot's requests still waiting for its answer, oldest first (expired ones are
        dropped)."""
        raw = replies.fields(self.redis.hgetall(keys.pull_waiting(bot_id)))
        now = self._clock()
        offers, expired = [], []
        for request_id, kept in raw.items():
            data = json.loads(kept)
            if data["expires_at"] <= now:
                expired.append(request_id)
            else:
                offers.append(Offer(request_id, data["line"], data["expires_at"], data["seq"]))
        if expired:
            self.redis.hdel(keys.pull_waiting(bot_id), *expired)
        return sorted(offers, key=lambda offer: offer.seq)

    def connect(self, bot_id: str, *, expires_in: float) -> int:
        """A new connection of the bot: its number, which replaces any older connection. The
        bot counts as connected for ``expires_in`` seconds, unless refreshed."""
        number = replies.number(self.redis.incr(keys.pull_connection(bot_id)))
        pipe = self.redis.pipeline()
        pipe.zadd(keys.PULL_CONNECTED, {bot_id: self._clock() + expires_in})
        pipe.publish(keys.PULL_EVENTS, _event(bot_id, "connected", connection=number))
        pipe.execute()
        return number

    def refresh(self, bot_id: str, connection: int, *, expires_in: float) -> bool:
        """Count the bot as connected for another ``expires_in`` seconds, if ``connection`` is
        still its current one; whether it is."""
        current = replies.text(self.redis.get(keys.pull_connection(bot_id)))
        if current != str(connection):
            return False
        self.redis.zadd(keys.PULL_CONNECTED, {bot_id: self._clock() + expires_in})
        return True

    def disconnect(self, bot_id: str, connection: int) -> None:
        """The connection ended: the bot is no longer connected, unless a newer one is."""
        self._release(
            keys=[keys.pull_connection(bot_id), keys.PULL_CONNECTED], args=[connection, bot_id]
        )

    def close_stream(self, bot_id: str, reason: str) -> None:
        """End the bot's stream wherever it is held (``reason``: ``retired``)."""
        self.redis.publish(keys.PULL_EVENTS, _event(bot_id, "bye", reason=reason))

    # -- who is connected -----------------------------------------------------------------------

    def connected(self, bot_ids: Iterable[str]) -> set[str]:
        """Those of ``bot_ids`` connected now (one round trip)."""
        ids = list(bot_ids)
        if not ids:
            return set()
        now = self._clock()
        scores = replies.scores(self.redis.zmscore(keys.PULL_CONNECTED, ids))
        return {i for i, score in zip(ids, scores, strict=True) if score and score > now}

    def connected_count(self) -> int:
        """How many pull bots are connected now."""
        return replies.number(self.redis.zcount(keys.PULL_CONNECTED, f"({self._clock()}", "+inf"))

    def _close(self, bot_id: str, request_id: str, body: bytes, why: str) -> Any:
        return self._claim(
            keys=[
                keys.pull_waiting(bot_id),
                keys.pull_answer(bot_id, request_id),
                keys.pull_closed(bot_id, request_id),
            ],
            args=[request_id, body, why, ANSWER_KEPT_S, CLOSED_KEPT_S],
        )


def _event(bot_id: str, kind: str, **fields: Any) -> str:
    """A message on the pull bots' channel: which bot, what happened."""
    return json.dumps({"bot": bot_id, "kind": kind, **fields}, separators=(",", ":"))
