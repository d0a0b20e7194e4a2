"""Pull bots: the stream a bot behind NAT holds open to receive its requests, and the answers
it sends back (docs/PROTOCOL.md, "Pull bots"; the use cases: :mod:`arena.pull`)."""

from __future__ import annotations

from flask import Response, request

from arena import pull
from service.auth import owner_only
from service.context import arena
from service.errors import ErrorSchema
from service.limits import limiter, owner_key, stream_connect_limit
from service.smorest import Blueprint
from service.sockets import conversation

blp = Blueprint(
    "pull", __name__, url_prefix="/api/bots", description="Pull bots: connect out, answer back"
)

NDJSON = "application/x-ndjson"


@blp.route("/<bot_id>/stream")
@owner_only(blp)
@limiter.limit(stream_connect_limit, key_func=owner_key)
@blp.response(200, description="NDJSON lines: welcome, request, bye; blank keep-alive lines")
@blp.alt_response(409, schema=ErrorSchema, description="a push bot, or a retired one")
@blp.alt_response(429, schema=ErrorSchema, description="too many connections in a minute")
def stream(bot_id: str) -> Response:
    """Hold this connection open to receive the bot's requests, one JSON object per line.

    The first line is a ``welcome``; then every request still waiting for this bot's answer,
    then each new one as the arena makes it (``type: request``, the signed message in ``body``
    beside its signature ``headers``), a blank line every ``heartbeat_s`` seconds while idle,
    and a ``bye`` when the connection is replaced by a newer one, the bot retires, or the web
    process stops (``shutdown``: connect again). A new connection of the same bot replaces this
    one."""
    lines = pull.open_stream(arena(), arena().relay, bot_id)
    response = Response(lines, mimetype=NDJSON)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each line on at once
    return response


@blp.route("/<bot_id>/ws", websocket=True)
@owner_only(blp)
@limiter.limit(stream_connect_limit, key_func=owner_key)
@blp.response(101, description="the WebSocket: the stream's lines as messages, answers back")
@blp.alt_response(409, schema=ErrorSchema, description="a push bot, or a retired one")
@blp.alt_response(429, schema=ErrorSchema, description="too many connections in a minute")
def socket(bot_id: str) -> Response:
    """The stream as a WebSocket (``ws://`` or ``wss://``): each message is one line of the
    stream (an empty one is the keep-alive), and the bot sends each answer on the same
    connection, ``{"type": "answer", "id": "<request id>", "body": "<answer JSON>"}``; a refused
    answer comes back as ``{"type": "refused", "id", "status", "error", "message"}``. The
    token and the bot are checked before the upgrade: a refusal is an ordinary JSON error."""
    lines = pull.open_stream(arena(), arena().relay, bot_id)
    return conversation(arena(), lines)


@blp.route("/<bot_id>/answers/<request_id>", methods=["POST"])
@owner_only(blp)
@blp.response(204, description="the answer is taken: the arena judges it as a push bot's")
@blp.alt_response(404, schema=ErrorSchema, description="no such request was sent to this bot")
@blp.alt_response(409, schema=ErrorSchema, description="answered already, or too late")
@blp.alt_response(413, schema=ErrorSchema, description="the answer is larger than 64 KiB")
@blp.alt_response(422, schema=ErrorSchema, description="an empty answer")
def answer(bot_id: str, request_id: str) -> None:
    """Answer the request ``request_id`` of the bot's stream with the JSON body a push bot
    would answer (``{"card": "QS"}``, the ``hello``'s name and version, ...). The arena checks
    it exactly as it checks a push bot's answer; an answer after the request's deadline is
    refused (409) and the arena has already played its fallback."""
    pull.answer(arena(), bot_id, request_id, request.get_data())
