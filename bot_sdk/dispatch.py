"""Calling a bot for the arena's requests: on time, once per decision, never two calls at once.

This is the serving logic without HTTP (see :mod:`bot_sdk.server` for that):

- Each bot call runs in its own thread; the request waits for it until ``time_limit_ms`` minus
  a safety margin, then answers the protocol's fallback (and the call runs on to its end).
- A bot exception or an illegal move is logged with its traceback and answered with the
  fallback too, so a buggy bot degrades instead of faulting. Every fallback answer carries a
  ``note`` saying why (``fallback: ...``), which the arena records and counts.
  Both behaviours can be switched off while debugging.
- The first answer sent for a ``decision_id`` is final: a retry gets the same answer, and a
  retry arriving while the bot still thinks waits for the same call.
- Served a bot class (or any factory), every seat of every match gets its own instance, so
  per-match state never mixes; served an instance, all matches share it. Calls to one
  instance never overlap.
- The ``hello`` is answered with the latest protocol version both the arena and the SDK speak
  (or those it is told to speak). A ``gongzhu-bot/2`` request carries the current hand only:
  the earlier results it learnt (:mod:`bot_sdk.history`) are put back into the observation, so
  the bot sees the same observations in either version.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, NamedTuple, TypeVar

from bot_sdk.bot import Bot
from bot_sdk.history import MatchHistory
from bot_sdk.protocol import (
    FALLBACK_NOTE,
    MAX_NOTE,
    SPOKEN,
    AnswerError,
    Message,
    ProtocolVersion,
    answer_of,
    choose_protocol,
    encode,
    fallback_move,
    hello_answer,
    parse_answer,
    parse_hello_answer,
    pending_decision,
    read_decision,
    read_hand_end,
    read_last_result,
    read_match_end,
    read_protocol,
)
from referee import HandResult, Observation

logger = logging.getLogger(__name__)

BotSource = Bot | Callable[[], Bot]
"""A bot instance shared by all matches, or a factory (a ``Bot`` subclass) called per seat."""

DEFAULT_MARGIN_MS = 100
"""Time kept back from ``time_limit_ms`` for the answer's way back to the arena."""
NOTICE_WAIT_S = 1.0
"""How long a notification request waits for the bot before answering anyway."""

T = TypeVar("T")


class BotFailedError(Exception):
    """The bot failed a decision and the fallback is switched off for that failure."""


class _Seat(NamedTuple):
    bot: Bot
    lock: threading.Lock


class BotPool:
    """Which bot instance serves a seat of a match."""

    def __init__(self, source: BotSource, max_seats: int = 1024) -> None:
        self._factory: Callable[[], Bot] | None = None if isinstance(source, Bot) else source
        self.prototype: Bot = source if isinstance(source, Bot) else source()
        """The shared instance, or one made at start to answer the handshake."""
        self._shared = _Seat(self.prototype, threading.Lock())
        self._seats: OrderedDict[tuple[str, int], _Seat] = OrderedDict()
        self._max_seats = max_seats
        self._lock = threading.Lock()

    def seat(self, match_id: str, seat: int) -> _Seat:
        if self._factory is None:
            return self._shared
        key = (match_id, seat)
        with self._lock:
            found = self._seats.get(key)
            if found is None:
                found = self._seats[key] = _Seat(self._factory(), threading.Lock())
                if len(self._seats) > self._max_seats:
                    self._seats.popitem(last=False)
            self._seats.move_to_end(key)
            return found

    def release(self, match_id: str, seat: int) -> None:
        with self._lock:
            self._seats.pop((match_id, seat), None)


class Dispatcher:
    """Answers validated requests by calling the bot."""

    def __init__(
        self,
        source: BotSource,
        *,
        margin_ms: int = DEFAULT_MARGIN_MS,
        fallback_on_timeout: bool = True,
        fallback_on_error: bool = True,
        cache_size: int = 1024,
        protocols: tuple[ProtocolVersion, ...] = SPOKEN,
    ) -> None:
        if not protocols:
            raise ValueError("the bot must speak at least one protocol version")
        self.pool = BotPool(source)
        self.margin_ms = margin_ms
        self.fallback_on_timeout = fallback_on_timeout
        self.fallback_on_error = fallback_on_error
        self.protocols = protocols
        """The versions the bot may choose in a ``hello``."""
        self.history = MatchHistory()
        self._cache_size = cache_size
        self._answers: OrderedDict[str, Message] = OrderedDict()
        self._inflight: dict[str, Future[Message]] = {}
        self._lock = threading.Lock()
        parse_hello_answer(encode(self.hello()))  # a name the arena would refuse fails now

    def hello(self, request: Mapping[str, Any] | None = None) -> Message:
        """The answer to the ``hello`` ``request``: the bot's name and version, and the latest
        version of the protocol the request offers and the bot speaks (without a request, the
        latest it speaks)."""
        bot = self.pool.prototype
        offered = {"protocols": list(self.protocols)} if request is None else request
        protocol = choose_protocol(offered, self.protocols)
        return hello_answer(str(bot.name), str(bot.version), protocol)

    def decision(self, message: Mapping[str, Any], received_at: float) -> Message:
        """The answer to a decision request received at ``received_at`` (``time.monotonic()``)."""
        decision_id: str = message["decision_id"]
        last = read_last_result(message)
        if last is not None:
            self.history.learn(message["match_id"], message["seat"], last)
        obs = read_decision(message, self._earlier(message))
        with self._lock:
            sent = self._answers.get(decision_id)
            if sent is not None:
                self._answers.move_to_end(decision_id)
                return sent
            future = self._inflight.get(decision_id)
            if future is None:
                seat = self.pool.seat(message["match_id"], obs.seat)
                future = self._inflight[decision_id] = _call(seat, lambda: _answer(seat.bot, obs))
        budget_ms = max(message["time_limit_ms"] - self.margin_ms, message["time_limit_ms"] / 2)
        timeout = received_at + budget_ms / 1000 - time.monotonic()
        try:
            answer = future.result(timeout=max(timeout, 0) if self.fallback_on_timeout else None)
        except FutureTimeout:
            answer = fallback_answer(obs, f"the bot did not answer within {budget_ms:g} ms")
            logger.warning(
                "decision %s: the bot did not answer within %d ms; answered the fallback %s",
                decision_id, budget_ms, encode(answer).decode(),
            )  # fmt: skip
        except Exception as exc:
            if not self.fallback_on_error:
                with self._lock:
                    self._inflight.pop(decision_id, None)
                raise BotFailedError(f"{type(exc).__name__}: {exc}") from exc
            answer = fallback_answer(obs, failure(exc))
            logger.error(
                "decision %s: the bot failed; answered the fallback %s",
                decision_id, encode(answer).decode(), exc_info=exc,
            )  # fmt: skip
        with self._lock:
            self._inflight.pop(decision_id, None)
            answer = self._answers.setdefault(decision_id, answer)
            if len(self._answers) > self._cache_size:
                self._answers.popitem(last=False)
        return answer

    def hand_end(self, message: Mapping[str, Any]) -> None:
        result, observation = read_hand_end(message, self._earlier(message))
        if read_protocol(message) is ProtocolVersion.V2:
            self.history.learn(message["match_id"], message["seat"], result)
        seat = self.pool.seat(message["match_id"], message["seat"])
        self._notify(seat, lambda: seat.bot.hand_end(result, observation), "hand_end")

    def match_end(self, message: Mapping[str, Any]) -> None:
        outcome = read_match_end(message)
        seat = self.pool.seat(message["match_id"], message["seat"])
        self.pool.release(message["match_id"], message["seat"])
        self.history.forget(message["match_id"], message["seat"])
        self._notify(seat, lambda: seat.bot.match_end(outcome), "match_end")

    def _earlier(self, message: Mapping[str, Any]) -> tuple[HandResult, ...]:
        """What a ``gongzhu-bot/2`` request leaves out: the results of the hands before its own
        that the seat was told (none needed in ``gongzhu-bot/1``, whose requests carry them)."""
        if read_protocol(message) is ProtocolVersion.V1:
            return ()
        return self.history.earlier(
            message["match_id"], message["seat"], hand_number=message["hand_number"]
        )

    @staticmethod
    def _notify(seat: _Seat, notify: Callable[[], None], what: str) -> None:
        """Run a notification in order with the seat's decisions; wait a little for it, since
        its answer is ignored anyway, and log its failure."""

        def logged() -> None:
            try:
                notify()
            except Exception:
                logger.exception("the bot's %s failed", what)

        with contextlib.suppress(FutureTimeout):
            _call(seat, logged).result(timeout=NOTICE_WAIT_S)


def fallback_answer(obs: Observation, why: str) -> Message:
    """The protocol's fallback for ``obs``, with a note saying it is one, and why: the arena
    records the note with the decision and counts the bot's fallbacks."""
    return {**answer_of(fallback_move(obs)), "note": (FALLBACK_NOTE + why)[:MAX_NOTE]}


def failure(error: Exception) -> str:
    """Why a bot call failed, for the note: the refused move, or the exception."""
    if isinstance(error, AnswerError):
        return f"the bot's move was refused: {error}"
    return f"the bot raised {type(error).__name__}: {error}"


def _answer(bot: Bot, obs: Observation) -> Message:
    """The bot's answer, checked the way the arena will check it, so that an illegal move is
    caught here (and answered with the fallback) rather than faulting."""
    answer = answer_of(bot.decide(obs))
    parse_answer(pending_decision(obs).kind, encode(answer), obs)
    return answer


def _call(seat: _Seat, fn: Callable[[], T]) -> Future[T]:
    """Run ``fn`` under the seat's lock in a new daemon thread (a hung bot must not keep the
    server from exiting)."""
    future: Future[T] = Future()

    def run() -> None:
        with seat.lock:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="bot-call").start()
    return future
