"""A pull bot's stream over a WebSocket: the same lines as the NDJSON stream, one message each,
and the bot's answers coming back on the same connection instead of one POST each
(docs/PROTOCOL.md, "Pull bots").

The WebSocket is simple-websocket's, as flask-sock serves it (under gunicorn's gevent workers
and werkzeug's server): the handshake is answered when :func:`conversation` is called, after
the view has checked the token and the bot, so that a refusal is an ordinary JSON error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from typing import Any

from flask import Response, request
from simple_websocket import ConnectionClosed, Server

from arena import pull
from arena.context import Arena
from arena.errors import UNAVAILABLE, ArenaError
from arena.pull import Stream
from arena.transport import MAX_ANSWER_BYTES
from service.errors import SLUGS, status_of

logger = logging.getLogger(__name__)

_LISTEN_S = 1.0
"""How often the listener looks whether the stream has ended."""
AWAY = (
    "the arena's database is unreachable, so this answer was not taken: the request is sent "
    "again once it answers, and the answer then stands"
)
"""Why an answer is refused while Redis restarts (the connection stays open)."""


def conversation(arena: Arena, stream: Stream) -> Response:
    """Accept the WebSocket, then send ``stream``'s lines and take the bot's answers until
    either side ends; the response that tells the server the connection was handled."""
    socket = Server(request.environ, max_message_size=MAX_ANSWER_BYTES + 1024)
    done = threading.Event()
    listener = threading.Thread(
        target=_listen, args=(arena, stream, socket, done), daemon=True, name="pull-socket"
    )
    listener.start()
    try:
        for line in stream:
            socket.send(line.rstrip(b"\n").decode())  # an empty message: the keep-alive
    except ConnectionClosed:
        pass
    finally:
        done.set()
        stream.close()
        with contextlib.suppress(ConnectionClosed):
            socket.close()
    return _Handled(socket.mode)


def _listen(arena: Arena, stream: Stream, socket: Server, done: threading.Event) -> None:
    """Take every answer the bot sends; end the stream when the bot's side closes."""
    try:
        while not done.is_set():
            message = socket.receive(timeout=_LISTEN_S)
            if message is not None:
                _take(arena, stream, message)
    except ConnectionClosed:
        pass
    finally:
        stream.end()


def _take(arena: Arena, stream: Stream, message: Any) -> None:
    """One message from the bot: an answer for its asker, or a ``refused`` line saying why
    not, with the status a POST of it would have had."""
    try:
        found = json.loads(message)
        request_id, body = found["id"], found["body"]
        if found.get("type") != "answer" or not isinstance(request_id, str):
            raise ValueError
        if not isinstance(body, str):
            raise ValueError
    except (ValueError, TypeError, KeyError):
        stream.say(
            _refused(
                None,
                400,
                'send {"type": "answer", "id": "<the request\'s id>", "body": "<your answer\'s '
                'JSON text>"}',
            )
        )
        return
    try:
        pull.answer(arena, stream.bot_id, request_id, body.encode())
    except ArenaError as error:
        stream.say(_refused(request_id, status_of(type(error)), str(error)))
    except UNAVAILABLE as error:  # Redis restarting: the request is sent again once it is back
        logger.warning("pull bot %s: an answer not taken, Redis away: %s", stream.bot_id, error)
        stream.say(_refused(request_id, 503, AWAY))


def _refused(request_id: str | None, status: int, message: str) -> dict[str, object]:
    return {
        "type": "refused",
        "id": request_id,
        "status": status,
        "error": SLUGS.get(status, "bad_request"),
        "message": message,
    }


class _Handled(Response):
    """The view's answer once the WebSocket is done: nothing more for the server to send
    (flask-sock's way, for the servers the arena runs under)."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self._mode = mode

    def __call__(self, environ: Any, start_response: Any) -> Any:
        if self._mode == "gunicorn":
            raise StopIteration  # gunicorn: the socket was taken over and is closed
        if self._mode == "werkzeug":
            return super().__call__(environ, start_response)
        return []
