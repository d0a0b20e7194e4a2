"""Asking a pull bot: :class:`PullTransport`, the counterpart of the push bots'
:class:`~arena.transport.BotTransport` for a bot that connects out (docs/PROTOCOL.md,
"Pull bots").

Each request is signed exactly as a push request is (the same headers over the same body),
wrapped in one line of the bot's stream, and offered in the bot's mailbox
(:mod:`arena.store.mailbox`); the asker then blocks on Redis for the answer until the
deadline. The clock is the asker's: it starts before the offer, so the time a request waits
for a bot that is not connected, and the way through the web process and back, all count.

Each request is measured (:attr:`PullTransport.exchange`): sent once it is in the mailbox,
received when the answer is taken from Redis, and the bytes of the request's line and of the
answer. The connection is the bot's own, held by a web process: it has no new-or-reused, connect
or TLS time here.
"""

from __future__ import annotations

import json
import secrets
import time

from arena.exchange import Exchange, now_ns
from arena.store.mailbox import Mailbox
from arena.transport import (
    MAX_ANSWER_BYTES,
    Clock,
    DeadlineError,
    HelloError,
    TooLargeError,
    UnansweredHelloError,
    UnreachableError,
)
from bot_sdk.protocol import AnswerError, BotInfo, Message, encode, parse_hello_answer
from bot_sdk.signing import sign


def request_line(request_id: str, body: bytes, headers: dict[str, str], *, reply: bool) -> str:
    """The stream's ``request`` event for ``body``: the body as a string, beside its signature
    headers, so that the bot checks the signature over exactly the bytes a push bot gets."""
    event = {
        "type": "request",
        "id": request_id,
        "reply": reply,
        "headers": headers,
        "body": body.decode("utf-8"),
    }
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


class PullTransport:
    """Signed requests to one pull bot through its mailbox (see the module's doc)."""

    def __init__(
        self,
        mailbox: Mailbox,
        bot_id: str,
        secrets: list[str],
        *,
        clock: Clock = time.monotonic,
        now: Clock = time.time,
    ) -> None:
        self.mailbox = mailbox
        self.bot_id = bot_id
        self._secrets = secrets
        self._clock = clock
        self._now = now
        self.exchange = Exchange()
        """What the latest :meth:`post` measured."""

    @property
    def shown(self) -> str:
        """The bot as error messages name it."""
        return f"the pull bot {self.bot_id}"

    def redact(self, text: str) -> str:
        """``text`` as it is: a pull bot has no endpoint to hide."""
        return text

    def close(self) -> None:
        """Nothing to close: the bot holds the connection."""

    def post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        """Offer ``body`` and wait at most ``seconds`` for the answer: ``(200, None, answer)``.
        No answer in time is a :class:`DeadlineError` when the bot is connected (it was slow),
        an :class:`UnreachableError` when it is not (as a push bot that cannot be reached)."""
        deadline = self._clock() + seconds
        request_id = secrets.token_hex(8)
        line = request_line(request_id, body, self._signed(body), reply=True)
        self.exchange = exchange = Exchange(bytes_sent=len(line.encode()))
        self.mailbox.offer(self.bot_id, request_id, line, seconds=seconds)
        exchange.sent_ns = now_ns()
        answer = self.mailbox.wait(self.bot_id, request_id, deadline - self._clock())
        if answer is None:
            if self.bot_id in self.mailbox.connected([self.bot_id]):
                raise DeadlineError("the bot was connected")
            raise UnreachableError(
                f"not connected, and no connection of it took the request within "
                f"{seconds * 1000:.0f} ms (is python -m bot_sdk connect running?)"
            )
        exchange.received_ns, exchange.bytes_received = now_ns(), len(answer)
        if len(answer) > MAX_ANSWER_BYTES:  # the web refuses larger ones already
            raise TooLargeError
        return 200, None, answer

    def notify(self, body: bytes) -> None:
        """Send a notice if the bot is connected; nothing waits for it."""
        request_id = secrets.token_hex(8)
        line = request_line(request_id, body, self._signed(body), reply=False)
        self.mailbox.notify(self.bot_id, request_id, line)

    def hello(self, request: Message, timeout_s: float) -> BotInfo:
        """The ``hello`` within ``timeout_s``: the bot's name and version, or
        :class:`HelloError` saying why not."""
        try:
            _, _, content = self.post(encode(request), timeout_s)
        except DeadlineError as error:
            raise UnansweredHelloError(
                f"{self.shown} did not answer the hello within {timeout_s:g} s ({error})"
            ) from None
        except UnreachableError as error:
            raise HelloError(f"{self.shown} did not answer the hello: {error}") from None
        except TooLargeError:
            raise HelloError(
                f"the hello answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer "
                '{"protocol", "name", "version"} only'
            ) from None
        try:
            return parse_hello_answer(content)
        except AnswerError as error:
            raise HelloError(f"{self.shown} answered the hello wrongly: {error}") from None

    def _signed(self, body: bytes) -> dict[str, str]:
        return sign(self._secrets, body, int(self._now()))
