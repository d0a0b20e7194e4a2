"""Serving a bot that connects out to the arena: for a bot behind NAT or a firewall, which the
arena cannot reach with a POST.

The bot holds one long-lived connection open to the arena, over one of two channels that carry
the same messages:

- ``websocket`` (the default): ``{arena}/api/bots/{bot_id}/ws`` (``ws://`` or ``wss://``). The
  arena sends each message as one JSON text message, and an empty one as a keep-alive; the bot
  sends each answer back on the same connection, as ``{"type": "answer", "id": ..., "body":
  ...}``, which saves an HTTP request per decision. An answer the arena does not take comes back
  as a ``refused`` message.
- ``stream``: ``GET {arena}/api/bots/{bot_id}/stream``, read as newline-delimited JSON (blank
  lines are keep-alives), each answer POSTed to ``{arena}/api/bots/{bot_id}/answers/{id}`` over
  a kept-alive session. Plain HTTP: for a proxy or firewall that blocks WebSockets (the
  WebSocket channel does not go through ``HTTPS_PROXY``), and readable with ``curl -N``.

Either way the arena sends a ``welcome``, then ``request`` messages carrying exactly the signed
messages a bot served with ``python -m bot_sdk serve`` receives, and a ``bye`` when it closes the
connection. Each request is checked and handled by the same :class:`~bot_sdk.server.BotApp` as
a served bot, off the reading thread so that a slow decision never holds up the connection (the
requests of one seat of a match in the arena's order, those of other seats at the same time).

The client reconnects when the connection ends, breaks or falls silent (nothing, not even a
keep-alive, for three heartbeats): at once the first time, then after 1, 2, 4, ... seconds (at
most 30), counting again from the start after a connection that lasted a minute. After a
reconnect the arena sends again every request still waiting for an answer; the dispatcher gives
a decision it has seen before the answer it gave the first time.

A bot whose token, id or kind is wrong is refused for good (401, 403, 404, 409), as is one whose
connection another connection replaced: :meth:`PullClient.run` then raises
:class:`ArenaRefusedError` saying why.

It logs (at INFO) each match a seat of the bot plays: a line when it starts (its ``hello``: the
match, the seat, the rules and the time control; the protocol does not name the opponents) and one
when it ends (its ``match_end``: the place and total, and what the client saw go wrong: answers
that were the bot's fallback, requests left unanswered), besides the warnings of each fault as it
happens.

The two channels are :mod:`bot_sdk.channels`; this module is the client over them, the same for
both.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import threading
import time
from collections import deque
from collections.abc import Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any, NamedTuple
from urllib.parse import quote

import requests

from bot_sdk.channels import (
    CHANNELS,
    CannotConnectError,
    Channel,
    Connection,
    ConnectRefusedError,
    DisconnectedError,
    StreamChannel,
    WebSocketChannel,
    authorized_session,
    error_of,
    ws_url,
)
from bot_sdk.protocol import Message, encode, is_fallback_note
from bot_sdk.server import BotApp, RefusedError

__all__ = [
    "CHANNELS",
    "DEFAULT_HEARTBEAT_S",
    "PERMANENT_STATUSES",
    "RETRY_STATUSES",
    "ArenaRefusedError",
    "Channel",
    "PullClient",
    "backoff_delay",
]
"""The pull client's API; ``Channel`` and ``CHANNELS`` come from :mod:`bot_sdk.channels`."""

logger = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_S = 10.0
"""The keep-alive interval assumed until the arena's welcome gives its own."""
PERMANENT_STATUSES = frozenset({401, 403, 404, 409})
"""Refusals of the connection that no retry can mend."""
RETRY_STATUSES = frozenset({429, 503})
"""Refusals of the connection to retry after ``Retry-After`` (or the back-off)."""
_HINTS = {
    401: "check the bot's token (--token or GONGZHU_BOT_TOKEN)",
    403: "the token belongs to another bot: check --bot-id",
    404: "check --bot-id and --arena",
}
_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


class ArenaRefusedError(Exception):
    """The arena refused the bot for good, or closed its connection for good (another connection
    replaced it, or the bot was retired): :meth:`PullClient.run` stops with this error.

    ``status`` is the connection's HTTP status (``None`` after a ``bye``); ``reason`` the arena's
    error code or the bye's reason.
    """

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status, self.reason = status, reason


class _Request(NamedTuple):
    """A request read from the connection."""

    id: str
    reply: bool
    headers: dict[str, str]
    body: str
    received_at: float
    message: Mapping[str, Any] | None
    """The body as a JSON object, read without checking its signature: only for the log and the
    seat's order (the bot's app checks it before anything is answered)."""


class _Ended(NamedTuple):
    """How one connection ended."""

    why: str
    up_s: float | None = None
    """How long the connection was open; ``None`` if it never opened."""
    retry_after_s: float | None = None
    """How long the arena asked to wait, if it did."""
    refused: bool = False
    """The arena refused the connection (a 429, a 503, ...): never reconnect at once."""


def backoff_delay(failures: int, *, base_s: float, cap_s: float, rng: random.Random) -> float:
    """How long to wait before reconnecting after ``failures`` connections in a row that failed
    or ended: nothing after the first (an arena restarting, a network blip), then ``base_s``,
    twice that, four times, ... up to ``cap_s``, each less up to half at random, so that the bots
    of a restarted arena do not all come back in step.

    >>> rng = random.Random(1)
    >>> [round(backoff_delay(n, base_s=1, cap_s=30, rng=rng), 2) for n in range(1, 9)]
    [0.0, 0.57, 1.85, 3.53, 5.02, 11.96, 21.74, 24.77]
    """
    if failures <= 1:
        return 0.0
    delay = min(cap_s, base_s * 2.0 ** min(failures - 2, 32))
    return delay * (0.5 + rng.random() / 2)


class PullClient:
    """Serves ``app``'s bot over a connection to the arena until :meth:`stop` or a permanent
    refusal.

    ``arena`` is the arena's base URL, ``bot_id`` and ``token`` the bot's id and API token.
    ``channel`` is ``"websocket"`` (the default: the answers go back on the connection) or
    ``"stream"`` (NDJSON and a POST per answer, for networks that block WebSockets).
    ``heartbeat_s`` is assumed until the welcome says otherwise; the connection is taken for dead
    when nothing arrives for three heartbeats. ``backoff_base_s`` and ``backoff_cap_s`` set the
    reconnection back-off (see :func:`backoff_delay`), which starts again after a connection that
    lasted ``stable_after_s``. ``drain_s``: how long :meth:`run` waits, when stopped, for the
    requests in hand to be answered.
    """

    def __init__(
        self,
        app: BotApp,
        *,
        arena: str,
        bot_id: str,
        token: str,
        channel: Channel = "websocket",
        heartbeat_s: float = DEFAULT_HEARTBEAT_S,
        backoff_base_s: float = 1.0,
        backoff_cap_s: float = 30.0,
        stable_after_s: float = 60.0,
        connect_timeout_s: float = 10.0,
        answer_timeout_s: float = 10.0,
        verify_timeout_s: float = 60.0,
        drain_s: float = 5.0,
        max_connections: int = 16,
        rng: random.Random | None = None,
    ) -> None:
        if not token:
            raise ValueError("give the bot's API token from the arena")
        if channel not in CHANNELS:
            raise ValueError(f"channel must be one of {', '.join(CHANNELS)}, not {channel!r}")
        self.app = app
        self.arena = arena.rstrip("/")
        self.bot_id = bot_id
        self.heartbeat_s = heartbeat_s
        self.status: str | None = None
        """The bot's status in the last welcome: ``pending``, ``active`` or ``paused``."""
        self._backoff_base_s = backoff_base_s
        self._backoff_cap_s = backoff_cap_s
        self._stable_after_s = stable_after_s
        self._connect_timeout_s = connect_timeout_s
        self._verify_timeout_s = verify_timeout_s
        self._drain_s = drain_s
        self._rng = rng or random.Random()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._handlers: set[threading.Thread] = set()
        self._lanes: dict[tuple[str, int], deque[_Request]] = {}
        """The requests waiting for their seat's thread, per seat of a match being handled."""
        self._verifying = False
        self._told_secret = False
        self._matches = _Matches()
        # Verification, and the stream's answers, go over their own pool, kept alive: a
        # decision's answer must not wait for a new TCP (and TLS) connection.
        self._http = authorized_session(token, max_connections)
        self._channel: Connection
        if channel == "websocket":
            self._channel = WebSocketChannel(
                ws_url(self._url("ws")),
                token,
                connect_timeout_s=connect_timeout_s,
                stop=self._stop,
            )
        else:
            self._channel = StreamChannel(
                self._url,
                token,
                self._http,
                connect_timeout_s=connect_timeout_s,
                answer_timeout_s=answer_timeout_s,
            )

    @property
    def channel(self) -> Channel:
        """The channel in use: ``"websocket"`` or ``"stream"``."""
        return self._channel.name

    def run(self) -> None:
        """Connect, serve and reconnect until :meth:`stop` (then return) or a permanent refusal
        (then raise :class:`ArenaRefusedError`). A client runs once."""
        failures = 0
        try:
            while not self._stop.is_set():
                ended = self._connect_once()
                if self._stop.is_set():
                    break
                if ended.up_s is not None and ended.up_s >= self._stable_after_s:
                    failures = 0
                failures += 1
                delay = ended.retry_after_s
                if delay is None:
                    delay = backoff_delay(
                        failures,
                        base_s=self._backoff_base_s,
                        cap_s=self._backoff_cap_s,
                        rng=self._rng,
                    )
                    if ended.refused:
                        delay = max(delay, self._backoff_base_s)
                logger.info("disconnected: %s; reconnecting in %.1f s", ended.why, delay)
                self._stop.wait(delay)
        finally:
            self._stop.set()
            self._drain()  # a WebSocket is still open meanwhile, for the answers in hand
            self._channel.close()
            self._http.close()
        logger.info("stopped")

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called (or :meth:`run` has returned)."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Make :meth:`run` return: from another thread, or from a signal handler (it takes no
        lock). Reading stops at once; the requests in hand are still answered."""
        self._stop.set()
        self._channel.interrupt()

    # -- the connection --------------------------------------------------------------------------

    def _url(self, *parts: str) -> str:
        return "/".join(
            [self.arena, "api", "bots", *(quote(p, safe="") for p in (self.bot_id, *parts))]
        )

    def _connect_once(self) -> _Ended:
        try:
            self._channel.open(3 * self.heartbeat_s)
        except ConnectRefusedError as refusal:
            return self._refused(refusal)
        except CannotConnectError as exc:
            return _Ended(exc.why, refused=exc.refused)
        opened = time.monotonic()
        try:
            why = "stopped" if self._stop.is_set() else self._read()  # stopped while connecting?
        finally:
            if not self._stop.is_set():
                self._channel.disconnect()  # else run() closes it once the answers are sent
        return _Ended(why, up_s=time.monotonic() - opened)

    def _refused(self, refusal: ConnectRefusedError) -> _Ended:
        """A connection refused: raise if for good, else say when to try again."""
        status = refusal.status
        what, message, from_arena = error_of(status, refusal.text)
        hint = refusal.hint if not from_arena and refusal.hint else _HINTS.get(status)
        if status in PERMANENT_STATUSES:
            raise ArenaRefusedError(
                f"the arena refused the connection ({what}): {message}"
                + (f" ({hint})" if hint else ""),
                status=status,
                reason=what.partition(" ")[2],
            )
        retry_after_s = _retry_after(refusal.retry_after) if status in RETRY_STATUSES else None
        return _Ended(
            f"the arena answered {what}: {message}", retry_after_s=retry_after_s, refused=True
        )

    def _read(self) -> str:
        """Handle the connection's messages until it ends; return why it ended."""
        try:
            for data, received_at in self._channel.messages():
                if self._stop.is_set():
                    return "stopped"
                if not data.strip():
                    continue  # a keep-alive: reading it was the point
                bye = self._handle(data, received_at)
                if bye is not None:
                    return bye
        except DisconnectedError as exc:
            return "stopped" if self._stop.is_set() else exc.why
        return "stopped" if self._stop.is_set() else "the arena ended the connection"

    def _handle(self, data: str | bytes, received_at: float) -> str | None:
        """Handle one message; after a ``bye``, why the connection ends."""
        try:
            message = json.loads(data)
        except ValueError:
            logger.warning("ignored a message that is not JSON: %.200r", data)
            return None
        if not isinstance(message, dict):
            logger.warning("ignored a message that is not an object: %.200r", data)
            return None
        kind = message.get("type")
        if kind == "request":
            self._start_request(message, received_at)
        elif kind == "welcome":
            self._welcome(message)
        elif kind == "refused":
            _log_refused_answer(message)
        elif kind == "bye":
            return self._bye(message)
        else:
            logger.debug("ignored a message of type %r", kind)
        return None

    def _welcome(self, message: Mapping[str, Any]) -> None:
        heartbeat = message.get("heartbeat_s")
        if isinstance(heartbeat, int | float) and not isinstance(heartbeat, bool) and heartbeat > 0:
            self.heartbeat_s = float(heartbeat)
            self._channel.set_silence(3 * self.heartbeat_s)
        offered = message.get("protocols") or [message.get("protocol")]
        if not any(p in offered for p in self.app.dispatcher.protocols):
            logger.warning(
                "the arena speaks %s, this bot %s: upgrade the SDK",
                offered, " and ".join(self.app.dispatcher.protocols),
            )  # fmt: skip
        status = message.get("status")
        self.status = status if isinstance(status, str) else None
        hello = self.app.dispatcher.hello()
        logger.info(
            "connected to %s over %s as %s: %s %s, status %s (%s)",
            self.arena, self.channel, message.get("bot_id", self.bot_id), hello["name"],
            hello["version"], status,
            "signatures verified" if self.app.verifies_signatures else "UNSIGNED",
        )  # fmt: skip
        if status == "pending":
            self._start_verification()
        elif status == "paused":
            logger.info("the bot is paused: the arena offers it no matches until it is resumed")

    def _bye(self, message: Mapping[str, Any]) -> str:
        reason = str(message.get("reason", ""))
        text = str(message.get("message", ""))
        if reason in {"replaced", "retired"}:
            raise ArenaRefusedError(
                f"the arena closed the connection ({reason}): {text}", reason=reason
            )
        return f"the arena closed the connection ({reason}): {text}"

    # -- requests and answers ----------------------------------------------------------------------

    def _start_request(self, message: Mapping[str, Any], received_at: float) -> None:
        request_id, reply = message.get("id"), message.get("reply")
        headers, body = message.get("headers"), message.get("body")
        if (
            not isinstance(request_id, str)
            or not request_id
            or not isinstance(reply, bool)
            or not isinstance(headers, dict)
            or not all(isinstance(v, str) for v in headers.values())
            or not isinstance(body, str)
        ):
            logger.warning(
                "ignored a request without a string id, a boolean reply, string headers and a "
                "string body: %.200s", json.dumps(message),
            )  # fmt: skip
            return
        request = _Request(request_id, reply, headers, body, received_at, _object_of(body))
        lane = _lane_of(request.message)
        with self._lock:
            queued = self._lanes.get(lane) if lane is not None else None
            if queued is not None:
                queued.append(request)  # its seat's thread handles it next
                return
            if lane is not None:
                self._lanes[lane] = deque()
            thread = threading.Thread(
                target=self._run_lane,
                args=(lane, request),
                daemon=True,  # a hung bot must not keep the process from exiting
                name=f"pull-request-{request_id}",
            )
            self._handlers.add(thread)
        thread.start()

    def _run_lane(self, lane: tuple[str, int] | None, request: _Request) -> None:
        """Handle ``request``, then the requests queued meanwhile for the same seat."""
        try:
            while True:
                self._answer(request)
                with self._lock:
                    queued = self._lanes.get(lane) if lane is not None else None
                    if not queued:
                        if lane is not None:
                            del self._lanes[lane]
                        return
                    request = queued.popleft()
        finally:
            with self._lock:
                self._handlers.discard(threading.current_thread())

    def _answer(self, request: _Request) -> None:
        request_id = request.id
        try:
            _, answer = self.app.handle(
                request.headers, request.body.encode("utf-8"), request.received_at
            )
            self._matches.handled(request.message, answer)
            if not request.reply:
                if answer is not None:
                    logger.warning(
                        "request %s asks for no reply: its answer is not sent", request_id
                    )
            elif answer is None:
                logger.warning(
                    "request %s asks for a reply to a notice: nothing to send", request_id
                )
            else:
                self._channel.send_answer(request_id, encode(answer))
        except RefusedError as refused:
            self._matches.unanswered(request.message)
            level = logging.ERROR if refused.status >= 500 else logging.WARNING
            logger.log(
                level, "request %s not answered (%s): %s%s", request_id, refused.code,
                refused.message, self._secret_hint() if refused.status == 401 else "",
            )  # fmt: skip
        except UnicodeEncodeError as exc:
            self._matches.unanswered(request.message)
            logger.warning(
                "request %s not answered (bad_request): its body is not UTF-8: %s", request_id, exc
            )
        except Exception:
            self._matches.unanswered(request.message)
            logger.exception("request %s not answered: the SDK failed", request_id)

    def _secret_hint(self) -> str:
        """Said once, after the first request whose signature does not verify."""
        with self._lock:
            if self._told_secret:
                return ""
            self._told_secret = True
        return (
            ". The arena signs every request with the bot's signing secret, shown once when the "
            "bot was registered (or its secret last rotated): set GONGZHU_BOT_SECRET (or the "
            "variables --secret-env names) to it and start the bot again. Lost it? "
            f"`gongzhu bots rotate-secret {self.bot_id} --token TOKEN` gives a new one"
        )

    def _start_verification(self) -> None:
        with self._lock:
            if self._verifying:
                return
            self._verifying = True
        threading.Thread(target=self._verify, daemon=True, name="pull-verify").start()

    def _verify(self) -> None:
        """Ask the arena to verify the bot: it sends a ``hello`` over the connection, which the
        reader answers meanwhile, and says whether the answer was right."""
        try:
            response = self._http.post(
                self._url("verify-endpoint"),
                data=b"{}",
                headers={"Content-Type": "application/json"},
                timeout=(self._connect_timeout_s, self._verify_timeout_s),
            )
        except requests.RequestException as exc:
            logger.error("verification failed: %s", exc)
        else:
            if response.status_code == HTTPStatus.OK:
                logger.info("verified: the bot is active")
            else:
                what, message, _ = error_of(response.status_code, response.text)
                logger.error("verification failed (%s): %s", what, message)
        finally:
            with self._lock:
                self._verifying = False

    def _drain(self) -> None:
        deadline = time.monotonic() + self._drain_s
        with self._lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(max(deadline - time.monotonic(), 0))


# -- helpers ---------------------------------------------------------------------------------------


def _object_of(body: str) -> Mapping[str, Any] | None:
    """A request's body as a JSON object, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _lane_of(message: Mapping[str, Any] | None) -> tuple[str, int] | None:
    """The match and seat a request is for, if it names them.

    A seat's requests are handled one after the other, in the arena's order: a push bot gets
    them in that order too, since the arena waits for each answer (a notice's too) before it
    sends the next. Without this a ``hand_end`` could reach the bot after the next hand's first
    decision, or after ``match_end``. Requests of other seats and matches never wait.
    """
    if message is None:
        return None
    match_id, seat = message.get("match_id"), message.get("seat")
    if isinstance(match_id, str) and isinstance(seat, int) and not isinstance(seat, bool):
        return match_id, seat
    return None


class _Seat:
    """What the client saw of one seat of a match: its decisions, the answers that were the
    bot's fallback, the requests left unanswered."""

    __slots__ = ("decisions", "fallbacks", "unanswered")

    def __init__(self) -> None:
        self.decisions = self.fallbacks = self.unanswered = 0

    def said(self) -> str:
        words = [f"{self.decisions} decision(s) answered"]
        if self.fallbacks:
            words.append(f"{self.fallbacks} with the bot's fallback")
        if self.unanswered:
            words.append(f"{self.unanswered} request(s) left unanswered (faults in the arena)")
        if len(words) == 1:
            words.append("no fallback, nothing left unanswered")
        return ", ".join(words)


class _Matches:
    """The seats of matches the client plays, and the lines it logs of each: one when it starts
    (its ``hello``), one when it ends (its ``match_end``), with what went wrong meanwhile."""

    KEPT = 1024
    """The most seats tallied at once: a match whose ``match_end`` never came is forgotten."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seats: dict[tuple[str, int], _Seat] = {}

    def handled(self, message: Mapping[str, Any] | None, answer: Message | None) -> None:
        """A request the bot's app handled: ``answer`` is what it answered (None for a notice)."""
        lane = _lane_of(message)
        if message is None or lane is None:
            return
        kind = message.get("type")
        if kind == "hello":
            with self._lock:
                self._seats.pop(lane, None)
                self._seat(lane)
            logger.info("match %s: seat %d, %s", lane[0], lane[1], _match_terms(message))
        elif kind == "decision":
            note = None if answer is None else answer.get("note")
            with self._lock:
                seat = self._seat(lane)
                seat.decisions += 1
                if isinstance(note, str) and is_fallback_note(note):
                    seat.fallbacks += 1
        elif kind == "match_end":
            with self._lock:
                seat = self._seat(lane)
                del self._seats[lane]
            logger.info(
                "match %s over: seat %d %s; %s",
                lane[0], lane[1], _outcome_of(message.get("outcome"), lane[1]), seat.said(),
            )  # fmt: skip

    def unanswered(self, message: Mapping[str, Any] | None) -> None:
        lane = _lane_of(message)
        if lane is not None:
            with self._lock:
                self._seat(lane).unanswered += 1

    def _seat(self, lane: tuple[str, int]) -> _Seat:
        """The lane's tally, new if there is none; the caller holds the lock."""
        seat = self._seats.get(lane)
        if seat is None:
            seat = self._seats[lane] = _Seat()
            while len(self._seats) > self.KEPT:
                del self._seats[next(iter(self._seats))]
        return seat


def _match_terms(hello: Mapping[str, Any]) -> str:
    """A match's rules and time control, from its ``hello``."""
    rules = hello.get("rules")
    if not isinstance(rules, dict):
        rules = {}
    variants = ", ".join(str(v) for v in rules.get("variants") or []) or "no variant"
    return (
        f"rules: {variants}; {hello.get('time_limit_ms')} ms a decision, "
        f"{hello.get('time_bank_ms')} ms bank"
    )


def _outcome_of(outcome: Any, seat: int) -> str:
    """Where the seat finished, from ``match_end``'s outcome."""
    try:
        place, total = outcome["places"][seat], outcome["totals"][seat]
        return (
            f"placed {place} of 4 with {total} ({outcome['termination']}, "
            f"{outcome['hands_played']} hand(s))"
        )
    except (KeyError, IndexError, TypeError):
        return "ended (no outcome read)"


def _log_refused_answer(message: Mapping[str, Any]) -> None:
    """A WebSocket's ``refused`` message: logged as a refused POST is."""
    status, error = message.get("status"), message.get("error", "")
    what = f"{status} {error}".strip() if isinstance(status, int) else str(error or "refused")
    logger.warning(
        "request %s: the arena did not take the answer (%s): %s",
        message.get("id"), what, message.get("message", "(no message)"),
    )  # fmt: skip


def _retry_after(value: str) -> float | None:
    """A ``Retry-After`` header in seconds (it may be a number of seconds or an HTTP date)."""
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)
