"""Asking a registered bot over HTTP during a match: :class:`HttpSeat`, a match seat player.

Every decision is one signed POST of the canonical request body (``bot_sdk.protocol``) under a
**total** wall-clock deadline: the decision's limit plus what is left of the seat's time bank.
``requests``' own timeout bounds each socket operation, not the whole answer, so a bot dripping
one byte at a time would outlast it; here a watchdog shuts the connection's socket down at the
deadline, and the body is read in small chunks with the deadline checked between them. Answers
are capped at :data:`MAX_ANSWER_BYTES`, redirects are not followed, the seat keeps one
``requests.Session`` (keep-alive) for its match, and every connection's peer address is checked
when it is made (unless private endpoints are allowed), so a host that re-resolves to a private
address (DNS rebinding) is refused as well as one registered with it.

Whatever goes wrong becomes a :class:`~workers.match.Reply` with its :class:`Status` and a
fault message the bot's author can act on; :func:`workers.match.play_match` applies the fallback.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from bot_sdk.protocol import (
    AnswerError,
    BotInfo,
    Message,
    decision_request,
    encode,
    hand_end_notice,
    hello_request,
    match_end_notice,
    parse_answer,
    parse_hello_answer,
)
from bot_sdk.signing import sign
from referee import HandResult, Observation, Outcome, Rules
from replays.log import SeatInfo, Status, status_of
from workers.addresses import is_public
from workers.match import Reply

MAX_ANSWER_BYTES = 64 * 1024
"""A larger answer is an ``invalid`` fault: an answer is a few dozen bytes."""
NOTICE_TIMEOUT_S = 2.0
"""The whole time a ``hand_end`` or ``match_end`` notification may take."""
CONNECT_TIMEOUT_S = 3.0
"""At most this long to open a connection, within the decision's deadline."""
_CHUNK = 1024
_EXCERPT = 300

Clock = Callable[[], float]


class PrivateAddressError(OSError):
    """The connection's peer is not a public address."""


class HelloError(Exception):
    """The bot did not complete the ``hello`` before its match; the message says why."""


class _DeadlineError(Exception):
    """The whole answer did not arrive in time."""


class _TooLargeError(Exception):
    """The answer is larger than :data:`MAX_ANSWER_BYTES`."""


class _Watchdog:
    """Shuts the socket of the request in flight down when its deadline passes, whatever the
    bot is sending: the blocked read then ends at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._timer: threading.Timer | None = None
        self.fired = False

    def arm(self, seconds: float) -> None:
        self.fired = False
        self._timer = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            if self.fired and sock is not None:
                _shut(sock)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._sock = None

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._sock is not None:
                _shut(self._sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed: nothing left to stop
        return


def _guarded(base: type[HTTPConnection], watchdog: _Watchdog, allow_private: bool) -> type:
    """A connection class that checks the peer it connected to and hands its socket to the
    seat's watchdog for each response."""

    class Guarded(base):  # type: ignore[valid-type,misc]
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            if not allow_private:
                peer = ipaddress.ip_address(str(sock.getpeername()[0]).split("%", 1)[0])
                if not is_public(peer):
                    sock.close()
                    raise PrivateAddressError(
                        f"{self.host} resolved to {peer}, a private, loopback, link-local or "
                        "reserved address: the arena calls only public addresses"
                    )
            return sock

        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            watchdog.attach(self.sock)
            return super().getresponse(*args, **kwargs)

    return Guarded


class _GuardedAdapter(HTTPAdapter):
    def __init__(self, watchdog: _Watchdog, allow_private: bool) -> None:
        self._watchdog = watchdog
        self._allow_private = allow_private
        super().__init__(pool_connections=1, pool_maxsize=1, max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        watchdog, allow = self._watchdog, self._allow_private
        http = type(
            "GuardedHTTPPool",
            (HTTPConnectionPool,),
            {"ConnectionCls": _guarded(HTTPConnection, watchdog, allow)},
        )
        https = type(
            "GuardedHTTPSPool",
            (HTTPSConnectionPool,),
            {"ConnectionCls": _guarded(HTTPSConnection, watchdog, allow)},
        )
        self.poolmanager.pool_classes_by_scheme = {"http": http, "https": https}


class HttpSeat:
    """A registered bot in one seat of one match, asked over HTTP (see the module's doc)."""

    def __init__(
        self,
        info: SeatInfo,
        endpoint: str,
        secrets: Sequence[str],
        *,
        allow_private: bool = False,
        clock: Clock = time.monotonic,
        now: Clock = time.time,
    ) -> None:
        self.info = info
        self.endpoint = endpoint
        self._secrets = list(secrets)
        self._clock = clock
        self._now = now
        self._watchdog = _Watchdog()
        self.session = requests.Session()
        self.session.trust_env = False  # no proxies or .netrc from the worker's environment
        adapter = _GuardedAdapter(self._watchdog, allow_private)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def close(self) -> None:
        self.session.close()

    def ask(
        self,
        obs: Observation,
        *,
        match_id: str,
        decision_id: str,
        time_limit_ms: int,
        time_bank_ms: int,
    ) -> Reply:
        assert obs.decision is not None
        request = decision_request(
            obs,
            match_id=match_id,
            decision_id=decision_id,
            time_limit_ms=time_limit_ms,
            time_bank_ms=time_bank_ms,
        )
        body = encode(request)
        sha = hashlib.sha256(body).hexdigest()
        allowed_ms = time_limit_ms + time_bank_ms
        start = self._clock()

        def fault(status: Status, message: str, answer: str | None = None) -> Reply:
            return Reply(None, status, self._ms_since(start), answer, message, sha)

        try:
            code, location, content = self._post(body, allowed_ms / 1000)
        except _DeadlineError:
            return fault(
                Status.TIMEOUT,
                f"no complete answer within {allowed_ms} ms (the {time_limit_ms} ms limit and "
                f"the {time_bank_ms} ms left in the bank)",
            )
        except _TooLargeError:
            return fault(
                Status.INVALID,
                f"the answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer one small JSON "
                'object such as {"card": "QS"}',
            )
        except requests.RequestException as error:
            return fault(
                Status.ERROR, f"could not reach {self._where()}: {connection_reason(error)}"
            )
        if 300 <= code < 400:
            return fault(
                Status.ERROR,
                f"HTTP {code} redirecting to {location or '?'}: the arena does not follow "
                "redirects; register the final URL",
            )
        if not 200 <= code < 300:
            return fault(Status.ERROR, f"HTTP {code}: {excerpt(content)}")
        try:
            answer = content.decode("utf-8")
        except UnicodeDecodeError:
            return fault(
                Status.INVALID,
                f"the answer is not UTF-8 JSON (it starts {excerpt(content)!r})",
            )
        try:
            move = parse_answer(obs.decision.kind, content, obs)
        except AnswerError as error:
            return fault(status_of(error), str(error), answer)
        return Reply(move, Status.OK, self._ms_since(start), answer, None, sha)

    def hello(
        self,
        *,
        match_id: str,
        rules: Rules,
        time_limit_ms: int,
        time_bank_ms: int,
        timeout_s: float,
    ) -> BotInfo:
        """The handshake before the match, within ``timeout_s`` in all: the bot's name and
        version, or :class:`HelloError`."""
        request = hello_request(
            match_id=match_id,
            seat=self.info.seat,
            rules=rules,
            time_limit_ms=time_limit_ms,
            time_bank_ms=time_bank_ms,
        )
        try:
            code, location, content = self._post(encode(request), timeout_s)
        except _DeadlineError:
            raise HelloError(f"no complete hello answer within {timeout_s:g} s") from None
        except _TooLargeError:
            raise HelloError(
                f"the hello answer is larger than {MAX_ANSWER_BYTES // 1024} KiB"
            ) from None
        except requests.RequestException as error:
            raise HelloError(
                f"could not reach {self._where()}: {connection_reason(error)}"
            ) from None
        if 300 <= code < 400:
            raise HelloError(
                f"HTTP {code} redirecting to {location or '?'}: the arena does not follow "
                "redirects; register the final URL"
            )
        if not 200 <= code < 300:
            raise HelloError(f"HTTP {code} to the hello: {excerpt(content)}")
        try:
            return parse_hello_answer(content)
        except AnswerError as error:
            raise HelloError(f"the hello answer is wrong: {error}") from None

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        self._notify(hand_end_notice(result, obs, match_id=match_id))

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        self._notify(match_end_notice(outcome, match_id=match_id, seat=seat))

    def _notify(self, notice: Message) -> None:
        """Fire and forget: whatever the bot answers, or if it does not, the match goes on."""
        try:
            self._post(encode(notice), NOTICE_TIMEOUT_S)
        except (_DeadlineError, _TooLargeError, requests.RequestException):
            return

    def _post(self, body: bytes, seconds: float) -> tuple[int, str | None, bytes]:
        """POST ``body`` and read the whole answer within ``seconds``: its status, redirect
        target and body. Raises :class:`_DeadlineError`, :class:`_TooLargeError` or a requests
        error."""
        deadline = self._clock() + seconds
        headers = {
            "Content-Type": "application/json",
            "Accept-Encoding": "identity",
            **sign(self._secrets, body, int(self._now())),
        }
        self._watchdog.arm(seconds)
        try:
            response = self.session.post(
                self.endpoint,
                data=body,
                headers=headers,
                timeout=(min(CONNECT_TIMEOUT_S, seconds), seconds),
                allow_redirects=False,
                stream=True,
            )
            with response:
                content = self._read(response, deadline)
        except requests.RequestException:
            if self._watchdog.fired or self._clock() >= deadline:
                raise _DeadlineError from None
            raise
        finally:
            self._watchdog.disarm()
        if self._watchdog.fired:
            raise _DeadlineError
        return response.status_code, response.headers.get("Location"), content

    def _read(self, response: requests.Response, deadline: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(_CHUNK):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise _TooLargeError
            if self._clock() >= deadline or self._watchdog.fired:
                raise _DeadlineError
            chunks.append(chunk)
        if self._watchdog.fired:
            raise _DeadlineError
        return b"".join(chunks)

    def _ms_since(self, start: float) -> int:
        return max(0, round((self._clock() - start) * 1000))

    def _where(self) -> str:
        parts = urlsplit(self.endpoint)
        return f"{parts.scheme}://{parts.netloc}{parts.path}"


def connection_reason(error: BaseException) -> str:
    """The innermost useful cause of a connection error, in words a bot author can act on
    (shared with the registration handshake)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, PrivateAddressError):
            return str(cause)
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is the bot running, on that port?)"
        if isinstance(cause, requests.ConnectTimeout):
            return f"no connection within {CONNECT_TIMEOUT_S:g} s"
        if "Name or service not known" in str(cause) or "nodename nor servname" in str(cause):
            return "the host name does not resolve"
        cause = cause.__cause__ or cause.__context__ or _first_arg(cause)
    return str(error)[:_EXCERPT]


def _first_arg(error: BaseException) -> BaseException | None:
    return next((a for a in error.args if isinstance(a, BaseException)), None)


def excerpt(content: bytes) -> str:
    """The start of a body, for an error message."""
    text = content.decode("utf-8", "replace").strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
