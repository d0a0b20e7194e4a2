"""The pull bots' events in one web process: :class:`Relay`.

Whoever asks a pull bot publishes on one Redis channel (:mod:`arena.store.mailbox`); each web
process holds one subscription to it, in one thread (a greenlet under gevent), and hands each
event to the inbox of the stream that serves its bot here. Hundreds of idle streams then cost
one Redis connection and a queue each, not a connection or a thread each.

Pub/sub keeps nothing for a subscriber that is away, so nothing depends on it alone: the
requests themselves wait in the mailbox. When the subscription is lost (Redis restarted), the
relay subscribes again and tells every inbox to ``resync``: each stream then sends what is
waiting that it has not sent, and, after a lost subscription, what it sent too (an answer the
bot sent while Redis was away was refused, and the bot answers a request again the same way).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import redis

from arena.errors import UNAVAILABLE
from arena.store import keys, replies

logger = logging.getLogger(__name__)

Event = dict[str, Any]
RESYNC: Event = {"kind": "resync", "lost": False}
RESYNC_AFTER_LOSS: Event = {"kind": "resync", "lost": True}
_READY_WAIT_S = 5.0
"""How long a new stream waits for the relay's subscription before it is refused."""
_PING_EVERY_S = 15.0
"""How often an idle subscription is checked, so that a dead Redis connection is noticed."""
_POLL_S = 1.0
"""How often the relay looks whether any stream is left; with none, it unsubscribes."""
_RETRY_S = (0.1, 0.5, 1.0, 2.0, 5.0)


class Inbox:
    """The events of one bot, for one stream."""

    def __init__(self, bot_id: str) -> None:
        self.bot_id = bot_id
        self._events: queue.SimpleQueue[Event] = queue.SimpleQueue()

    def put(self, event: Event) -> None:
        self._events.put(event)

    def get(self, timeout: float) -> Event | None:
        """The next event, or None when ``timeout`` seconds pass without one."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None


class Relay:
    """One subscription to the pull bots' channel for the whole process (see the module's
    doc)."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._inboxes: dict[str, set[Inbox]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._farewell: str | None = None

    def subscribe(self, bot_id: str) -> Inbox:
        """An inbox for ``bot_id``'s events, from now on; an ``UNAVAILABLE`` error when the
        relay cannot subscribe. Once the streams are ended (:meth:`end_all`), the inbox is
        given at once, with nothing to wait for: its stream says ``bye`` after its welcome."""
        inbox = Inbox(bot_id)
        with self._lock:
            self._inboxes.setdefault(bot_id, set()).add(inbox)
            if self._farewell is not None:
                return inbox
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pull-relay", daemon=True)
                self._thread.start()
        if not self._ready.wait(_READY_WAIT_S):
            self.unsubscribe(inbox)
            raise redis.ConnectionError("the arena cannot subscribe to its Redis")
        return inbox

    def unsubscribe(self, inbox: Inbox) -> None:
        with self._lock:
            found = self._inboxes.get(inbox.bot_id)
            if found is not None:
                found.discard(inbox)
                if not found:
                    del self._inboxes[inbox.bot_id]

    def end_all(self, reason: str) -> None:
        """Tell every stream of this process to say ``bye`` and end, and every stream opened
        from now on to say it after its welcome (``shutdown``: the web process is stopping,
        and the bots should connect again, to a process that is not: one reconnecting at once
        could otherwise still reach this one and hold its stop for the graceful timeout)."""
        with self._lock:
            self._farewell = reason
        self._broadcast({"kind": "bye", "reason": reason})

    @property
    def farewell(self) -> str | None:
        """The reason every stream was ended for (:meth:`end_all`), or None."""
        return self._farewell

    @property
    def streams(self) -> int:
        """How many streams this process holds."""
        with self._lock:
            return sum(len(found) for found in self._inboxes.values())

    def _run(self) -> None:
        """Listen until no stream is left (then the thread ends: the next stream starts
        another), subscribing again whenever the subscription is lost."""
        failures = 0
        while True:
            try:
                self._listen(after_loss=failures > 0)
                return
            except UNAVAILABLE as error:
                self._ready.clear()
                wait = _RETRY_S[min(failures, len(_RETRY_S) - 1)]
                failures += 1
                logger.warning("pull relay: %s; subscribing again in %g s", error, wait)
                time.sleep(wait)
                if self._stopped_when_idle():
                    return

    def _stopped_when_idle(self) -> bool:
        """With no stream left, mark the relay stopped (under the lock that ``subscribe``
        starts it under, so that no new stream is left without a relay)."""
        with self._lock:
            if self._inboxes:
                return False
            self._thread = None
            self._ready.clear()
            return True

    def _listen(self, *, after_loss: bool) -> None:
        pubsub = replies.pubsub(self._client)
        try:
            cast(Callable[[str], None], pubsub.subscribe)(keys.PULL_EVENTS)
            pinged = time.monotonic()
            while True:
                message = pubsub.get_message(timeout=_POLL_S)
                if message is None:
                    if self._stopped_when_idle():
                        return
                    if time.monotonic() - pinged >= _PING_EVERY_S:
                        pubsub.ping()
                        pinged = time.monotonic()
                    continue
                if message["type"] == "subscribe":
                    if self._ready.is_set():
                        continue
                    self._ready.set()
                    # whatever was published while unsubscribed, and answered meanwhile
                    self._broadcast(RESYNC_AFTER_LOSS if after_loss else RESYNC)
                elif message["type"] == "message":
                    self._deliver(json.loads(message["data"]))
        finally:
            pubsub.close()

    def _deliver(self, event: Event) -> None:
        with self._lock:
            inboxes = list(self._inboxes.get(event.get("bot", ""), ()))
        for inbox in inboxes:
            inbox.put(event)

    def _broadcast(self, event: Event) -> None:
        with self._lock:
            inboxes = [inbox for found in self._inboxes.values() for inbox in found]
        for inbox in inboxes:
            inbox.put(event)
