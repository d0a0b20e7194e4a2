"""Human games: a person against three computers, one request per decision of theirs (the use
cases: :mod:`arena.games`). The house bots' turns run off the event loop
(:class:`~service.offload.ThreadedBot`)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from arena import games
from service.context import arena
from service.errors import ErrorSchema
from service.limits import EXPENSIVE_READS, expensive_read, limiter, play_limit
from service.offload import ThreadedBot
from service.schemas import (
    PlayCreate,
    PlayHintSchema,
    PlayLevel,
    PlayMove,
    PlayOpponentSchema,
    PlayStateArgs,
    PlayStateSchema,
    PlayVersion,
)
from service.smorest import Blueprint

blp = Blueprint("play", __name__, url_prefix="/api/play", description="Human games")


@blp.route("/opponents")
@blp.response(200, PlayOpponentSchema(many=True))
def opponents() -> list[games.Opponent]:
    """Who can be chosen as an opponent: the house bots, and the active registered bots whose
    owners allow human games."""
    return games.opponents(arena())


@blp.route("")
class Games(MethodView):
    @limiter.limit(play_limit, methods=["POST"])
    @blp.arguments(PlayCreate)
    @blp.response(201, PlayStateSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="an unknown or unavailable opponent")
    @blp.alt_response(403, schema=ErrorSchema, description="a bot whose owner does not allow it")
    @blp.alt_response(429, schema=ErrorSchema, description="too many games started")
    def post(self, args: dict[str, Any]) -> games.TableView:
        """Start a game against three computers; the computers play until it is your turn."""
        return games.start(
            arena(),
            opponents=args["opponents"],
            rules=args["rules"],
            seed=args.get("seed"),
            seat=args.get("seat"),
            offload=ThreadedBot,
        )


@blp.route("/<game_id>")
@blp.arguments(PlayStateArgs, location="query")
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
def get_state(args: dict[str, Any], game_id: str) -> games.TableView:
    """The game as you see it: your hand with each card's legality (and the reason when it
    cannot be played), the table, scores, and the events since ``since``."""
    return games.state(arena(), game_id, since=args.get("since"))


@blp.route("/<game_id>/move", methods=["POST"])
@blp.arguments(PlayMove)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version, or not your turn")
@blp.alt_response(422, schema=ErrorSchema, description="the rules forbid it: the reason")
def move(args: dict[str, Any], game_id: str) -> games.TableView:
    """Play a card (``card``), or expose or pass cards (``cards``); the computers then play
    until it is your turn again. The answer's events start with your move."""
    return games.move(
        arena(),
        game_id,
        version=args["version"],
        card=args.get("card"),
        cards=args.get("cards"),
        offload=ThreadedBot,
    )


@blp.route("/<game_id>/next-hand", methods=["POST"])
@blp.arguments(PlayVersion)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version, or no hand to go on from")
def next_hand(args: dict[str, Any], game_id: str) -> games.TableView:
    """You have seen the hand's result: deal on, the computers play until it is your turn."""
    return games.next_hand(arena(), game_id, version=args["version"], offload=ThreadedBot)


@blp.route("/<game_id>/difficulty", methods=["POST"])
@blp.arguments(PlayLevel)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version")
def difficulty(args: dict[str, Any], game_id: str) -> games.TableView:
    """Change the house bots' difficulty: it takes effect from your next hand."""
    return games.difficulty(
        arena(), game_id, version=args["version"], level=args["level"], offload=ThreadedBot
    )


@blp.route("/<game_id>/hint")
@expensive_read
@blp.response(200, PlayHintSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="not your turn")
@blp.alt_response(429, schema=ErrorSchema, description=EXPENSIVE_READS)
def get_hint(game_id: str) -> games.Hint:
    """What the Normal house bot would do in your place: the cards to expose (or pass), or one
    legal card to play."""
    return games.hint(arena(), game_id)
