"""Calling a bot over HTTP: :class:`RemoteBot` is a :class:`~bot_sdk.Bot` whose every call is a
signed request to the bot's URL, over one keep-alive session, in the protocol version the bot
chose in its ``hello`` (``gongzhu-bot/1`` without one).

This is the small client the practice runner uses for a bot at a URL; it makes one attempt per
call and raises. The arena's hardened worker client (time control, retries, fault accounting)
is built on :mod:`bot_sdk.protocol` separately.
"""

from __future__ import annotations

import itertools
import logging
import time
import uuid
from collections.abc import Callable

import requests

from bot_sdk.bot import Bot
from bot_sdk.protocol import (
    DEFAULT_TIME_BANK_MS,
    DEFAULT_TIME_LIMIT_MS,
    PROTOCOL,
    BotInfo,
    Fault,
    Message,
    decision_id,
    decision_request,
    encode,
    hand_end_notice,
    hello_request,
    match_end_notice,
    parse_answer,
    parse_hello_answer,
    pending_decision,
    read_note,
)
from bot_sdk.signing import Secrets, sign
from referee import (
    AnyMove,
    Card,
    CardSet,
    DecisionKind,
    Expose,
    HandResult,
    Observation,
    Outcome,
    Pass,
    Play,
    Rules,
)

logger = logging.getLogger(__name__)

_MAX_ERROR_TEXT = 300


class RemoteBotError(Exception):
    """A call that got no usable HTTP answer; ``fault`` says how the arena would record it."""

    fault: Fault


class BotTimeoutError(RemoteBotError):
    fault = Fault.TIMEOUT


class BotUnreachableError(RemoteBotError):
    fault = Fault.CONNECTION


class BotHTTPError(RemoteBotError):
    fault = Fault.HTTP_STATUS

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"the bot answered HTTP {status}: {text}")
        self.status = status


class RemoteBot(Bot):
    """The bot at ``url``. ``secret`` signs each request (``None``: unsigned, for a bot served
    with ``--insecure``). ``match_id`` names the match in every request (default: a fresh
    ``practice-…`` id); ``seat`` is learnt from the observations if not given.

    Decisions raise :class:`RemoteBotError` or the :class:`~bot_sdk.protocol.AnswerError` of a
    bad answer; notifications are fire-and-forget: a failure is logged, never raised.
    """

    def __init__(
        self,
        url: str,
        secret: Secrets | None,
        *,
        timeout_s: float = 5.0,
        match_id: str | None = None,
        seat: int | None = None,
        time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
        time_bank_ms: int = DEFAULT_TIME_BANK_MS,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.match_id = match_id or f"practice-{uuid.uuid4().hex[:12]}"
        self.seat = seat
        self.time_limit_ms = time_limit_ms
        self.time_bank_ms = time_bank_ms
        self.name = "remote"
        self.version = "?"
        self.protocol = PROTOCOL
        """The version the bot chose in its ``hello`` (:data:`~bot_sdk.protocol.PROTOCOL` until
        then)."""
        self.note: str | None = None
        """The note of the bot's last answer (``bot_sdk.protocol.read_note``)."""
        self._secret = secret
        self._session = session or requests.Session()
        self._clock = clock
        self._seq = itertools.count()

    # -- the handshake and decisions ------------------------------------------------------------

    def hello(self, *, rules: Rules | None = None) -> BotInfo:
        """Shake hands; the bot's name, version and protocol version become this object's."""
        request = hello_request(
            match_id=self.match_id,
            seat=self.seat,
            rules=rules,
            time_limit_ms=self.time_limit_ms,
            time_bank_ms=self.time_bank_ms,
        )
        info = parse_hello_answer(self._post(request))
        self.name, self.version, self.protocol = info
        return info

    def decide(self, obs: Observation) -> AnyMove:
        kind = pending_decision(obs).kind
        self.seat = obs.seat
        request = decision_request(
            obs,
            match_id=self.match_id,
            decision_id=decision_id(self.match_id, obs.hand_number, next(self._seq)),
            time_limit_ms=self.time_limit_ms,
            time_bank_ms=self.time_bank_ms,
            protocol=self.protocol,
        )
        body = self._post(request)
        self.note = read_note(body)
        return parse_answer(kind, body, obs)

    def play(self, obs: Observation) -> Card:
        move = self._ask(obs, DecisionKind.PLAY)
        assert isinstance(move, Play)  # parse_answer answers a play decision with a Play
        return move.card

    def expose(self, obs: Observation) -> CardSet:
        move = self._ask(obs, DecisionKind.EXPOSE)
        assert isinstance(move, Expose)
        return move.cards

    def pass_cards(self, obs: Observation) -> CardSet:
        move = self._ask(obs, DecisionKind.PASS)
        assert isinstance(move, Pass)
        return move.cards

    def _ask(self, obs: Observation, kind: DecisionKind) -> AnyMove:
        """Decide, refusing before any request when ``obs`` waits for another kind."""
        pending = pending_decision(obs).kind
        if pending is not kind:
            raise ValueError(f"seat {obs.seat} must {pending.value} now, not {kind.value}")
        return self.decide(obs)

    # -- notifications --------------------------------------------------------------------------

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.seat = observation.seat
        self._notify(
            hand_end_notice(result, observation, match_id=self.match_id, protocol=self.protocol)
        )

    def match_end(self, outcome: Outcome) -> None:
        if self.seat is None:
            logger.warning("match_end not sent to %s: its seat was never known", self.url)
            return
        self._notify(
            match_end_notice(
                outcome, match_id=self.match_id, seat=self.seat, protocol=self.protocol
            )
        )

    def _notify(self, notice: Message) -> None:
        try:
            self._post(notice)
        except RemoteBotError as exc:
            logger.warning("%s notice to %s failed: %s", notice["type"], self.url, exc)

    # -- transport ------------------------------------------------------------------------------

    def _post(self, message: Message) -> bytes:
        body = encode(message)
        headers = {"Content-Type": "application/json"}
        if self._secret is not None:
            headers |= sign(self._secret, body, int(self._clock()))
        try:
            response = self._session.post(
                self.url, data=body, headers=headers, timeout=self.timeout_s
            )
        except requests.Timeout as exc:
            raise BotTimeoutError(f"{self.url} did not answer within {self.timeout_s:g} s") from exc
        except requests.RequestException as exc:
            raise BotUnreachableError(f"cannot reach {self.url}: {exc}") from exc
        if not 200 <= response.status_code < 300:
            raise BotHTTPError(response.status_code, response.text[:_MAX_ERROR_TEXT])
        return response.content

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> RemoteBot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
