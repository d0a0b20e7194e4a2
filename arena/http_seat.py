"""Asking a registered bot during a match: :class:`HttpSeat`, a match seat player.

Every decision is one signed request of the canonical body (``bot_sdk.protocol``) under a total
deadline (the decision's limit plus what is left of the seat's time bank), over the seat's
:class:`Channel`: a push bot's :class:`~arena.transport.BotTransport` (a POST to its endpoint:
a size cap, no redirects, one kept-alive connection for the match, and no connection at all to
a private address unless private endpoints are allowed), or a pull bot's
:class:`~arena.pull_transport.PullTransport` (the same body and signature over the stream the
bot holds open). Both are asked, timed and judged here alike.

The deadline is the arena's; but the answer is read for one network round trip beyond it (the
seat's ``hello``, at most :data:`EVIDENCE_GRACE_S`), so that an answer the network held back is
kept whole in the log as evidence for a dispute (docs/DISPUTES.md). It is still a timeout: what
decides is the time it took, not whether it was read.

Whatever goes wrong becomes a :class:`~arena.match_loop.Reply` with its :class:`Status` and a
fault message the bot's author can act on, which never names the bot's endpoint (the channel's
``redact``: a match's faults are public); :func:`arena.match_loop.play_match` applies the
fallback.
Every reply carries what the channel measured of its request (its
:class:`~arena.exchange.Exchange`), whatever became of it.
"""

from __future__ import annotations

import time
from typing import Protocol

from arena.exchange import Exchange
from arena.match_loop import Reply
from arena.transport import (
    MAX_ANSWER_BYTES,
    Clock,
    DeadlineError,
    HelloError,
    TooLargeError,
    TransportError,
    UnreachableError,
    connection_reason,
    excerpt,
)
from bot_sdk.protocol import (
    AnswerError,
    BotInfo,
    DecisionRequest,
    Message,
    Status,
    answer_move,
    answer_object,
    encode,
    hand_end_body,
    hello_request,
    match_end_notice,
    note_of,
    pending_decision,
)
from referee import HandResult, Observation, Outcome, Rules
from replays.log import SeatInfo

__all__ = ["EVIDENCE_GRACE_S", "MAX_ANSWER_BYTES", "Channel", "HelloError", "HttpSeat"]

EVIDENCE_GRACE_S = 0.5
"""At most this long past a decision's deadline an answer is still read, as evidence."""


class Channel(Protocol):
    """How a seat reaches its bot: :class:`~arena.transport.BotTransport` (push) or
    :class:`~arena.pull_transport.PullTransport` (pull)."""

    @property
    def shown(self) -> str:
        """The bot as error messages name it."""
        ...

    def redact(self, text: str) -> str:
        """``text`` as a message may show it (a push bot's endpoint hidden)."""
        ...

    @property
    def exchange(self) -> Exchange:
        """What the latest ``post`` (or ``hello``) measured."""
        ...

    def post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        """Send ``body`` and get the whole answer within ``seconds``: its HTTP status, redirect
        target and body. Raises ``DeadlineError``, ``TooLargeError``, ``UnreachableError`` or
        ``TransportError``."""
        ...

    def notify(self, body: bytes) -> None:
        """Send a notice; fire and forget."""
        ...

    def hello(self, request: Message, timeout_s: float) -> BotInfo:
        """The handshake: the bot's name and version, or ``HelloError``."""
        ...

    def close(self) -> None: ...


class HttpSeat:
    """A registered bot in one seat of one match (see the module's doc)."""

    def __init__(
        self, info: SeatInfo, transport: Channel, *, clock: Clock = time.monotonic
    ) -> None:
        self.info = info
        self._clock = clock
        self.transport = transport
        self._grace_s = 0.0
        """How long past a deadline an answer is still read: the hello's round trip."""

    def close(self) -> None:
        self.transport.close()

    def ask(self, request: DecisionRequest) -> Reply:
        obs, sha = request.observation, request.sha256
        time_limit_ms, time_bank_ms = request.time_limit_ms, request.time_bank_ms
        allowed_ms = time_limit_ms + time_bank_ms
        start = self._clock()

        def fault(
            status: Status, message: str, answer: str | None = None, note: str | None = None
        ) -> Reply:
            message = self.transport.redact(message)
            return Reply(
                None, status, self._ms_since(start), answer, message, sha, note, self.exchange
            )

        try:
            code, location, content = self.transport.post(
                request.body, allowed_ms / 1000 + self._grace_s
            )
        except DeadlineError as error:
            why = f": {error}" if str(error) else ""
            return fault(
                Status.TIMEOUT,
                f"no complete answer within {allowed_ms} ms (the {time_limit_ms} ms limit and "
                f"the {time_bank_ms} ms left in the bank){why}",
            )
        except TooLargeError:
            return fault(
                Status.INVALID,
                f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer one small JSON "
                'object such as {"card": "QS"}',
            )
        except TransportError as error:
            return fault(
                Status.ERROR,
                f"could not reach {self.transport.shown}: {connection_reason(error)}",
            )
        except UnreachableError as error:
            return fault(Status.ERROR, f"could not reach {self.transport.shown}: {error}")
        if 300 <= code < 400:
            return fault(
                Status.ERROR,
                f"HTTP {code} redirecting to {location or '?'}: the arena does not follow "
                "redirects; register the final URL",
            )
        if not 200 <= code < 300:
            return fault(Status.ERROR, f"HTTP {code}: {excerpt(content, self.transport.redact)}")
        try:
            answer = content.decode("utf-8")
        except UnicodeDecodeError:
            shown = excerpt(content, self.transport.redact)
            return fault(Status.INVALID, f"the answer is not UTF-8 JSON (it starts {shown!r})")
        kind = pending_decision(obs).kind
        try:
            data = answer_object(kind, content)
        except AnswerError as error:  # not a JSON object: no note either
            return fault(error.fault.status, str(error), answer)
        note = note_of(data)
        try:
            move = answer_move(kind, data, obs)
        except AnswerError as error:
            return fault(error.fault.status, str(error), answer, note)
        return Reply(move, Status.OK, self._ms_since(start), answer, None, sha, note, self.exchange)

    @property
    def exchange(self) -> Exchange:
        """What the channel measured of the latest request (the ``hello`` after :meth:`hello`)."""
        return self.transport.exchange

    def hello(
        self,
        *,
        match_id: str,
        rules: Rules,
        time_limit_ms: int,
        time_bank_ms: int,
        timeout_s: float,
        deal_commitment: str | None = None,
    ) -> BotInfo:
        """The handshake before the match, within ``timeout_s`` in all: the bot's name and
        version and the protocol version it chose (the seat's requests are written in it from
        then on: see ``arena.matches``), or :class:`HelloError`."""
        request = hello_request(
            match_id=match_id,
            seat=self.info.seat,
            rules=rules,
            deal_commitment=deal_commitment,
            time_limit_ms=time_limit_ms,
            time_bank_ms=time_bank_ms,
        )
        info = self.transport.hello(request, timeout_s)
        self._grace_s = round_trip_s(self.transport.exchange)
        return info

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        body = hand_end_body(result, obs, match_id=match_id, protocol=self.info.protocol)
        self.transport.notify(body)

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        protocol = self.info.protocol
        notice = match_end_notice(outcome, match_id=match_id, seat=seat, protocol=protocol)
        self.transport.notify(encode(notice))

    def _ms_since(self, start: float) -> int:
        return max(0, round((self._clock() - start) * 1000))


def round_trip_s(hello: Exchange) -> float:
    """The round trip a ``hello`` measured (its last byte out to its answer's last byte in), at
    most :data:`EVIDENCE_GRACE_S`; 0 where it was not measured."""
    if hello.sent_ns is None or hello.received_ns is None:
        return 0.0
    return min(EVIDENCE_GRACE_S, max(0, hello.received_ns - hello.sent_ns) / 1e9)
