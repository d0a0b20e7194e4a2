"""Serving a bot over HTTP: a plain WSGI app, run by waitress (threads, keep-alive).

Every request is a POST to the bot's one endpoint (any path). In order, the app:

1. refuses other methods (405) and bodies over 4 MiB (413);
2. checks the signature (401 when it is missing, stale or wrong);
3. parses the JSON and validates it against the request's schema (400, saying what is wrong);
4. answers: ``hello`` with the bot's name and version and the protocol version it speaks (the
   latest the arena offers), a decision with the bot's answer (or the
   fallback, see :mod:`bot_sdk.dispatch`), a notification with 204.

Errors are JSON too: ``{"error": "unauthorized", "message": "stale timestamp: ..."}``.

Steps 2 to 4 are :meth:`BotApp.handle`, which the pull transport (:mod:`bot_sdk.connect`) calls
for each request it reads from the arena's stream.

>>> from bot_sdk.examples.lowest_card import LowestCard
>>> from bot_sdk.protocol import hello_request
>>> from bot_sdk.signing import sign
>>> import io, time
>>> app = make_app(LowestCard, "s3cret")
>>> body = encode(hello_request())
>>> environ = {"REQUEST_METHOD": "POST", "CONTENT_LENGTH": str(len(body)),
...            "wsgi.input": io.BytesIO(body)}
>>> for name, value in sign("s3cret", body, int(time.time())).items():
...     environ["HTTP_" + name.upper().replace("-", "_")] = value
>>> b"".join(app(environ, lambda status, headers: print(status)))
200 OK
b'{"name":"lowest-card","protocol":"gongzhu-bot/2","version":"1.0"}'
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from waitress.server import BaseWSGIServer, MultiSocketServer
from waitress.server import create_server as create_waitress_server

from bot_sdk.dispatch import DEFAULT_MARGIN_MS, BotFailedError, BotSource, Dispatcher
from bot_sdk.protocol import SPOKEN, Message, MessageType, ProtocolVersion, decode, encode
from bot_sdk.schemas import InvalidMessageError, validate_request
from bot_sdk.signing import (
    DEFAULT_TOLERANCE_S,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Secrets,
    SignatureError,
    verify,
)

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024
_SIGNED_HEADERS = {
    name: "HTTP_" + name.upper().replace("-", "_") for name in (TIMESTAMP_HEADER, SIGNATURE_HEADER)
}


class RefusedError(Exception):
    """A request refused: its HTTP status, error code and explanation (the push server answers
    them as JSON; the pull client logs them)."""

    def __init__(self, status: HTTPStatus, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class BotApp:
    """The WSGI app serving one bot; build it with :func:`make_app`."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        secrets: Secrets | None,
        *,
        clock: Callable[[], float],
        tolerance_s: float,
    ) -> None:
        self.dispatcher = dispatcher
        self._secrets = secrets
        self._clock = clock
        self._tolerance_s = tolerance_s

    @property
    def verifies_signatures(self) -> bool:
        """Whether requests must be signed (not when made with ``verify_signatures=False``)."""
        return self._secrets is not None

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        received_at = time.monotonic()
        try:
            status, answer = self._handle(environ, received_at)
        except RefusedError as refused:
            status, answer = refused.status, {"error": refused.code, "message": refused.message}
        body = b"" if answer is None else encode(answer)
        headers = [("Content-Length", str(len(body)))]
        if answer is not None:
            headers.append(("Content-Type", "application/json"))
        if status is HTTPStatus.METHOD_NOT_ALLOWED:
            headers.append(("Allow", "POST"))
        start_response(f"{status.value} {status.phrase}", headers)
        return [body]

    def _handle(
        self, environ: WSGIEnvironment, received_at: float
    ) -> tuple[HTTPStatus, Message | None]:
        if environ.get("REQUEST_METHOD") != "POST":
            raise RefusedError(
                HTTPStatus.METHOD_NOT_ALLOWED, "method_not_allowed", "the arena sends POST only"
            )
        body = _read_body(environ)
        headers = {name: environ[key] for name, key in _SIGNED_HEADERS.items() if key in environ}
        return self.handle(headers, body, received_at)

    def handle(
        self, headers: Mapping[str, str], body: bytes, received_at: float
    ) -> tuple[HTTPStatus, Message | None]:
        """One request of the arena, whatever carried it (an HTTP POST, or a line of the pull
        stream, see :mod:`bot_sdk.connect`): check the signature in ``headers`` (names in any
        case) over ``body``, parse and validate it, and dispatch it to the bot.

        Returns 200 and the answer, or 204 and ``None`` for a notification; raises
        :class:`RefusedError` for a request to refuse (401, 400, or 500 when the fallback is
        off). ``received_at`` is ``time.monotonic()`` when the request arrived: a decision's
        time limit counts from then.
        """
        if self._secrets is not None:
            try:
                verify(self._secrets, headers, body, self._clock(), self._tolerance_s)
            except SignatureError as exc:
                raise RefusedError(HTTPStatus.UNAUTHORIZED, "unauthorized", str(exc)) from None
        try:
            message = decode(body)
            kind = validate_request(message)
        except InvalidMessageError as exc:
            raise RefusedError(HTTPStatus.BAD_REQUEST, "bad_request", str(exc)) from None
        except ValueError as exc:
            raise RefusedError(HTTPStatus.BAD_REQUEST, "bad_request", f"not JSON: {exc}") from None
        try:
            return self._dispatch(kind, message, received_at)
        except BotFailedError as exc:
            raise RefusedError(HTTPStatus.INTERNAL_SERVER_ERROR, "bot_error", str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            # What the schema cannot see: e.g. a rules profile combining exclusive variants.
            raise RefusedError(HTTPStatus.BAD_REQUEST, "bad_request", f"{exc}") from None

    def _dispatch(
        self, kind: MessageType, message: dict[str, Any], received_at: float
    ) -> tuple[HTTPStatus, Message | None]:
        if kind is MessageType.HELLO:
            return HTTPStatus.OK, self.dispatcher.hello(message)
        if kind is MessageType.DECISION:
            return HTTPStatus.OK, self.dispatcher.decision(message, received_at)
        if kind is MessageType.HAND_END:
            self.dispatcher.hand_end(message)
        else:
            self.dispatcher.match_end(message)
        return HTTPStatus.NO_CONTENT, None


def _read_body(environ: WSGIEnvironment) -> bytes:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise RefusedError(HTTPStatus.BAD_REQUEST, "bad_request", "bad Content-Length") from None
    if length > MAX_BODY_BYTES:
        raise RefusedError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            "too_large",
            f"the body is {length} bytes; at most {MAX_BODY_BYTES}",
        )
    body: bytes = environ["wsgi.input"].read(length) if length else b""
    return body


def make_app(
    bot: BotSource,
    secrets: Secrets | None,
    *,
    verify_signatures: bool = True,
    clock: Callable[[], float] = time.time,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    margin_ms: int = DEFAULT_MARGIN_MS,
    fallback_on_timeout: bool = True,
    fallback_on_error: bool = True,
    cache_size: int = 1024,
    protocols: tuple[ProtocolVersion, ...] = SPOKEN,
) -> BotApp:
    """The WSGI app serving ``bot``: a ``Bot`` subclass (an instance per seat of each match) or
    one ``Bot`` instance (shared by all matches; its calls are serialised).

    ``secrets``: the bot's signing secret, or several during a rotation. ``clock``: unix time,
    for the signature's freshness. ``margin_ms``: kept back from each decision's time limit.
    ``fallback_on_timeout`` / ``fallback_on_error``: switch off to wait for a slow bot, or to
    answer a crash with a 500 JSON error, while debugging. ``protocols``: the protocol versions
    the bot may choose in a ``hello`` (docs/PROTOCOL.md, "Versions"); the latest the arena
    offers is chosen.
    """
    if verify_signatures and not secrets:
        raise ValueError("give the bot's signing secret, or verify_signatures=False (testing)")
    dispatcher = Dispatcher(
        bot,
        margin_ms=margin_ms,
        fallback_on_timeout=fallback_on_timeout,
        fallback_on_error=fallback_on_error,
        cache_size=cache_size,
        protocols=protocols,
    )
    return BotApp(
        dispatcher,
        secrets if verify_signatures else None,
        clock=clock,
        tolerance_s=tolerance_s,
    )


def create_server(
    app: WSGIApplication,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    threads: int = 8,
    **adjustments: Any,
) -> BaseWSGIServer | MultiSocketServer:
    """A waitress server for ``app``, bound but not yet running (``port=0`` binds a free port:
    see ``server.effective_port``); ``adjustments`` are waitress's own settings."""
    return create_waitress_server(
        app, host=host, port=port, threads=threads, ident="gongzhu-bot", **adjustments
    )


def serve(
    bot: BotSource,
    host: str = "127.0.0.1",
    port: int = 8000,
    secret: Secrets | None = None,
    threads: int = 8,
    **options: Any,
) -> None:
    """Serve ``bot`` until interrupted; ``options`` go to :func:`make_app`."""
    serve_app(make_app(bot, secret, **options), host=host, port=port, threads=threads)


def serve_app(app: BotApp, *, host: str = "127.0.0.1", port: int = 8000, threads: int = 8) -> None:
    """Serve ``app`` (see :func:`make_app`) until interrupted."""
    server = create_server(app, host=host, port=port, threads=threads)
    hello = app.dispatcher.hello()
    signed = "signatures verified" if app.verifies_signatures else "UNSIGNED"
    server.print_listen(
        f"serving {hello['name']} {hello['version']} on http://{{}}:{{}} ({signed})"
    )
    server.run()
