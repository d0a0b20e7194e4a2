"""Human games, a person against three computers, one call per decision of theirs: start one,
the person's move, Next hand, the house bots' difficulty, a hint.

Each call rebuilds the game from its stored decisions (:class:`arena.human.HumanTable`),
applies the person's move through the referee, lets the computers play until the person must
decide again, and stores the new decisions only if nobody else moved meanwhile (a stale
``version`` is a :class:`~arena.errors.StaleVersionError`). The computers play inside the call:
house bots in-process (each bot passed through the caller's ``offload``: the web process keeps
their CPU work off its event loop), registered bots over HTTP under
:data:`~arena.human.HUMAN_TIME_CONTROL`, so one call waits at most a few seconds for them. A
finished match is sealed and recorded like any other, not rated.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from arena.context import Arena
from arena.errors import InvalidError, NotAllowedError, NotFoundError, StaleVersionError
from arena.http_seat import HttpSeat
from arena.human import HumanTable, PlayerFor, seat_infos
from arena.human_view import for_you, level_name, play_state
from arena.match_loop import InProcessSeat, SeatPlayer
from arena.matches import seat_player
from arena.records import HOUSE_PARTICIPANTS, BotStatus, HumanGame, RegisteredBot
from arena.store import timestamp
from bot_sdk.bot import Bot
from bot_sdk.hint import hint as suggestion
from referee import (
    AnyMove,
    CardSet,
    DecisionKind,
    Expose,
    IllegalMoveError,
    InvalidCardError,
    Pass,
    Play,
    Rules,
    parse_card,
)
from replays.deals import DealSource, draw_secret

PLAY_DEAL_LABEL = "play"
"""A human game's one deal sequence."""

Offload = Callable[[Bot], Bot]
"""What a house bot is wrapped in before it plays in the call (see the module's doc)."""
TableView = dict[str, Any]
"""The game as the person sees it (:func:`arena.human_view.play_state`)."""


@dataclass(frozen=True)
class Opponent:
    """A computer the person may choose: a house bot, or a registered bot that allows it."""

    id: str
    """A house participant (``house:easy``) or a registered bot's id."""
    name: str
    kind: str


def opponents(arena: Arena) -> list[Opponent]:
    """The house bots, then the active registered bots whose owners allow human games."""
    house = [Opponent(p, level_name(p), "house") for p in HOUSE_PARTICIPANTS]
    return house + [Opponent(b.id, b.name, "bot") for b in arena.store.human_game_bots()]


def start(
    arena: Arena,
    *,
    opponents: Sequence[str],
    rules: Rules,
    seed: str | None,
    seat: int | None,
    offload: Offload,
) -> TableView:
    """A new game against ``opponents`` (right, across, left) in ``seat`` (default: a random
    one), its deals from the arena's committed secret or, for practice, the person's ``seed``;
    the computers play until it is the person's turn."""
    bots = _opponent_bots(arena, opponents)
    game_id = f"g_{secrets.token_hex(12)}"
    a, b, c = opponents
    stored = HumanGame(
        id=game_id,
        match_id=f"m_{game_id}",
        rules=rules,
        deals=_deals(seed),
        seat=secrets.randbelow(4) if seat is None else seat,
        opponents=(a, b, c),
        created_at=_now(),
    )
    table = HumanTable(stored, seat_infos(stored, bots))
    _advance_and_save(arena, table, offload, create=True)
    return _view(table, since=0)


def state(arena: Arena, game_id: str, *, since: int | None) -> TableView:
    """The game as the person sees it, with the events of the decisions from ``since`` on."""
    table = _load(arena, game_id)
    _record_if_over(arena, table)
    return _view(table, since=since)


def move(
    arena: Arena,
    game_id: str,
    *,
    version: int,
    card: str | None,
    cards: Sequence[str] | None,
    offload: Offload,
) -> TableView:
    """Play ``card``, or expose or pass ``cards``; the computers then play until it is the
    person's turn again. The events start with the person's move."""
    table = _load(arena, game_id)
    _checked(table, version)
    since = len(table.stored.moves)
    try:
        table.play(_move_of(table, card, cards))
    except IllegalMoveError as error:
        raise InvalidError(for_you(error.reason), code="illegal_move") from None
    return _view(_advance_and_save(arena, table, offload), since=since)


def next_hand(arena: Arena, game_id: str, *, version: int, offload: Offload) -> TableView:
    """The person has seen the hand's result: deal on, the computers play until their turn."""
    table = _load(arena, game_id)
    _checked(table, version)
    since = len(table.stored.moves)
    table.next_hand()
    return _view(_advance_and_save(arena, table, offload), since=since)


def difficulty(
    arena: Arena, game_id: str, *, version: int, level: str, offload: Offload
) -> TableView:
    """The house bots play at ``level`` from the person's next hand on."""
    table = _load(arena, game_id)
    _checked(table, version)
    table.change_level(level)
    return _view(_advance_and_save(arena, table, offload), since=None)


@dataclass(frozen=True)
class Hint:
    """What the Normal house bot would do in the person's place."""

    kind: str
    cards: list[str]


def hint(arena: Arena, game_id: str) -> Hint:
    """The cards to expose (or pass), or one legal card to play."""
    table = _load(arena, game_id)
    decision = table.expecting()
    suggested = suggestion(table.game.observation(table.seat))
    cards = [suggested.card] if isinstance(suggested, Play) else list(suggested.cards)
    return Hint(decision.kind.value, CardSet.of(cards).names())


def _now() -> str:
    return timestamp(time.time())


def _deals(seed: str | None) -> DealSource:
    """A secret the arena draws (its commitment shown at once, the secret in the finished
    game's log), or the person's own seed, for practice."""
    if seed is not None:
        return DealSource.practice(seed)
    return DealSource.committed(draw_secret(), PLAY_DEAL_LABEL, reveal=True)


def _opponent_bots(arena: Arena, opponents: Sequence[str]) -> dict[str, RegisteredBot]:
    """The registered bots among ``opponents`` (one round trip), each checked to allow human
    games."""
    bots = arena.store.get_bots(p for p in opponents if p not in HOUSE_PARTICIPANTS)
    for participant in opponents:
        if participant in HOUSE_PARTICIPANTS:
            continue
        bot = bots.get(participant)
        if bot is None:
            raise InvalidError(f"there is no bot {participant}", field="opponents")
        if bot.status is not BotStatus.ACTIVE:
            raise InvalidError(f"bot {bot.name} is {bot.status.value}", field="opponents")
        if not bot.allow_human_games:
            raise NotAllowedError(
                f"the owner of bot {bot.name} does not allow human games", field="opponents"
            )
    return bots


def _load(arena: Arena, game_id: str) -> HumanTable:
    stored = arena.store.get_human_game(game_id)
    if stored is None:
        raise NotFoundError(f"there is no game {game_id}: start one with POST /api/play")
    bots = arena.store.get_bots(p for p in stored.opponents if p not in HOUSE_PARTICIPANTS)
    return HumanTable(stored, seat_infos(stored, bots))


def _checked(table: HumanTable, version: int) -> None:
    if version != table.stored.version:
        raise StaleVersionError(
            f"this move was made on version {version}, but the game is at version "
            f"{table.stored.version} (moved on in another tab?): reload it"
        )


def _move_of(table: HumanTable, card: str | None, cards: Sequence[str] | None) -> AnyMove:
    decision = table.expecting()
    try:
        if decision.kind is DecisionKind.PLAY:
            if card is None:
                raise InvalidError("name the card to play, such as QS", field="card")
            return Play(table.seat, parse_card(card))
        chosen = CardSet.parse(cards or [])
    except InvalidCardError as error:
        raise InvalidError(str(error), field="cards") from None
    if decision.kind is DecisionKind.EXPOSE:
        return Expose(table.seat, chosen)
    return Pass(table.seat, chosen)


@contextmanager
def _computers(arena: Arena, offload: Offload) -> Iterator[PlayerFor]:
    """Builds the computers' players for one call, and closes the HTTP ones after it."""
    opened: list[HttpSeat] = []

    def player_for(seat: int, participant: str) -> SeatPlayer:
        player = seat_player(arena.store, arena.config, seat, participant, secrets.token_hex(4))
        if isinstance(player, HttpSeat):
            opened.append(player)
        elif isinstance(player, InProcessSeat):
            player.bot = offload(player.bot)
        return player

    try:
        yield player_for
    finally:
        for player in opened:
            player.close()


def _advance_and_save(
    arena: Arena, table: HumanTable, offload: Offload, *, create: bool = False
) -> HumanTable:
    """Let the computers play, store the new decisions, record a finished match."""
    with _computers(arena, offload) as player_for:
        table.advance(player_for)
    if create:
        saved = arena.store.create_human_game(replace(table.stored, moves=tuple(table.new_moves)))
    else:
        saved = arena.store.save_human_game(table.stored, table.new_moves)
    table.stored = saved
    _record_if_over(arena, table)
    return table


def _record_if_over(arena: Arena, table: HumanTable) -> None:
    """Seal and record a finished match once (``record_result`` counts it only once anyway)."""
    if not table.game.is_over() or table.stored.recorded:
        return
    arena.store.record_result(table.stored.match_id, arena.sealed(table.finish(_now())))
    table.stored = arena.store.mark_human_game_recorded(table.stored)


def _view(table: HumanTable, *, since: int | None) -> TableView:
    names = {info.bot_id: info.name for info in table.seats if info.kind == "http"}
    return play_state(table, names, since=since)
