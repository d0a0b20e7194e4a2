"""A tournament's matches: playing one (its seats, a house bot in-process or a registered bot
over HTTP, the ``hello`` before it, the match itself, :mod:`arena.match_loop`, the seal, and the
result recorded once, :meth:`~arena.store.Store.record_result`, then what follows a record:
a deal's divergences indexed once its last rotation is recorded
(:func:`arena.divergence_index.index_recorded_deals`), a ladder table or a gauntlet moved on
(:func:`arena.ladder.advance`, :func:`arena.gauntlets.advance`)); its sealed log, shown once its
deal is no longer embargoed; and the log's verification, made once and kept."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from arena import divergence_index, gauntlets, ladder, strike
from arena.config import Config
from arena.context import Arena
from arena.errors import EmbargoedError, NotFoundError
from arena.exchange import now_ns
from arena.http_seat import Channel, HelloError, HttpSeat
from arena.match_loop import InProcessSeat, SeatPlayer, play_match
from arena.pull_transport import PullTransport
from arena.records import (
    HOUSE_PARTICIPANTS,
    Match,
    MatchStatus,
    RegisteredBot,
    Tournament,
    TournamentStatus,
    Transport,
    house_level,
)
from arena.store import Store, timestamp
from arena.transport import BotTransport
from bot_sdk.house import house_bot
from referee import Game, Rules
from replays.deals import DealSource, deal_seed
from replays.integrity import IntegrityError, check, key_id_of, unpack
from replays.log import SeatInfo, TimeControl
from replays.upgrade import LogReadError, read_log
from replays.verify import verify


def play(arena: Arena, match_id: str) -> None:
    """Play a planned match from its deals, seal its log and record it (once).

    The deals come from the tournament's secret and the match's deal label
    (:mod:`replays.deals`); the log names the label and the commitment, never the seed."""
    config, store = arena.config, arena.store
    match = store.get_match(match_id)
    if match is None or match.tournament_id is None or match.deal_label is None:
        return
    tournament = store.get_tournament(match.tournament_id)
    if tournament is None or tournament.status is TournamentStatus.CANCELLED:
        return
    if match.status is MatchStatus.DONE:  # a job run again after its result was recorded
        _move_on(arena, tournament)
        return
    spec = tournament.spec
    rules = spec.rules
    if spec.format.hands is not None:
        rules = dataclasses.replace(rules, fixed_hands=spec.format.hands)
    secret = store.deal_secret(match.tournament_id)
    seed = deal_seed(secret, match.deal_label)
    deals = DealSource.committed(secret, match.deal_label)
    reenact = strike.for_match(store, match)  # a replacement that continues a struck fault
    store.mark_match_running(match_id)
    players = [seat_player(store, config, seat, pid, seed) for seat, pid in enumerate(match.seats)]
    origin_ns, started_at = now_ns(), timestamp(time.time())  # the match starts with its hellos
    try:
        hello_failures = _greet(
            players,
            match_id,
            rules,
            spec.time_control,
            config,
            commitment=deals.commitment,
            origin_ns=origin_ns,
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
            started_at=started_at,
            finished_at=lambda: timestamp(time.time()),
            extra={"hello": hello_failures} if hello_failures else None,
            origin_ns=origin_ns,
            reenact=reenact,
        )
    finally:
        for player in players:
            if isinstance(player, HttpSeat):
                player.close()
    store.record_result(match_id, arena.sealed(log))
    _move_on(arena, tournament)


def _move_on(arena: Arena, tournament: Tournament) -> None:
    """After one of its matches is recorded (or found recorded by a job run again): the deals
    whose last rotation is recorded indexed for their divergences, a ladder table's next
    rotation, a gauntlet's next rotation, deal or verdict."""
    divergence_index.index_recorded_deals(arena)
    if tournament.ladder:
        ladder.advance(arena, tournament.id)
    if tournament.gauntlet:
        gauntlets.advance(arena, tournament.id)


def _greet(
    players: list[SeatPlayer],
    match_id: str,
    rules: Rules,
    tc: TimeControl,
    config: Config,
    *,
    commitment: str | None,
    origin_ns: int,
) -> dict[str, str]:
    """Send the protocol's ``hello`` to every HTTP seat before the match and log the version
    each bot answers, the protocol version it chose (its requests are written in it), and the
    hello's timing (offsets from ``origin_ns``, the match's start), in its seat's info. A failed
    hello does not stop the match (the seat's decisions fault as usual if the bot is really
    down; they are written in ``gongzhu-bot/1``): it is returned, by seat, for the log's
    ``extra``."""
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
            version, protocol = player.info.version, player.info.protocol
        else:
            version, protocol = answer.version, answer.protocol
        hello = player.exchange.timing(origin_ns)
        player.info = dataclasses.replace(
            player.info, version=version, protocol=protocol, hello=hello
        )
    return failures


def seat_info(seat: int, participant: str, bot: RegisteredBot | None = None) -> SeatInfo:
    """Who sits in ``seat`` as the match log names it: a house bot, or the registered ``bot``."""
    if bot is None:
        return SeatInfo(seat, participant, f"house-{house_level(participant)}", "1", kind="house")
    return SeatInfo(seat, bot.id, bot.name, bot.version, kind="http")


def seat_player(store: Store, config: Config, seat: int, participant: str, seed: str) -> SeatPlayer:
    """A house bot in-process, or the registered bot with its signing secrets: at its endpoint
    (push) or through its stream (pull)."""
    if participant in HOUSE_PARTICIPANTS:
        level = house_level(participant)
        return InProcessSeat(house_bot(level, seed=f"{seed}:{seat}"), seat_info(seat, participant))
    bot = store.get_bot(participant)
    if bot is None:
        raise LookupError(f"participant {participant!r} is neither a house bot nor a stored bot")
    return HttpSeat(seat_info(seat, participant, bot), channel(store, config, bot))


def channel(store: Store, config: Config, bot: RegisteredBot) -> Channel:
    """How the arena asks ``bot``, signing with its secrets."""
    secrets = store.signing_secrets(bot.id)
    if bot.transport is Transport.PULL:
        return PullTransport(store.mailbox, bot.id, secrets)
    return BotTransport(bot.endpoint, secrets, allow_private=config.allow_private_endpoints)


def get(arena: Arena, match_id: str) -> Match:
    match = arena.store.get_match(match_id)
    if match is None:
        raise NotFoundError(f"there is no match {match_id}")
    return match


def finished(arena: Arena, match_id: str, *, operator: bool) -> tuple[Match, bytes]:
    """The match and its stored (packed) log, if the log may be shown: the match has
    finished, and its deal is not under embargo (docs/REPLAYS.md, fair deals) unless the
    ``operator`` asks."""
    match = get(arena, match_id)
    blob = arena.store.replay_blob(match_id)
    if blob is None:
        raise NotFoundError(f"match {match_id} has no replay yet: it has not finished")
    embargo = arena.store.embargo(match)
    if embargo is not None and not operator:
        raise EmbargoedError(embargo.message)
    return match, blob


def verification(arena: Arena, match_id: str, *, operator: bool) -> dict[str, Any]:
    """The log's seal checked, then the referee re-run over it (and its deals checked against
    the tournament's secret once it is revealed); the first discrepancy, if any. A sealed log
    never changes, so each verification is kept and answered again from the store: the referee
    runs once per log, key and revealed secret, however often it is asked."""
    match, blob = finished(arena, match_id, operator=operator)
    public = arena.replay_key().public_key()
    tournament = (
        None if match.tournament_id is None else arena.store.get_tournament(match.tournament_id)
    )
    secret = None if tournament is None else arena.store.revealed_secret(tournament)
    fingerprint = hashlib.sha256(
        b"|".join([blob, key_id_of(public).encode(), secret or b""])
    ).hexdigest()
    kept = arena.store.verification(match_id, fingerprint)
    if kept is not None:
        return kept
    report = _verified(unpack(blob), public, secret)
    arena.store.keep_verification(match_id, fingerprint, report)
    return report


def _verified(
    sealed: dict[str, Any], public: Ed25519PublicKey, secret: bytes | None
) -> dict[str, Any]:
    integrity = "ok"
    try:
        check(sealed, {key_id_of(public): public})
    except IntegrityError as error:
        integrity = str(error)
    try:
        log = read_log(sealed)
    except LogReadError as error:
        return {"ok": False, "integrity": integrity, "discrepancy": str(error)}
    report = verify(log, secret=secret)
    return {
        "ok": report.ok and integrity == "ok",
        "integrity": integrity,
        "hands": report.hands,
        "decisions": report.decisions,
        "requests_checked": report.requests_checked,
        "deals_checked": report.deals_checked,
        "discrepancy": None if report.discrepancy is None else str(report.discrepancy),
    }
