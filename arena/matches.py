"""Playing one match of a tournament: its seats (a house bot in-process, a registered bot over
HTTP), the ``hello`` before it, the match itself (:mod:`arena.match_loop`), the seal, and the
result recorded once (:meth:`~arena.store.Store.record_result`)."""

from __future__ import annotations

import dataclasses
import time

from arena.config import Config
from arena.context import Arena
from arena.http_seat import HelloError, HttpSeat
from arena.match_loop import InProcessSeat, SeatPlayer, play_match
from arena.records import (
    HOUSE_PARTICIPANTS,
    MatchStatus,
    RegisteredBot,
    TournamentStatus,
    house_level,
)
from arena.store import Store, timestamp
from bot_sdk.house import house_bot
from referee import Game, Rules
from replays.deals import DealSource, deal_seed
from replays.log import SeatInfo, TimeControl


def play(arena: Arena, match_id: str) -> None:
    """Play a planned match from its deals, seal its log and record it (once).

    The deals come from the tournament's secret and the match's deal label
    (:mod:`replays.deals`); the log names the label and the commitment, never the seed."""
    config, store = arena.config, arena.store
    match = store.get_match(match_id)
    if (
        match is None
        or match.status is MatchStatus.DONE
        or match.tournament_id is None
        or match.deal_label is None
    ):
        return
    tournament = store.get_tournament(match.tournament_id)
    if tournament is None or tournament.status is TournamentStatus.CANCELLED:
        return
    spec = tournament.spec
    rules = spec.rules
    if spec.format.hands is not None:
        rules = dataclasses.replace(rules, fixed_hands=spec.format.hands)
    secret = store.deal_secret(match.tournament_id)
    seed = deal_seed(secret, match.deal_label)
    deals = DealSource.committed(secret, match.deal_label)
    store.mark_match_running(match_id)
    players = [seat_player(store, config, seat, pid, seed) for seat, pid in enumerate(match.seats)]
    try:
        hello_failures = _greet(
            players, match_id, rules, spec.time_control, config, commitment=deals.commitment
        )
        log = play_match(
            Game(rules, seed=seed),
            players,
            match_id=match_id,
            deals=deals,
            time_control=spec.time_control,
            tournament_id=match.tournament_id,
            table_id=match.table_id,
            rated=spec.rated,
            started_at=timestamp(time.time()),
            finished_at=lambda: timestamp(time.time()),
            extra={"hello": hello_failures} if hello_failures else None,
        )
    finally:
        for player in players:
            if isinstance(player, HttpSeat):
                player.close()
    store.record_result(match_id, arena.sealed(log))


def _greet(
    players: list[SeatPlayer],
    match_id: str,
    rules: Rules,
    tc: TimeControl,
    config: Config,
    *,
    commitment: str | None,
) -> dict[str, str]:
    """Send the protocol's ``hello`` to every HTTP seat before the match and log the version
    each bot answers in its seat's info. A failed hello does not stop the match (the seat's
    decisions fault as usual if the bot is really down): it is returned, by seat, for the
    log's ``extra``."""
    failures: dict[str, str] = {}
    for player in players:
        if not isinstance(player, HttpSeat):
            continue
        try:
            answer = player.hello(
                match_id=match_id,
                rules=rules,
                deal_commitment=commitment,
                time_limit_ms=tc.decision_ms,
                time_bank_ms=tc.bank_ms,
                timeout_s=config.handshake_timeout_s,
            )
        except HelloError as error:
            failures[str(player.info.seat)] = str(error)
            continue
        player.info = dataclasses.replace(player.info, version=answer.version)
    return failures


def seat_info(seat: int, participant: str, bot: RegisteredBot | None = None) -> SeatInfo:
    """Who sits in ``seat`` as the match log names it: a house bot, or the registered ``bot``."""
    if bot is None:
        return SeatInfo(seat, participant, f"house-{house_level(participant)}", "1", kind="house")
    return SeatInfo(seat, bot.id, bot.name, bot.version, kind="http")


def seat_player(store: Store, config: Config, seat: int, participant: str, seed: str) -> SeatPlayer:
    """A house bot in-process, or the registered bot over HTTP with its signing secrets."""
    if participant in HOUSE_PARTICIPANTS:
        level = house_level(participant)
        return InProcessSeat(house_bot(level, seed=f"{seed}:{seat}"), seat_info(seat, participant))
    bot = store.get_bot(participant)
    if bot is None:
        raise LookupError(f"participant {participant!r} is neither a house bot nor a stored bot")
    return HttpSeat(
        seat_info(seat, participant, bot),
        bot.endpoint,
        store.signing_secrets(bot.id),
        allow_private=config.allow_private_endpoints,
    )
