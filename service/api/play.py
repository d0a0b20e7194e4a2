"""Human games: a person against three computers, one request per decision of theirs.

Each request rebuilds the game from its stored decisions (:class:`arena.human.HumanTable`),
applies the person's move through the referee, lets the computers play until the person must
decide again, and stores the new decisions only if nobody else moved meanwhile (a stale
``version`` is a 409). The computers play inside the request: house bots in-process, registered
bots over HTTP under :data:`~arena.human.HUMAN_TIME_CONTROL`, so one request waits at most a
few seconds for them. A finished match is sealed and recorded like any other, not rated.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from arena.errors import NotFoundError, StaleVersionError
from arena.http_seat import HttpSeat
from arena.human import HumanTable, NotYourTurnError, PlayerFor, seat_infos
from arena.match import InProcessSeat
from arena.matches import seat_player
from arena.records import HOUSE_PARTICIPANTS, BotStatus, HumanGame, RegisteredBot
from arena.store import timestamp
from bot_sdk.hint import hint
from referee import (
    AnyMove,
    CardSet,
    DecisionKind,
    Expose,
    IllegalMoveError,
    InvalidCardError,
    Pass,
    Play,
    parse_card,
)
from replays.deals import DealSource, draw_secret
from replays.integrity import key_id_of, seal
from service.api.play_view import for_you, level_name, play_state
from service.context import arena, store
from service.errors import ApiError, ErrorSchema, field_error
from service.limits import limiter, play_limit
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

blp = Blueprint("play", __name__, url_prefix="/api/play", description="Human games")
PLAY_DEAL_LABEL = "play"
"""A human game's one deal sequence."""


def _now() -> str:
    return timestamp(time.time())


def _opponent_bots(opponents: list[str]) -> dict[str, RegisteredBot]:
    """The registered bots among ``opponents`` (one round trip), each checked to allow human
    games."""
    bots = store().get_bots(p for p in opponents if p not in HOUSE_PARTICIPANTS)
    for participant in opponents:
        if participant in HOUSE_PARTICIPANTS:
            continue
        bot = bots.get(participant)
        if bot is None:
            raise field_error(422, "opponents", f"there is no bot {participant}")
        if bot.status is not BotStatus.ACTIVE:
            raise field_error(422, "opponents", f"bot {bot.name} is {bot.status.value}")
        if not bot.allow_human_games:
            raise field_error(
                403,
                "opponents",
                f"the owner of bot {bot.name} does not allow human games",
                error="forbidden",
            )
    return bots


def _table(stored: HumanGame, bots: dict[str, RegisteredBot] | None = None) -> HumanTable:
    """The table of ``stored``; ``bots``: its registered opponents, when already read."""
    if bots is None:
        bots = store().get_bots(p for p in stored.opponents if p not in HOUSE_PARTICIPANTS)
    return HumanTable(stored, seat_infos(stored, bots))


def _load(game_id: str) -> HumanTable:
    stored = store().get_human_game(game_id)
    if stored is None:
        raise ApiError(404, f"there is no game {game_id}: start one with POST /api/play")
    return _table(stored)


def _checked(table: HumanTable, version: int) -> None:
    if version != table.stored.version:
        raise ApiError(
            409,
            f"this move was made on version {version}, but the game is at version "
            f"{table.stored.version} (moved on in another tab?): reload it",
        )


@contextmanager
def _your_turn() -> Iterator[None]:
    """:class:`NotYourTurnError` answered as a 409 whose message says what to do instead."""
    try:
        yield
    except NotYourTurnError as error:
        raise ApiError(409, str(error), error="not_your_turn") from None


@contextmanager
def _computers() -> Iterator[PlayerFor]:
    """Builds the computers' players for one request, and closes the HTTP ones after it."""
    config = arena().config
    opened: list[HttpSeat] = []

    def player_for(seat: int, participant: str) -> Any:
        player = seat_player(store(), config, seat, participant, secrets.token_hex(4))
        if isinstance(player, HttpSeat):
            opened.append(player)
        elif isinstance(player, InProcessSeat):  # a house bot: CPU only, off the event loop
            player.bot = ThreadedBot(player.bot)
        return player

    try:
        yield player_for
    finally:
        for player in opened:
            player.close()


def _advance_and_save(table: HumanTable, *, create: bool = False) -> HumanTable:
    """Let the computers play, store the new decisions (409 if stale), record a finished match."""
    with _computers() as player_for:
        table.advance(player_for)
    try:
        if create:
            saved = store().create_human_game(replace(table.stored, moves=tuple(table.new_moves)))
        else:
            saved = store().save_human_game(table.stored, table.new_moves)
    except StaleVersionError as error:
        raise ApiError(409, str(error)) from None
    except NotFoundError as error:
        raise ApiError(404, str(error)) from None
    table.stored = saved
    _record_if_over(table)
    return table


def _record_if_over(table: HumanTable) -> None:
    """Seal and record a finished match once (``record_result`` counts it only once anyway)."""
    if not table.game.is_over() or table.stored.recorded:
        return
    key = arena().replay_key()
    log = table.finish(_now())
    store().record_result(
        table.stored.match_id, seal(log.to_json(), key, key_id=key_id_of(key.public_key()))
    )
    table.stored = store().mark_human_game_recorded(table.stored)


def _state(table: HumanTable, since: int | None) -> dict[str, Any]:
    names = {info.bot_id: info.name for info in table.seats if info.kind == "http"}
    return play_state(table, names, since=since)


@blp.route("/opponents")
@blp.response(200, PlayOpponentSchema(many=True))
def opponents() -> list[dict[str, str]]:
    """Who can be chosen as an opponent: the house bots, and the active registered bots whose
    owners allow human games."""
    house = [{"id": p, "name": level_name(p), "kind": "house"} for p in HOUSE_PARTICIPANTS]
    bots = [{"id": b.id, "name": b.name, "kind": "bot"} for b in store().human_game_bots()]
    return house + bots


def _deals(seed: str | None) -> DealSource:
    """A secret the arena draws (its commitment shown at once, the secret in the finished
    game's log), or the person's own seed, for practice."""
    if seed is not None:
        return DealSource.practice(seed)
    return DealSource.committed(draw_secret(), PLAY_DEAL_LABEL, reveal=True)


@blp.route("")
class Games(MethodView):
    @limiter.limit(play_limit, methods=["POST"])
    @blp.arguments(PlayCreate)
    @blp.response(201, PlayStateSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="an unknown or unavailable opponent")
    @blp.alt_response(403, schema=ErrorSchema, description="a bot whose owner does not allow it")
    @blp.alt_response(429, schema=ErrorSchema, description="too many games started")
    def post(self, args: dict[str, Any]) -> dict[str, Any]:
        """Start a game against three computers; the computers play until it is your turn."""
        bots = _opponent_bots(args["opponents"])
        game_id = f"g_{secrets.token_hex(12)}"
        a, b, c = args["opponents"]
        stored = HumanGame(
            id=game_id,
            match_id=f"m_{game_id}",
            rules=args["rules"],
            deals=_deals(args.get("seed")),
            seat=args["seat"] if "seat" in args else secrets.randbelow(4),
            opponents=(a, b, c),
            created_at=_now(),
        )
        table = _advance_and_save(_table(stored, bots), create=True)
        return _state(table, since=0)


@blp.route("/<game_id>")
@blp.arguments(PlayStateArgs, location="query")
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
def get_state(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """The game as you see it: your hand with each card's legality (and the reason when it
    cannot be played), the table, scores, and the events since ``since``."""
    table = _load(game_id)
    _record_if_over(table)
    return _state(table, since=args.get("since"))


def _move_of(table: HumanTable, args: dict[str, Any]) -> AnyMove:
    decision = table.expecting()
    try:
        if decision.kind is DecisionKind.PLAY:
            if "card" not in args:
                raise field_error(422, "card", "name the card to play, such as QS")
            return Play(table.seat, parse_card(args["card"]))
        cards = CardSet.parse(args.get("cards", []))
    except InvalidCardError as error:
        raise field_error(422, "cards", str(error)) from None
    if decision.kind is DecisionKind.EXPOSE:
        return Expose(table.seat, cards)
    return Pass(table.seat, cards)


@blp.route("/<game_id>/move", methods=["POST"])
@blp.arguments(PlayMove)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version, or not your turn")
@blp.alt_response(422, schema=ErrorSchema, description="the rules forbid it: the reason")
def move(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Play a card (``card``), or expose or pass cards (``cards``); the computers then play
    until it is your turn again. The answer's events start with your move."""
    table = _load(game_id)
    _checked(table, args["version"])
    since = len(table.stored.moves)
    try:
        with _your_turn():
            table.play(_move_of(table, args))
    except IllegalMoveError as error:
        raise ApiError(422, for_you(error.reason), error="illegal_move") from None
    return _state(_advance_and_save(table), since=since)


@blp.route("/<game_id>/next-hand", methods=["POST"])
@blp.arguments(PlayVersion)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version, or no hand to go on from")
def next_hand(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """You have seen the hand's result: deal on, the computers play until it is your turn."""
    table = _load(game_id)
    _checked(table, args["version"])
    since = len(table.stored.moves)
    with _your_turn():
        table.next_hand()
    return _state(_advance_and_save(table), since=since)


@blp.route("/<game_id>/difficulty", methods=["POST"])
@blp.arguments(PlayLevel)
@blp.response(200, PlayStateSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="stale version")
def difficulty(args: dict[str, Any], game_id: str) -> dict[str, Any]:
    """Change the house bots' difficulty: it takes effect from your next hand."""
    table = _load(game_id)
    _checked(table, args["version"])
    with _your_turn():
        table.change_level(args["level"])
    return _state(_advance_and_save(table), since=None)


@blp.route("/<game_id>/hint")
@blp.response(200, PlayHintSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such game")
@blp.alt_response(409, schema=ErrorSchema, description="not your turn")
def get_hint(game_id: str) -> dict[str, Any]:
    """What the Normal house bot would do in your place: the cards to expose (or pass), or one
    legal card to play."""
    table = _load(game_id)
    with _your_turn():
        decision = table.expecting()
    suggested = hint(table.game.observation(table.seat))
    cards = [suggested.card] if isinstance(suggested, Play) else list(suggested.cards)
    return {"kind": decision.kind.value, "cards": CardSet.of(cards).names()}
