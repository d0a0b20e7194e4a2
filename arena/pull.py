"""Pull bots, on the bot's side: the stream a pull bot holds open and the answers it sends back
(docs/PROTOCOL.md, "Pull bots").

:func:`open_stream` checks the bot and returns a :class:`Stream`, the NDJSON lines the web
process sends: a ``welcome``, then every request still waiting for the bot's answer (after a
reconnect: the same request, with the same id and body, on the same clock), then each request
or notice as it is offered, a blank keep-alive line every ``heartbeat_s`` seconds, and a
``bye`` when the connection is replaced by a newer one of the same bot, the bot retires or the
web process stops. :func:`answer` hands an answer to the request's asker.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Iterator

from arena.context import Arena
from arena.errors import UNAVAILABLE, InvalidError, WrongStateError
from arena.records import BotStatus, Transport
from arena.relay import Inbox, Relay
from arena.store.mailbox import Mailbox, Offer
from arena.transport import MAX_ANSWER_BYTES
from bot_sdk.protocol import PROTOCOL, SPOKEN

logger = logging.getLogger(__name__)

_REMEMBERED = 4096
"""A stream remembers this many request ids it sent, so that none is sent twice."""


def _line(event: dict[str, object]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class Stream:
    """One pull bot's connection, as the lines to send (see the module's doc). Closing it (the
    web server does when the client goes) counts the bot as no longer connected."""

    def __init__(
        self,
        mailbox: Mailbox,
        inbox: Inbox,
        relay: Relay,
        *,
        bot_id: str,
        status: BotStatus,
        heartbeat_s: float,
    ) -> None:
        self._mailbox, self._inbox, self._relay = mailbox, inbox, relay
        self.bot_id = bot_id
        self._status = status
        self._heartbeat_s = heartbeat_s
        self.connection = mailbox.connect(bot_id, expires_in=self._presence_s)
        self._sent: OrderedDict[str, None] = OrderedDict()
        self._closed = False

    @property
    def _presence_s(self) -> float:
        """How long one refresh counts the bot as connected: three heartbeats."""
        return 3 * self._heartbeat_s

    def __iter__(self) -> Iterator[bytes]:
        yield _line(
            {
                "type": "welcome",
                "bot_id": self.bot_id,
                "status": self._status.value,
                "heartbeat_s": self._heartbeat_s,
                "protocol": PROTOCOL,
                "protocols": list(SPOKEN),
            }
        )
        if self._relay.farewell is not None:  # the process stops: nothing more on this one
            yield _farewell(self._relay.farewell)
            return
        yield from self._waiting()
        refreshed = time.monotonic()
        while True:
            event = self._inbox.get(self._heartbeat_s)
            kind = None if event is None else event.get("kind")
            if event is None:
                yield b"\n"
            elif kind in ("request", "notice"):
                if self._first_time(str(event["id"])):
                    yield str(event["line"]).encode() + b"\n"
            elif kind == "resync":
                yield from self._waiting(again=bool(event.get("lost")))
            elif kind == "connected" and int(event["connection"]) > self.connection:
                yield _bye("replaced", "a newer connection of this bot took over")
                return
            elif kind == "bye":
                yield _farewell(str(event["reason"]))
                return
            elif kind == "say":
                yield str(event["line"]).encode() + b"\n"
            elif kind == "end":
                return
            if time.monotonic() - refreshed >= self._heartbeat_s:
                if not self._refresh():
                    yield _bye("replaced", "a newer connection of this bot took over")
                    return
                refreshed = time.monotonic()

    def _refresh(self) -> bool:
        """Count the bot connected for another while; False when a newer connection of it
        took over. While Redis is away the stream goes on (the relay sends what waits again
        once Redis is back) and the presence is refreshed at the next beat."""
        try:
            return self._mailbox.refresh(self.bot_id, self.connection, expires_in=self._presence_s)
        except UNAVAILABLE as error:
            logger.warning("pull bot %s: presence kept, Redis away: %s", self.bot_id, error)
            return True

    def say(self, event: dict[str, object]) -> None:
        """Send ``event`` on this stream, in order with the rest (a WebSocket's refusals)."""
        self._inbox.put({"kind": "say", "line": json.dumps(event, separators=(",", ":"))})

    def end(self) -> None:
        """End the stream at its next line (the bot's side of a WebSocket closed)."""
        self._inbox.put({"kind": "end"})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._relay.unsubscribe(self._inbox)
        try:
            self._mailbox.disconnect(self.bot_id, self.connection)
        except UNAVAILABLE:  # Redis is away: the bot's presence expires by itself
            logger.warning("could not mark pull bot %s disconnected", self.bot_id)

    def _waiting(self, *, again: bool = False) -> Iterator[bytes]:
        """The requests waiting for the bot's answer that this stream has not sent; ``again``:
        all of them (Redis was away, and refused any answer meanwhile)."""
        offers: list[Offer] = self._mailbox.waiting(self.bot_id)
        for offer in offers:
            if self._first_time(offer.id) or again:
                yield offer.line.encode() + b"\n"

    def _first_time(self, request_id: str) -> bool:
        if request_id in self._sent:
            return False
        self._sent[request_id] = None
        if len(self._sent) > _REMEMBERED:
            self._sent.popitem(last=False)
        return True


_FAREWELLS = {
    "retired": "the bot is retired: it plays no more",
    "shutdown": "the arena's web process is stopping: connect again",
}


def _bye(reason: str, message: str) -> bytes:
    return _line({"type": "bye", "reason": reason, "message": message})


def _farewell(reason: str) -> bytes:
    """The ``bye`` of a stream ended for ``reason`` (:meth:`Relay.end_all`, a retired bot)."""
    return _bye(reason, _FAREWELLS.get(reason, reason))


def open_stream(arena: Arena, relay: Relay, bot_id: str) -> Stream:
    """The stream of a pull bot that is not retired; :class:`WrongStateError` otherwise."""
    bot = arena.store.get_bot(bot_id)
    if bot is None:
        raise WrongStateError(f"there is no bot {bot_id}")
    if bot.transport is not Transport.PULL:
        raise WrongStateError(
            f"bot {bot_id} is a push bot: the arena calls its endpoint. Register a bot with "
            '"transport": "pull" to connect out'
        )
    if bot.status is BotStatus.RETIRED:
        raise WrongStateError(f"bot {bot_id} is retired: it plays no more")
    inbox = relay.subscribe(bot_id)
    try:
        return Stream(
            arena.store.mailbox,
            inbox,
            relay,
            bot_id=bot_id,
            status=bot.status,
            heartbeat_s=arena.config.stream_heartbeat_s,
        )
    except BaseException:
        relay.unsubscribe(inbox)
        raise


def answer(arena: Arena, bot_id: str, request_id: str, body: bytes) -> None:
    """The bot's answer to one of its requests, for the request's asker (who judges it as a push
    bot's answer); refused when empty or too large, unknown, or no longer waited for."""
    if not body:
        raise InvalidError(
            'the answer is empty: send the JSON a push bot would answer, e.g. {"card": "QS"}'
        )
    if len(body) > MAX_ANSWER_BYTES:
        raise InvalidError(
            f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer one small JSON "
            'object such as {"card": "QS"}'
        )
    arena.store.mailbox.answer(bot_id, request_id, body)


def connected(arena: Arena, bot_ids: list[str]) -> set[str]:
    """Those of ``bot_ids`` whose stream is open now."""
    return arena.store.mailbox.connected(bot_ids)
