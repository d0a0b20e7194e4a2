"""How the stored records are written in Redis, and read back: as a hash's fields, or as JSON.

Every JSON value goes through one encoder, :func:`dumps`: Python's ``json.dumps`` with its
defaults, as the arena has always stored them (nothing stored as JSON is hashed or compared as
bytes; the replay log, which is, is stored by ``replays.integrity.pack`` in its canonical form).
A record becomes JSON through one cattrs converter (:func:`to_json`, :func:`from_json`): a
dataclass as an object of its fields in their order, a tuple as an array, an enum as its value,
and the referee's and the replay log's types in their own JSON forms.

The records kept as hashes are spelt out field by field, because their stored form is the
contract with the data already in Redis: flags as ``"1"``/``"0"``, a missing id as ``""``,
counters that only HINCRBY writes, fields added later read with a default.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

from arena.records import (
    BotStatus,
    Gauntlet,
    HumanGame,
    Match,
    MatchResult,
    MatchStatus,
    RegisteredBot,
    Schedule,
    Standing,
    Tournament,
    TournamentSpec,
    TournamentStatus,
    Transport,
)
from referee import Rules
from replays.deals import DealScheme, DealSource
from replays.log import DecisionRecord, MatchLog, TimeControl

T = TypeVar("T")

_CONVERTER = cattrs.Converter()
for _own_json in (Rules, TimeControl, DealSource, DecisionRecord):
    _CONVERTER.register_unstructure_hook(_own_json, _own_json.to_json)
    _CONVERTER.register_structure_hook(_own_json, lambda data, cls: cls.from_json(data))
# a standing's rank is not stored: it is given when the standings are read (results.ranked)
_CONVERTER.register_unstructure_hook(
    Standing, make_dict_unstructure_fn(Standing, _CONVERTER, rank=override(omit=True))
)


def dumps(value: Any) -> str:
    """The one JSON encoder of everything the store writes as JSON."""
    return json.dumps(value)


def to_json(record: object) -> str:
    """A record (a dataclass, a tuple of them, …) as stored JSON."""
    return dumps(_CONVERTER.unstructure(record))


def from_json(text: str | bytes, cls: type[T]) -> T:
    """The record of type ``cls`` that :func:`to_json` wrote as ``text``."""
    return _CONVERTER.structure(json.loads(text), cls)


def schedule_json(schedule: Schedule) -> dict[str, Any]:
    """A schedule as the JSON object stored, which the API shows as it is."""
    return dict(_CONVERTER.unstructure(schedule))


def timestamp(seconds: float) -> str:
    """ISO 8601 UTC with seconds, as every stored time is written."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def flag(value: bool) -> str:
    return "1" if value else "0"


# -- bots ---------------------------------------------------------------------------------------


def bot_fields(bot: RegisteredBot) -> dict[str, str]:
    """A bot's fields, all but its counters ``faults`` and ``fallbacks`` (only a recorded
    match's HINCRBY writes those) and its secrets (the store encrypts them)."""
    return {
        "id": bot.id,
        "name": bot.name,
        "endpoint": bot.endpoint,
        "description": bot.description,
        "contact": bot.contact,
        "status": bot.status.value,
        "version": bot.version,
        "created_at": bot.created_at,
        "updated_at": bot.updated_at,
        "allow_human_games": flag(bot.allow_human_games),
        "transport": bot.transport.value,
        "ladder": flag(bot.ladder),
        "max_concurrent": str(bot.max_concurrent),
    }


def bot_from(raw: Mapping[str, str]) -> RegisteredBot:
    return RegisteredBot(
        id=raw["id"],
        name=raw["name"],
        endpoint=raw["endpoint"],
        description=raw["description"],
        contact=raw["contact"],
        status=BotStatus(raw["status"]),
        version=raw["version"],
        created_at=raw["created_at"],
        updated_at=raw["updated_at"],
        allow_human_games=raw.get("allow_human_games") == "1",
        faults=int(raw.get("faults", 0)),
        fallbacks=int(raw.get("fallbacks", 0)),
        transport=Transport(raw.get("transport", Transport.PUSH.value)),
        ladder=raw.get("ladder") == "1",
        max_concurrent=int(raw.get("max_concurrent", 1)),
    )


# -- tournaments --------------------------------------------------------------------------------


def tournament_fields(tournament: Tournament) -> dict[str, str]:
    """A tournament's fields, all but its id (the key's), its failures (a set of their own) and
    its encrypted deal secret (the store's)."""
    return {
        "spec": to_json(tournament.spec),
        "deal_commitment": tournament.deal_commitment,
        "status": tournament.status.value,
        "done": str(tournament.done),
        "total": str(tournament.total),
        "created_at": tournament.created_at,
        "updated_at": tournament.updated_at,
        "schedule_id": tournament.schedule_id or "",
        "ladder": flag(tournament.ladder),
        "gauntlet": to_json(tournament.gauntlet) if tournament.gauntlet else "",
    }


def tournament_from(tournament_id: str, raw: Mapping[str, str]) -> Tournament:
    return Tournament(
        id=tournament_id,
        spec=from_json(raw["spec"], TournamentSpec),
        status=TournamentStatus(raw["status"]),
        done=int(raw["done"]),
        total=int(raw["total"]),
        created_at=raw["created_at"],
        updated_at=raw["updated_at"],
        schedule_id=raw.get("schedule_id") or None,
        deal_commitment=raw.get("deal_commitment", ""),
        ladder=raw.get("ladder") == "1",
        gauntlet=from_json(raw["gauntlet"], Gauntlet) if raw.get("gauntlet") else None,
    )


# -- matches ------------------------------------------------------------------------------------


def planned_match_fields(match: Match) -> dict[str, str]:
    """What a planned match's hash holds besides its status (set first, and only once)."""
    return {
        "seats": dumps(list(match.seats)),
        "tournament_id": match.tournament_id or "",
        "table_id": match.table_id or "",
        "deal_label": match.deal_label or "",
        "created_at": match.created_at,
        **({"replaces": match.replaces} if match.replaces else {}),
    }


def recorded_match_fields(log: MatchLog, *, finished_at: str) -> dict[str, str]:
    """What recording ``log`` writes in its match's hash (its creation time and deal label stay
    as planned)."""
    result = MatchResult(
        places=tuple(log.places),
        totals=tuple(log.outcome.totals),
        faults=tuple(log.faults),
        forfeited=tuple(log.forfeited),
        hands=log.outcome.hands_played,
        termination=log.outcome.termination.value,
    )
    return {
        "seats": dumps([s.bot_id for s in log.seats]),
        "tournament_id": log.tournament_id or "",
        "table_id": log.table_id or "",
        "status": MatchStatus.DONE.value,
        "finished_at": finished_at,
        "result": to_json(result),
        "versions": dumps([s.version for s in log.seats]),
    }


def log_fields(digest: str, size: int) -> dict[str, str]:
    """Where a recorded match's log is: its name in the archive and its size in bytes."""
    return {"log_sha256": digest, "log_bytes": str(size)}


def match_from(match_id: str, raw: Mapping[str, str]) -> Match:
    return Match(
        id=match_id,
        tournament_id=raw.get("tournament_id") or None,
        table_id=raw.get("table_id") or None,
        seats=tuple(json.loads(raw["seats"])),
        status=MatchStatus(raw["status"]),
        created_at=raw.get("created_at", ""),
        finished_at=raw.get("finished_at") or None,
        failure=raw.get("failure") or None,
        deal_label=raw.get("deal_label") or None,
        result=from_json(raw["result"], MatchResult) if raw.get("result") else None,
        versions=tuple(json.loads(raw.get("versions", "[]"))),
        voided_by=raw.get("voided_by") or None,
        replaces=raw.get("replaces") or None,
        replaced_by=raw.get("replaced_by") or None,
    )


# -- human games --------------------------------------------------------------------------------


def human_game_fields(game: HumanGame) -> dict[str, str]:
    """A human game's fields, all but its id (the key's) and its moves (a list of their own)."""
    return {
        "match_id": game.match_id,
        "rules": to_json(game.rules),
        "deals": to_json(game.deals),
        "seat": str(game.seat),
        "opponents": to_json(game.opponents),
        "created_at": game.created_at,
        "version": str(game.version),
        "acknowledged": str(game.acknowledged),
        "level_changes": to_json(game.level_changes),
        "recorded": flag(game.recorded),
    }


def human_game_from(game_id: str, raw: Mapping[str, str], moves: Iterable[str]) -> HumanGame:
    return HumanGame(
        id=game_id,
        match_id=raw["match_id"],
        rules=from_json(raw["rules"], Rules),
        deals=_human_deals(raw),
        seat=int(raw["seat"]),
        opponents=from_json(raw["opponents"], tuple[str, str, str]),
        created_at=raw["created_at"],
        version=int(raw["version"]),
        moves=tuple(from_json(m, DecisionRecord) for m in moves),
        acknowledged=int(raw["acknowledged"]),
        level_changes=from_json(raw["level_changes"], tuple[tuple[int, str], ...]),
        recorded=raw["recorded"] == "1",
    )


def _human_deals(raw: Mapping[str, str]) -> DealSource:
    if "deals" in raw:
        return from_json(raw["deals"], DealSource)
    # a game started before deals were committed: its seed was the arena's, not checkable
    return DealSource(DealScheme.UNCHECKED, seed=raw["seed"])
